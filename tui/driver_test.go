package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// driver runs the model synchronously, as the Bubble Tea runtime would:
// every command runs and its message is fed back, until things settle. A
// command that does not answer quickly is a timer (the clock tick) and is
// dropped, so a test never waits on wall time.
type driver struct {
	t     testing.TB
	m     *Model
	clock time.Time
	quit  bool
	path  string
	wait  time.Duration // how long a command may take before it is taken for a timer
}

func newDriver(t testing.TB, w, h int, opts ...func(*Options)) *driver {
	t.Helper()
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return openDriver(t, path, w, h, opts...)
}

func openDriver(t testing.TB, path string, w, h int, opts ...func(*Options)) *driver {
	t.Helper()
	src, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, clock: fixture.Now, path: path, wait: cmdTimeout}
	o := Options{Source: src, NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return d.clock }, StoreLabel: "/work/shop/runs.sqlite3"}
	for _, f := range opts {
		f(&o)
	}
	d.m = New(o)
	t.Cleanup(func() { d.m.Close(); d.m.src.Close() })
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(d.m.Init())
	return d
}

func (d *driver) send(msg tea.Msg) {
	if d.m.Settle(msg, d.wait) {
		d.quit = true
	}
}

func (d *driver) run(cmd tea.Cmd) {
	if d.m.RunCmd(cmd, d.wait) {
		d.quit = true
	}
}

// cmdTimeout is how long a command may take before it is taken for a
// timer and dropped.
var cmdTimeout = 250 * time.Millisecond

func settle(m *Model, msg tea.Msg) bool { return m.Settle(msg, cmdTimeout) }

func runCmd(m *Model, cmd tea.Cmd) bool { return m.RunCmd(cmd, cmdTimeout) }

// press sends keys by name: "j", "tab", "shift+tab", "enter", "esc", or
// any text (sent a rune at a time).
func (d *driver) press(keys ...string) {
	d.t.Helper()
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	special := map[string]tea.KeyPressMsg{
		"tab":       {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"enter":     {Code: tea.KeyEnter},
		"esc":       {Code: tea.KeyEscape},
		"backspace": {Code: tea.KeyBackspace},
		"up":        {Code: tea.KeyUp},
		"down":      {Code: tea.KeyDown},
		"pgdown":    {Code: tea.KeyPgDown},
		"pgup":      {Code: tea.KeyPgUp},
		"end":       {Code: tea.KeyEnd},
		"home":      {Code: tea.KeyHome},
		"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
	}
	if m, ok := special[k]; ok {
		return m
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// refresh reads the store's changes as a watcher signal would.
func (d *driver) refresh() {
	d.t.Helper()
	d.run(d.m.askRefresh())
}

// advance moves the clock.
func (d *driver) advance(dt time.Duration) { d.clock = d.clock.Add(dt) }

// screen is the frame as plain text.
// screen is the frame as the terminal gets it, the panes drawn through the
// cache; every test that reads one checks it against the frame drawn whole.
func (d *driver) screen() string {
	d.t.Helper()
	kept := ansi.Strip(d.m.Render())
	if whole, ok := d.keptIsWhole(kept); !ok {
		d.t.Fatalf("the frame from kept pane drawings differs from the frame drawn whole:\nkept:\n%s\nwhole:\n%s", kept, whole)
	}
	return kept
}

// keptIsWhole draws the frame again with no pane drawing kept and says
// whether it is kept; the model is left as it was (its kept drawings, its
// counts of frames and draws).
func (d *driver) keptIsWhole(kept string) (string, bool) {
	m := d.m
	drawn, draws, frames := m.drawn, m.paneDraws, m.frames
	m.drawn = [paneCount]paneDrawn{}
	whole := ansi.Strip(m.Render())
	m.drawn, m.paneDraws, m.frames = drawn, draws, frames
	return whole, whole == kept
}

func (d *driver) contains(want ...string) {
	d.t.Helper()
	s := d.screen()
	for _, w := range want {
		if !strings.Contains(s, w) {
			d.t.Fatalf("screen lacks %q:\n%s", w, s)
		}
	}
}

func (d *driver) lacks(bad ...string) {
	d.t.Helper()
	s := d.screen()
	for _, b := range bad {
		if strings.Contains(s, b) {
			d.t.Fatalf("screen has %q:\n%s", b, s)
		}
	}
}

// writer opens a second handle on the fixture, as a harness would.
func (d *driver) writer() *harness.Store {
	d.t.Helper()
	w, err := harness.OpenWriter(d.path)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { w.Close() })
	return w
}

// cellOf is the screen cell where text first appears.
func (d *driver) cellOf(text string) (x, y int) {
	d.t.Helper()
	for y, l := range strings.Split(d.screen(), "\n") {
		if i := strings.Index(l, text); i >= 0 {
			return ansi.StringWidth(l[:i]), y
		}
	}
	d.t.Fatalf("screen lacks %q:\n%s", text, d.screen())
	return 0, 0
}

// click presses the left button on the first cell showing text.
func (d *driver) click(text string) {
	d.t.Helper()
	x, y := d.cellOf(text)
	d.send(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
}

// wheel turns the mouse wheel over the first cell showing text.
func (d *driver) wheel(text string, button tea.MouseButton) {
	d.t.Helper()
	x, y := d.cellOf(text)
	d.send(tea.MouseWheelMsg{X: x, Y: y, Button: button})
}
