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
