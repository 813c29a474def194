package serve

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// frameOf is a w×h frame of styled rows, row i reading text[i].
func frameOf(w int, text ...string) tea.View {
	rows := make([]string, len(text))
	for i, s := range text {
		rows[i] = "\x1b[1m│\x1b[m" + s + strings.Repeat(" ", w-2-ansi.StringWidth(s)) + "│"
	}
	v := tea.NewView(strings.Join(rows, "\n"))
	v.AltScreen, v.MouseMode, v.WindowTitle = true, tea.MouseModeCellMotion, "vigil — test"
	return v
}

// lineScreen: the terminal shows each frame exactly, the second frame
// rewrites only the row that changed, a resize draws everything again, and
// closing puts the terminal's modes back.
func TestLineScreen(t *testing.T) {
	var out bytes.Buffer
	scr := newScreen(20, 4)
	s := newLineScreen(&out, 20, 4)
	first := frameOf(20, "one", "two 字", "three", "four")
	s.draw(first)
	scr.Write(out.Bytes())
	if got, want := screenRows(scr, 4), ansi.Strip(first.Content); got != want {
		t.Fatalf("first frame on screen:\n%s\nwant:\n%s", got, want)
	}
	for _, m := range []string{"\x1b[?1049h", "\x1b[?25l", "\x1b[?1002h", "\x1b]2;vigil — test\a"} {
		if !strings.Contains(out.String(), m) {
			t.Errorf("the first frame does not set %q", m)
		}
	}
	out.Reset()
	second := frameOf(20, "one", "two 字", "THREE ✓", "four")
	s.draw(second)
	scr.Write(out.Bytes())
	if got, want := screenRows(scr, 4), ansi.Strip(second.Content); got != want {
		t.Fatalf("second frame on screen:\n%s\nwant:\n%s", got, want)
	}
	// Row 3 alone, from its first changed cell on (after the bold border).
	if n := len(rowMoves.FindAllString(out.String(), -1)); n != 1 || !strings.Contains(out.String(), "\x1b[3;2H") || strings.Contains(out.String(), "one") {
		t.Errorf("the second frame wrote %d rows, want row 3 alone from column 2: %q", n, out.String())
	}
	out.Reset()
	s.draw(second)
	if rowMoves.MatchString(out.String()) {
		t.Errorf("an unchanged frame wrote rows: %q", out.String())
	}
	out.Reset()
	s.resize(20, 4)
	s.draw(second)
	if n := strings.Count(out.String(), ";1H"); n != 4 || !strings.Contains(out.String(), "\x1b[2J") {
		t.Errorf("after a resize %d rows were written, want all 4 after a clear: %q", n, out.String())
	}
	out.Reset()
	s.forget() // a pager had the terminal
	s.draw(second)
	if n := strings.Count(out.String(), ";1H"); n != 4 || !strings.Contains(out.String(), "\x1b[?1049h") || !strings.Contains(out.String(), "\x1b]2;") {
		t.Errorf("after another program had the terminal the modes, title and rows were not all written again: %q", out.String())
	}
	out.Reset()
	s.close()
	for _, m := range []string{"\x1b[?1049l", "\x1b[?25h", "\x1b[?1002l"} {
		if !strings.Contains(out.String(), m) {
			t.Errorf("closing does not reset %q: %q", m, out.String())
		}
	}
}

// rowMoves are the cursor moves draw starts each row it writes with.
var rowMoves = regexp.MustCompile(`\x1b\[\d+;\d+H`)

func screenRows(s *screen, h int) string {
	rows := strings.Split(s.String(), "\n")
	for len(rows) < h {
		rows = append(rows, "")
	}
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return strings.Join(rows[:h], "\n")
}
