// Package hostile is, for tests, a corpus of strings made to break a
// terminal viewer, and the check that a store full of them reaches no
// terminal as anything but text.
//
// Each format's tests build a store from the corpus with their own
// generator (every text field of every kind of row) and call Check, which
// browses every pane of the explorer — the status bar, titles and help
// included — and runs the command line's text, Markdown and JSON output on
// it. Nothing from the store may reach the output as a C0 or C1 control
// (the frame's own SGR colours aside), an OSC, DCS, APC, PM or SOS string,
// a carriage return, a bidi override or isolate, or invalid UTF-8; JSON
// escapes all of those; and every line of every frame keeps its right
// border in the last column, measured both as tmux and xterm do (wcwidth)
// and as grapheme-aware terminals do.
package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/cli"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
	"github.com/vigil-run/vigil/views"
)

// Corpus is the hostile strings: every family of escape sequence and
// control a terminal acts on, in 7-bit and 8-bit (C1) forms, the tricks
// that forge what is on screen (a carriage return over a row, a cursor
// move, a backspace), bidi controls, invalid UTF-8, text whose width
// terminals disagree on, and a few of the classic naughty strings
// (injection-looking text, format verbs, huge and empty values). It has
// more than 30 entries; callers may use a prefix.
func Corpus() []string {
	return []string{
		"\x1b_PWNED\x1b\\",       // APC: tmux takes it as the pane title
		"\x1b]0;pwned\x07",       // OSC 0 title, BEL-terminated
		"\x1b]2;pwned\x1b\\",     // OSC 2 title, ST-terminated
		"\x1b]52;c;cHduZWQ=\x07", // OSC 52: write the clipboard
		"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", // OSC 8 hyperlink
		"\x1bP+q544e\x1b\\",          // DCS: XTGETTCAP query
		"\x1b^private\x1b\\",         // PM
		"\x1bXsos\x1b\\",             // SOS
		"\x1b_Gf=100;AAAA\x1b\\",     // kitty graphics (APC)
		"\x1bPq#0;2;0;0;0#0~~\x1b\\", // sixel (DCS)
		"\x1b[41;5mblink\x1b[0m",     // SGR blink on red
		"\x1b[8mconcealed\x1b[28m",   // SGR conceal
		"\x1b[2J\x1b[H",              // clear the screen, home the cursor
		"\x1b[10;10Hmoved",           // cursor position
		"\x1b[?1049l\x1b[?25l",       // leave the alternate screen, hide the cursor
		"\x1bc",                      // RIS: reset the terminal
		"\r│✓  success",              // carriage return over a row's state glyph
		"abc\x08\x08\x08XYZ",         // backspaces over text
		"\u009b31mc1 csi",            // C1 CSI as a code point
		"\x9b31m\x9d0;t\x9c",         // C1 bytes raw (invalid UTF-8)
		"\u0085next line",            // NEL
		"\u0090q\u009c",              // C1 DCS … ST
		"\u009d0;pwned\u009c",        // C1 OSC … ST
		"del\x7f\x7f",                // DEL
		"bell\x07\x07 nul\x00",       // BEL, NUL
		"tab\tvt\vff\f",              // tab, vertical tab, form feed
		"\u202Egnp.exe",              // right-to-left override
		"\u2066isolate\u2069 \u2067rtl\u2069 \u2068fsi\u2069",                     // isolates
		"marks \u200e\u200f\u061c",                                                // LRM, RLM, ALM
		"line\u2028sep\u2029para",                                                 // Unicode separators
		"bad \xff\xfe\xc3 utf8",                                                   // invalid UTF-8
		"trailing escape\x1b",                                                     // a lone ESC at the end
		"\x1b[\x1b]0;nested\x07m",                                                 // a sequence inside a sequence
		"family 👨\u200d👩\u200d👧\u200d👦 end",                                       // ZWJ emoji sequence
		"thumbs 👍🏽👋🏿 skin tones",                                                  // emoji modifiers
		"re\u00adsign soft\u00adhyphen",                                           // soft hyphens
		"heart ❤️ keycap 1️⃣",                                                     // emoji presentation selectors
		"lone 🇺 flag 🇺🇸",                                                          // a lone regional indicator
		"jamo \u1100\u1161\u11a8 \u1112\u1175 lone \u1161\u11a8 old \ua960\ud7b0", // conjoining Hangul jamo
		"Z͑ͫ̓ͪ̂ͫ̽͏̴̙̤̞͉͚̯̞̠͍A̴̵̜̰͔ͫ͗͢L̠ͨͧͩ͘G̴̻͈͍͔̹̑͗̎̅͛́Ǫ̵̹̻̝̳͂̌̌͘", // zalgo
		"ｆｕｌｌｗｉｄｔｈ 日本語 한국어",                                         // wide text
		"'; DROP TABLE runs; -- %s%n%x {{.}} ${jndi:ldap://x}",      // injection-looking
		"",                            // empty
		"   ",                         // blank
		strings.Repeat("long ", 2000), // a 10 000-byte line
		strings.Repeat("\n", 300) + "after many lines",
	}
}

