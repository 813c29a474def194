package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":            "plain text",
		"two\nlines":            "two\nlines",
		"crlf\r\nline":          "crlf\nline",
		"\x1b[31mred\x1b[0m":    "␛[31mred␛[0m",
		"\x1b]0;pwned\x07title": "␛]0;pwned␇title",
		"\x1bP+q\x1b\\":         "␛P+q␛\\",
		"tab\there":             "tab    here",
		"c1 \u009b2J csi":       "c1 \uFFFD2J csi",
		"bidi \u202Eevil\u202C": "bidi \uFFFDevil\uFFFD",
		"isolate \u2066x\u2069": "isolate \uFFFDx\uFFFD",
		"bad \xff\xfe utf8":     "bad \uFFFD\uFFFD utf8",
		"nul \x00 del \x7f":     "nul ␀ del ␡",
		"lone \r return":        "lone ␍ return",
		"emoji ✓ 日本語":           "emoji ✓ 日本語",
		"line\u2028separator":   "line\uFFFDseparator",
		// Hidden text: tag characters spelling "rm -rf" (ASCII smuggling),
		// a zero-width space, a word joiner, a byte order mark.
		"ok\U000E0072\U000E006D\U000E0020\U000E002D\U000E0072\U000E0066": "ok\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD",
		"zero\u200Bwidth \u2060joined \uFEFFbom":                         "zero\uFFFDwidth \uFFFDjoined \uFFFDbom",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLine(t *testing.T) {
	if got := Line("a\nb\tc\r\nd"); got != "a b c d" {
		t.Errorf("Line = %q", got)
	}
}

// FuzzText: nothing a store holds may reach the terminal as a control: no
// ESC (so no CSI, OSC, DCS), no C0 or C1 control, no DEL, no bidi control,
// no invalid UTF-8.
func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "\x1b]0;t\x07", "\x9b31m", "\u202Eabc", "\xff", "ok\nfine", "\x1bP1$r\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s)} {
			if !Safe(out) {
				t.Fatalf("unsafe output %q for input %q", out, s)
			}
		}
		if strings.Contains(Line(s), "\n") {
			t.Fatalf("Line kept a line break: %q", s)
		}
	})
}

func TestSafe(t *testing.T) {
	for _, s := range []string{"\x1b", "\x07", "\u0085", "\u202E", "\xff", "\x7f"} {
		if Safe(s) {
			t.Errorf("Safe(%q) = true", s)
		}
	}
	if !Safe("fine ✓\n") || !utf8.ValidString(Text("\xff")) {
		t.Error("Safe rejected clean text")
	}
}

// Width-ambiguous text loses what terminals disagree on, so that the width
// vigil measures is the width the terminal draws.
func TestUnambiguous(t *testing.T) {
	checkSimplified(t, map[string]string{
		"family \U0001F468\u200d\U0001F469\u200d\U0001F467": "family \U0001F468\U0001F469\U0001F467",
		"thumbs \U0001F44D\U0001F3FD up":                    "thumbs \U0001F44D up",
		"soft\u00adhyphen":                                  "softhyphen",
		"heart \u2764\ufe0f text \u2764\ufe0e":              "heart \u2764 text \u2764",
		"flag \U0001F1FA\U0001F1F8 lone \U0001F1FA.":        "flag \U0001F1FA\U0001F1F8 lone \uFFFD.",
		"three \U0001F1FA\U0001F1F8\U0001F1E6":              "three \U0001F1FA\U0001F1F8\uFFFD",
		"keycap 1\ufe0f\u20e3":                              "keycap 1\u20e3",
	})
	if !Unambiguous("plain ✓ 日本語 \U0001F1FA\U0001F1F8 한국어 \u3131") {
		t.Error("Unambiguous refused clean text")
	}
}

// checkSimplified checks that each ambiguous input (the key) is made the
// unambiguous text wanted (the value) by Line, and by Text too.
func checkSimplified(t *testing.T, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if Unambiguous(in) {
			t.Errorf("Unambiguous(%q) = true", in)
		}
		if !Unambiguous(Line(in)) || !Unambiguous(Text(in)) {
			t.Errorf("Line(%q) or Text(%q) is still ambiguous", in, in)
		}
	}
}

