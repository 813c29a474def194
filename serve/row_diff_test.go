package serve

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// Rows written from their first changed cell leave the terminal showing,
// cell for cell and style for style, what drawing every frame whole shows:
// over a run of frames whose two side-by-side panes change apart, in
// colours, bold and reverse, with wide characters, combining marks and
// emoji on either side of every change.
func TestRowsWrittenFromTheirFirstChangeDrawTheWholeFrame(t *testing.T) {
	const w, h = 40, 8
	words := []string{"step", "字字", "e\u0301t\u0301", "✓", "👍🏽", "ok", " ", "—", "a\u200db", "x"}
	styles := []string{"", "\x1b[1m", "\x1b[31m", "\x1b[7m", "\x1b[1;38;5;208m", "\x1b[4m\x1b[32m"}
	rng := rand.New(rand.NewSource(16))
	half := func(width int) string {
		var b strings.Builder
		used := 0
		for used < width {
			word := words[rng.Intn(len(words))]
			ww := ansi.StringWidth(word)
			if used+ww > width {
				b.WriteString(strings.Repeat(".", width-used))
				break
			}
			st := styles[rng.Intn(len(styles))]
			if st != "" {
				b.WriteString(st + word + "\x1b[m")
			} else {
				b.WriteString(word)
			}
			used += ww
		}
		return b.String()
	}
	left, right := make([]string, h), make([]string, h)
	for i := range left {
		left[i], right[i] = half(w/2-1), half(w/2-1)
	}
	frame := func() tea.View {
		rows := make([]string, h)
		for i := range rows {
			rows[i] = "\x1b[2m│\x1b[m" + left[i] + "\x1b[2m│\x1b[m" + right[i]
		}
		return tea.NewView(strings.Join(rows, "\n"))
	}
	var out bytes.Buffer
	// Neither terminal is closed: vt's Close races its Read (the replies
	// drained), as the other tests' terminals are left open.
	kept, whole := vt.NewEmulator(w, h), vt.NewEmulator(w, h)
	go drain(kept)
	go drain(whole)
	s := newLineScreen(&out, w, h)
	var fromStart, partial int
	for f := 0; f < 300; f++ {
		for i := range left {
			switch rng.Intn(6) {
			case 0:
				left[i] = half(w/2 - 1)
			case 1, 2:
				right[i] = half(w/2 - 1)
			case 3: // one word in the middle of the right half
				r := []rune(ansi.Strip(right[i]))
				if len(r) > 4 {
					right[i] = string(r[:len(r)/2]) + "\x1b[1m" + ansi.Strip(half(w/2-1-ansi.StringWidth(string(r[:len(r)/2])))) + "\x1b[m"
				}
			}
		}
		v := frame()
		out.Reset()
		s.draw(v)
		kept.Write(out.Bytes())
		for _, m := range rowMoves.FindAllString(out.String(), -1) {
			if strings.HasSuffix(m, ";1H") {
				fromStart++
			} else {
				partial++
			}
		}
		var all bytes.Buffer
		newLineScreen(&all, w, h).draw(v) // a screen new to the terminal: cleared, every row written
		whole.Write(all.Bytes())
		if got, want := kept.Render(), whole.Render(); got != want {
			t.Fatalf("frame %d: the terminal shows\n%s\nwhere the frame drawn whole shows\n%s\nlast written: %q", f, got, want, out.String())
		}
	}
	if partial == 0 {
		t.Fatalf("no row was written from a later column (%d written whole)", fromStart)
	}
	t.Logf("%d rows written from their first change, %d whole", partial, fromStart)
}

func drain(e *vt.Emulator) {
	buf := make([]byte, 256)
	for {
		if _, err := e.Read(buf); err != nil {
			return
		}
	}
}

// rowCut never cuts inside an escape, a character or a cluster, and the
// column it gives is the width of what it keeps.
func TestRowCut(t *testing.T) {
	for _, c := range []struct {
		was, now string
		cut, col int
		sgr      string
	}{
		{"abcdef", "abcXef", 3, 3, ""},
		{"\x1b[1mab\x1b[mcd", "\x1b[1mab\x1b[mcX", 10, 3, ""},
		{"\x1b[1mabcd\x1b[m", "\x1b[1mabXd\x1b[m", 6, 2, "\x1b[1m"},
		{"字ab", "字aX", 4, 3, ""},
		{"ae\u0301b", "ae\u0302b", 1, 1, ""},   // the mark changed: its base is written again
		{"abe", "abe\u0301", 2, 2, ""},         // a mark added after e: e is written again
		{"a👍b", "a👍🏽b", 0, 0, ""},              // a skin tone joined to the emoji: no ASCII after a to cut before
		{"\x1b[31mab", "\x1b[32mab", 0, 0, ""}, // inside the escape: from the start
		{"ab\x1b]8;;u\x07cd", "ab\x1b]8;;u\x07cX", 2, 2, ""},
		{"\x00", "abc", 0, 0, ""},
	} {
		cut, col, sgr := rowCut(c.was, c.now)
		if cut != c.cut || col != c.col || sgr != c.sgr {
			t.Errorf("rowCut(%q, %q) = %d, %d, %q; want %d, %d, %q", c.was, c.now, cut, col, sgr, c.cut, c.col, c.sgr)
		}
	}
}