// Options says what the format can be asked.
type Options struct {
	// Trace: the format has canonical traces (vigil trace, diff).
	Trace bool
	// Keys: extra keys pressed in the explorer after the standard tour.
	Keys []string
}

// wait is the longest model timer the check lets fire as it drives the
// explorer (reads are waited for however long they take: tui's Settle).
// The detail pane's debounce is shorter and fires; the misfire guard's end
// of a pause is longer and does not: the frame it brings only takes the
// guard's own hint away, nothing of the store's is drawn anew, and sleeping
// through every pause was most of the check's time.
const wait = views.QuietFor / 2

// Check browses the store at path in the explorer and runs the command
// line's readers on it, and fails t wherever a hostile string got through.
// It returns how many frames and outputs it checked.
func Check(t testing.TB, path string, o Options) (frames, outputs int) {
	t.Helper()
	repairs := sanitize.Repairs()
	outputs = checkCLI(t, path, o)
	frames = checkExplorer(t, path, o)
	if n := sanitize.Repairs() - repairs; n > 0 {
		t.Errorf("the last line of defence (sanitize.Frame / Plain) had to repair %d outputs: some string reached them unsanitized", n)
	}
	return frames, outputs
}

// run runs one command line.
func run(t testing.TB, path string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env := []string{"HOME=" + t.TempDir(), "NO_COLOR=1"}
	code = cli.RunContext(ctx, append(args, "--store", path), strings.NewReader(""), &out, &errb, env)
	return out.String(), errb.String(), code
}