// Conjoining Hangul jamo are one syllable to tmux and grapheme-aware
// terminals and a cell or two each to wcwidth: a well-formed L V (T) run
// becomes its precomposed syllable, any other jamo the stand-in.
func TestHangulJamo(t *testing.T) {
	checkSimplified(t, map[string]string{
		"lvt \u1100\u1161\u11a8.":                          "lvt \uAC01.", // 각
		"lv \u1112\u1175 x":                                "lv \uD788 x", // 히
		"last \u1112\u1175\u11c2":                          "last \uD7A3", // 힣
		"two \u1100\u1161\u1102\u1161":                     "two \uAC00\uB098",
		"lone l \u1100 v \u1161 t \u11a8":                  "lone l \uFFFD v \uFFFD t \uFFFD",
		"ll v \u1100\u1100\u1161":                          "ll v \uFFFD\uAC00",
		"lvv \u1100\u1161\u1161":                           "lvv \uAC00\uFFFD",
		"l then syllable \u1100\uAC00":                     "l then syllable \uFFFD\uAC00",
		"syllable then t \uAC00\u11a8":                     "syllable then t \uAC00\uFFFD",
		"old \u1113\u1161 \u1100\u1176 \u1100\u1161\u11c3": "old \uFFFD\uFFFD \uFFFD\uFFFD \uAC00\uFFFD",
		"fillers \u115f\u1160":                             "fillers \uFFFD\uFFFD",
		"extended \ua960\ud7b0\ud7cb":                      "extended \uFFFD\uFFFD\uFFFD",
	})
}

// hostileSeqs are what a frame must never pass: every kind of escape
// sequence and control a store could carry.
var hostileSeqs = []string{
	"\x1b_PWNED\x1b\\", "\x1b]0;pwned\x07", "\x1b]2;pwned\x1b\\", "\x1bP+q544e\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\",
	"\x1b[41;5m", "\x1b[5m", "\x1b[8m", "\x1b[6m", "\x1b[2J", "\x1b[H", "\x1b[10;10H", "\x1b[?1049l", "\x1bc", "\x1b7", "\x1b(0",
	"\r│✓  success", "\x9b31m", "\x9d0;t\x9c", "\u0085", "\u0090", "\x07", "\x00", "\x7f", "\u202Eexe", "\u2066x\u2069", "\xff",
	"\x1b[38;5;1;5m", "\x1b[38;2;1;2m", "\x1b[4:3;5m", "\x1b[1;2;3;4;5m", "\x1b[999m", "\x1b[31", "\x1b[",
}

func TestFrame(t *testing.T) {
	ok := []string{
		"", "plain\nlines", "\x1b[1m\x1b[38;5;135mbold\x1b[0m", "\x1b[m", "\x1b[48;2;10;20;30mtc\x1b[39;49m",
		"\x1b[4:3mcurly\x1b[24m", "\x1b[38:5:12mcolon\x1b[0m", "✓ 日本語 ╭─╮", "\x1b[22;23;27;29m",
	}
	for _, s := range ok {
		if got := Frame(s); got != s {
			t.Errorf("Frame(%q) = %q, want it unchanged", s, got)
		}
	}
	for _, s := range hostileSeqs {
		got := Frame("a" + s + "b")
		if !frameClean(got) {
			t.Errorf("Frame(%q) = %q: a control passed", s, got)
		}
		if !strings.HasPrefix(got, "a") || !strings.HasSuffix(got, "b") {
			t.Errorf("Frame(%q) = %q lost the text around it", s, got)
		}
	}
	if got := Frame("x\x1b]0;t\x07y"); got != "x␛]0;t␇y" {
		t.Errorf("Frame kept no visible trace: %q", got)
	}
}

// frameClean: after the SGR sequences Frame keeps, nothing a terminal acts on.
func frameClean(s string) bool {
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			n := sgrLen(s[i:])
			if n == 0 {
				return false
			}
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !Safe(string(r)) || (r == utf8.RuneError && size == 1) {
			return false
		}
		i += size
	}
	return true
}

// FuzzFrame: whatever a pane draws, the frame passes nothing but text, line
// breaks and its own kinds of SGR; and a safe frame is left alone.
func FuzzFrame(f *testing.F) {
	for _, s := range hostileSeqs {
		f.Add(s)
	}
	f.Add("\x1b[1mok\x1b[0m\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := Frame(s)
		if !frameClean(out) {
			t.Fatalf("Frame(%q) = %q", s, out)
		}
		if Frame(out) != out {
			t.Fatalf("Frame is not idempotent on %q", s)
		}
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Frame changed the line count of %q", s)
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	line := "\x1b[38;5;135m│\x1b[1m\x1b[38;5;195m\x1b[48;5;23m✗  crashed ◆4   #4   Coordinate the v2.0 rele…     10   27.4k \x1b[0m\x1b[38;5;135m\x1b[49m│"
	frame := strings.Repeat(line+"\n", 70)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if Frame(frame) != frame {
			b.Fatal("changed")
		}
	}
}

// WriteText writes what Text returns, whatever the pieces.
func TestWriteText(t *testing.T) {
	s := strings.Repeat("line\r\n\x1b[2J é 日本 \r", 20000)
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	if b.String() != Text(s) {
		t.Fatal("WriteText and Text differ")
	}
}

// TextWriter writes what Text returns, however the text is cut into writes.
func TestTextWriter(t *testing.T) {
	s := "a\r\nb é日\x1b[2J\r\r\n" + strings.Repeat("x\r\ny\u202e", 100) + "\r"
	for _, size := range []int{1, 2, 3, 5, 64} {
		var b strings.Builder
		w := TextWriter(&b)
		for i := 0; i < len(s); i += size {
			w.Write([]byte(s[i:min(i+size, len(s))]))
		}
		w.Close()
		if b.String() != Text(s) {
			t.Fatalf("pieces of %d: %q, want %q", size, b.String(), Text(s))
		}
	}
}

// hostile is text with everything the writers must carry across a cut:
// multi-byte characters, invalid and truncated UTF-8, CR, CRLF, escape
// sequences, C1 controls, flags (pairs of regional indicators), a lone
// regional indicator, joiners, tabs and conjoining Hangul jamo.
const hostile = "a\r\nb é日\x1b[2J\x1b]0;t\x07\r\r\n🇫🇷🇩\u200d👍🏽x\u009b\xe2\x82\xff\xf0\x9f\x87\tz\u202e\r\n🇫\r\u1100\u1161\u11a8\u1100\u1161x\u1100"

// written is what a writer made of s cut at the given offsets.
func written(s string, oneLine bool, cuts ...int) string {
	var b strings.Builder
	w := TextWriter(&b)
	if oneLine {
		w = LineWriter(&b)
	}
	at := 0
	for _, c := range append(cuts, len(s)) {
		w.Write([]byte(s[at:c]))
		at = c
	}
	w.Close()
	return b.String()
}

// The writers give byte for byte what Text and Line give, wherever the
// text is cut: once at every offset, and twice at every pair of offsets.
func TestWritersAgreeAtEveryCut(t *testing.T) {
	for _, oneLine := range []bool{false, true} {
		want := Text(hostile)
		if oneLine {
			want = Line(hostile)
		}
		for i := 0; i <= len(hostile); i++ {
			if got := written(hostile, oneLine, i); got != want {
				t.Fatalf("oneLine %v, cut at %d: %q, want %q", oneLine, i, got, want)
			}
			for j := i; j <= len(hostile); j++ {
				if got := written(hostile, oneLine, i, j); got != want {
					t.Fatalf("oneLine %v, cut at %d and %d: %q, want %q", oneLine, i, j, got, want)
				}
			}
		}
	}
	// A flag cut in two is still a flag, not two stand-ins.
	if got := written("🇫🇷", false, 4); got != "🇫🇷" {
		t.Errorf("a flag cut between its indicators: %q", got)
	}
}

// FuzzWriters: any text, cut anywhere, comes out of the writers as Text
// and Line make it whole.
func FuzzWriters(f *testing.F) {
	f.Add(hostile, uint16(7), uint16(19))
	f.Add("🇫🇷🇩🇪", uint16(4), uint16(12))
	f.Add("\u1100\u1161\u11a8\u1100\u1161\u1100", uint16(3), uint16(9))
	f.Fuzz(func(t *testing.T, s string, a, b uint16) {
		i, j := int(a)%(len(s)+1), int(b)%(len(s)+1)
		if i > j {
			i, j = j, i
		}
		if got := written(s, false, i, j); got != Text(s) {
			t.Fatalf("Text cut at %d, %d: %q, want %q", i, j, got, Text(s))
		}
		if got := written(s, true, i, j); got != Line(s) {
			t.Fatalf("Line cut at %d, %d: %q, want %q", i, j, got, Line(s))
		}
	})
}