func checkCLI(t testing.TB, path string, o Options) int {
	t.Helper()
	n := 0
	text := func(what, s string) {
		t.Helper()
		n++
		if bad := unsafeText(s); bad != "" {
			t.Errorf("%s: %s", what, bad)
		}
	}
	js := func(what, s string) {
		t.Helper()
		n++
		if bad := unsafeJSON(s); bad != "" {
			t.Errorf("%s: %s", what, bad)
		}
	}
	out, errs, code := run(t, path, "runs", "--json")
	if code != 0 {
		t.Fatalf("vigil runs --json: exit %d: %s", code, errs)
	}
	js("vigil runs --json", out)
	text("vigil runs --json (stderr)", errs)
	var runs struct {
		Runs []struct {
			ID       string `json:"id"`
			RootID   string `json:"root_id"`
			ParentID string `json:"parent_id"`
		} `json:"runs"`
		Requests []struct {
			Key string `json:"key"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("vigil runs --json: %v", err)
	}
	out, errs, _ = run(t, path, "runs")
	text("vigil runs", out+errs)
	children := 0
	for _, r := range runs.Runs {
		// Every root, and a few children: a child holds the same strings.
		if r.RootID != r.ID {
			if children++; children > 5 {
				continue
			}
		}
		for _, args := range [][]string{{"show", r.ID}, {"show", r.ID, "--markdown"}} {
			out, errs, _ := run(t, path, args...)
			text("vigil "+strings.Join(args, " "), out+errs)
		}
		out, errs, _ := run(t, path, "show", r.ID, "--json")
		js("vigil show --json", out)
		text("vigil show --json (stderr)", errs)
		if o.Trace {
			out, errs, _ := run(t, path, "trace", r.ID)
			text("vigil trace", out+errs)
			if r.ParentID != "" {
				out, errs, _ := run(t, path, "diff", r.ParentID, r.ID)
				text("vigil diff", out+errs)
			}
		}
	}
	// Decisions refused on a read-only store still name the request.
	for _, q := range runs.Requests {
		_, errs, _ := run(t, path, "deny", q.Key, "--read-only")
		text("vigil deny --read-only", errs)
	}
	return n
}

// unsafeText says what in command-line text could act on a terminal: any
// control but the line break, any C1 or bidi control, invalid UTF-8, or
// width-ambiguous text (a table's columns would not line up).
func unsafeText(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && (r < 0x20 || sanitize.Hazard(r)) }); i >= 0 {
		return fmt.Sprintf("a control character %q at byte %d: %q", []rune(s[i:])[0], i, around(s, i))
	}
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	if !sanitize.Unambiguous(s) {
		return "width-ambiguous text (ZWJ, a skin tone, a presentation selector, a soft hyphen, a lone flag letter or a conjoining Hangul jamo)"
	}
	return ""
}

// unsafeJSON says what in JSON output is not escaped: JSON's syntax is
// printable ASCII, so any control but the line break, and any C1 or bidi
// control, came from a string.
func unsafeJSON(s string) string {
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && (r < 0x20 || sanitize.Hazard(r)) }); i >= 0 {
		return fmt.Sprintf("an unescaped control %q at byte %d: %q", []rune(s[i:])[0], i, around(s, i))
	}
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	if !json.Valid([]byte(s)) {
		return "not JSON"
	}
	return ""
}

func around(s string, i int) string {
	return s[max(i-40, 0):min(i+40, len(s))]
}

// explorer is the model, driven as the Bubble Tea runtime would drive it.
type explorer struct {
	t      testing.TB
	m      *tui.Model
	w, h   int
	frames int
}

func checkExplorer(t testing.TB, path string, o Options) int {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	x := &explorer{t: t, w: 160, h: 50, m: tui.New(tui.Options{Source: src, NoWatch: true, NoTick: true, NoColor: true})}
	defer func() {
		x.m.Close()
		x.m.Source().Close()
	}()
	x.m.Settle(tea.WindowSizeMsg{Width: x.w, Height: x.h}, wait)
	x.m.RunCmd(x.m.Init(), wait)
	x.check("loaded")
	roots := 0
	for _, l := range strings.Split(ansi.Strip(x.m.RenderPane(0, 200, 400)), "\n") {
		if strings.Contains(l, "#") {
			roots++
		}
	}
	// Each root in turn: open it, its agents, its timeline, a step, its
	// drift and the queue, then back to the Runs pane and down one.
	x.press("1", "g")
	for range roots {
		x.press("enter", "2", "j", "3", "j", "G", "4", "pgdown", "5", "6", "j", "1", "j")
	}
	x.press("?")
	x.press("?", "1", "/", "x", "esc", "s", "s", "s")
	x.press(o.Keys...)
	// The compact layout and the smallest screen draw the panes again.
	for _, size := range [][2]int{{100, 30}, {80, 24}, {120, 32}, {60, 16}, {250, 70}} {
		x.w, x.h = size[0], size[1]
		x.m.Settle(tea.WindowSizeMsg{Width: x.w, Height: x.h}, wait)
		x.check(fmt.Sprintf("%dx%d", x.w, x.h))
		x.press("tab", "tab", "tab", "2", "j", "4", "6")
	}
	if title := x.m.View().WindowTitle; !sanitize.Safe(title) || strings.Contains(title, "pwned") {
		t.Errorf("window title %q", title)
	}
	return x.frames
}

func (x *explorer) press(keys ...string) {
	x.t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		x.m.Settle(msg, wait)
		x.check("after " + k)
	}
}

// check renders the screen and looks at every line of it.
func (x *explorer) check(where string) {
	x.t.Helper()
	x.frames++
	frame := x.m.Render()
	lines := strings.Split(frame, "\n")
	if len(lines) != x.h {
		x.t.Fatalf("%s: the frame is %d lines on a %d-line screen", where, len(lines), x.h)
	}
	for i, l := range lines {
		plain, bad := stripSGR(l)
		if bad != "" {
			x.t.Fatalf("%s: line %d: %s:\n%q", where, i, bad, l)
		}
		if !sanitize.Safe(plain) || strings.ContainsRune(plain, '\r') {
			x.t.Fatalf("%s: line %d holds a control:\n%q", where, i, l)
		}
		if !sanitize.Unambiguous(plain) {
			x.t.Fatalf("%s: line %d holds width-ambiguous text:\n%q", where, i, plain)
		}
		// The right border where the screen ends, whichever way a
		// terminal counts cells (a line may end short in blanks: the help
		// overlay's canvas trims the status bar's last space).
		wc, g := ansi.StringWidthWc(plain), ansi.StringWidth(plain)
		bordered := strings.HasSuffix(plain, "│") || strings.HasSuffix(plain, "╮") || strings.HasSuffix(plain, "╯")
		if (wc != g || wc > x.w || (bordered && wc != x.w)) && x.w >= 60 && x.h >= 16 {
			x.t.Fatalf("%s: line %d is %d cells to wcwidth and %d to graphemes on a %d-cell screen:\n%q", where, i, wc, g, x.w, plain)
		}
	}
}

// stripSGR takes the SGR sequences out of a line and says if any other
// escape sequence is left.
func stripSGR(l string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(l); {
		if l[i] != 0x1b {
			b.WriteByte(l[i])
			i++
			continue
		}
		j := i + 2
		if i+1 < len(l) && l[i+1] == '[' {
			for j < len(l) && (l[j] >= '0' && l[j] <= '9' || l[j] == ';' || l[j] == ':') {
				j++
			}
			if j < len(l) && l[j] == 'm' {
				if params := l[i+2 : j]; !sgrOurs(params) {
					return "", fmt.Sprintf("an SGR sequence no frame draws with (%q)", params)
				}
				i = j + 1
				continue
			}
		}
		return "", fmt.Sprintf("an escape sequence that is not SGR at byte %d (%q)", i, around(l, i))
	}
	return b.String(), ""
}

// sgrOurs: the no-colour theme draws with bold, underline and reverse, and
// resets; the text inputs may colour their cursor and placeholder.
func sgrOurs(params string) bool {
	ps := strings.Split(params, ";")
	for k := 0; k < len(ps); k++ {
		switch p := ps[k]; p {
		case "", "0", "1", "2", "3", "4", "7", "22", "23", "24", "27", "39", "49",
			"30", "31", "32", "33", "34", "35", "36", "37", "90", "91", "92", "93", "94", "95", "96", "97": // the text inputs
		case "38", "48":
			switch {
			case k+2 < len(ps) && ps[k+1] == "5":
				k += 2
			case k+4 < len(ps) && ps[k+1] == "2":
				k += 4
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}
