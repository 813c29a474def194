package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/store"
)

// MaxSectionLines caps how many wrapped lines one section of the detail
// shows; the rest is summarised in a visible marker.
const MaxSectionLines = 4000

// Detail is the step detail pane: everything recorded about one step in a
// scrollable, wrapped view.
type Detail struct {
	d       *store.StepDetail
	loading bool
	err     string
	lines   []string // wrapped content for width
	width   int
	dark    bool
	offset  int
	height  int
}

// NewDetail makes an empty detail pane.
func NewDetail() *Detail { return &Detail{} }

// Set shows a step's detail (nil clears it).
func (p *Detail) Set(d *store.StepDetail) {
	same := d != nil && p.d != nil && d.RowID == p.d.RowID
	p.d, p.loading, p.err, p.lines = d, false, "", nil
	if !same {
		p.offset = 0
	}
}

// Loading marks the pane as waiting for a step.
func (p *Detail) Loading() { p.loading, p.err = true, "" }

// Fail shows why the detail could not be read.
func (p *Detail) Fail(msg string) { p.loading, p.err, p.d, p.lines = false, msg, nil, nil }

// RowID is the step shown (0 when none).
func (p *Detail) RowID() int64 {
	if p.d == nil {
		return 0
	}
	return p.d.RowID
}

// HandleKey scrolls.
func (p *Detail) HandleKey(msg tea.KeyPressMsg, km keymap.KeyMap) Intent {
	switch {
	case key.Matches(msg, km.Up):
		p.Scroll(-1)
	case key.Matches(msg, km.Down):
		p.Scroll(1)
	case key.Matches(msg, km.PageUp):
		p.Scroll(-max(p.height-1, 1))
	case key.Matches(msg, km.PageDown):
		p.Scroll(max(p.height-1, 1))
	case key.Matches(msg, km.Top):
		p.offset = 0
	case key.Matches(msg, km.Bottom):
		p.offset = max(len(p.lines)-p.height, 0)
	default:
		return Intent{}
	}
	return Intent{Kind: Redraw}
}

// Scroll moves the view by d lines.
func (p *Detail) Scroll(d int) {
	p.offset = max(0, min(p.offset+d, len(p.lines)-p.height))
}

// View draws the pane.
func (p *Detail) View(t *Theme, w, h int, focused bool) string {
	inner := w - 2
	p.height = max(h-2, 1)
	if p.d != nil && (p.lines == nil || p.width != inner || p.dark != t.Dark) {
		p.lines, p.width, p.dark = detailLines(t, p.d, inner), inner, t.Dark
		p.offset = min(p.offset, max(len(p.lines)-p.height, 0))
	}
	var body []string
	title := "4 Step"
	switch {
	case p.err != "":
		body = []string{t.Bad.Render("  " + sanitize.Line(p.err))}
	case p.loading && p.d == nil:
		body = []string{t.Muted.Render("  loading…")}
	case p.d == nil:
		body = []string{t.Muted.Render("  select a step to see its prompt, tool call and result")}
	default:
		title = fmt.Sprintf("4 Step %d", p.d.Number)
		end := min(p.offset+p.height, len(p.lines))
		body = p.lines[p.offset:end]
	}
	note := ""
	if len(p.lines) > p.height {
		note = fmt.Sprintf("%d–%d of %s lines", p.offset+1, min(p.offset+p.height, len(p.lines)), Thousands(int64(len(p.lines))))
	}
	return t.Frame(title, note, body, w, h, focused)
}

// detailLines lays a step out as wrapped lines, once per width.
func detailLines(t *Theme, d *store.StepDetail, w int) []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	cut := map[string]bool{}
	for _, f := range d.Truncated {
		cut[f] = true
	}
	section := func(name string, n int) {
		label := "── " + name + " "
		if n > 0 {
			label = fmt.Sprintf("── %s (%d) ", name, n)
		}
		add("", t.TitleFocus.Render(label)+t.Faint.Render(strings.Repeat("─", max(w-cellWidth(label), 0))))
	}
	text := func(name, s string, style func(...string) string) {
		lines := wrap(sanitize.Text(s), w)
		if len(lines) > MaxSectionLines {
			more := len(lines) - MaxSectionLines
			lines = append(lines[:MaxSectionLines], t.Warning.Render(fmt.Sprintf("✂ %s more lines not shown", Thousands(int64(more)))))
		}
		for _, l := range lines {
			add(style(l))
		}
		if cut[name] {
			add(t.Warning.Render(fmt.Sprintf("✂ cut at %d KB: the store holds more", store.MaxDetailBytes>>10)))
		}
	}

	head := fmt.Sprintf("step %d · %s tokens", d.Number, Thousands(d.Tokens))
	if d.Latency > 0 {
		head += " · " + latency(d.Latency)
	}
	if n := len(d.Retries); n > 0 {
		head += fmt.Sprintf(" · ↩ %d provider retries", n)
	}
	add(t.Muted.Render(head))
	for _, l := range wrap(sanitize.Text(d.Decision), w) {
		add(t.Bold.Render(l))
	}
	for _, r := range d.Retries {
		add(t.Stale.Render("↩ " + Cut(sanitize.Line(r.Decision), w-2)))
	}

	if d.ToolCallFull != "" {
		section("Tool call", 0)
		text("tool call", d.ToolCallFull, t.Text.Render)
	}
	section("Result", 0)
	text("result", d.Result, t.Text.Render)
	if d.HasTurnText && d.TurnText != "" {
		section("Model said", 0)
		text("turn", d.TurnText, t.Text.Render)
	}
	if len(d.Observations) > 0 {
		section("Observations", len(d.Observations))
		for _, o := range d.Observations {
			add(t.Bold.Render(Cut(sanitize.Line(strings.TrimSpace(o.Kind+" "+o.Target)), w)))
			text("", strings.TrimSpace(o.Text), t.Muted.Render)
		}
	}
	if len(d.Edits) > 0 {
		section("Edits", len(d.Edits))
		for _, e := range d.Edits {
			add(t.Bold.Render(Cut(fmt.Sprintf("%s %s", sanitize.Line(e.Tool), sanitize.Line(e.Path)), w-12)) +
				t.Good.Render(fmt.Sprintf(" +%d", e.LinesAdded)) + t.Bad.Render(fmt.Sprintf(" −%d", e.LinesRemoved)))
			for _, l := range wrap(sanitize.Text(e.Hunk), w) {
				switch {
				case strings.HasPrefix(l, "+"):
					add(t.Good.Render(l))
				case strings.HasPrefix(l, "-"):
					add(t.Bad.Render(l))
				default:
					add(t.Muted.Render(l))
				}
			}
		}
	}
	if len(d.Policy) > 0 {
		section("Policy", len(d.Policy))
		for _, e := range d.Policy {
			line := fmt.Sprintf("%s %s %s", e.Kind, e.Act, e.Target)
			if e.Decision != "" {
				line = fmt.Sprintf("%s: %s %s %s", e.Decision, e.Act, e.Target, paren(e.Source))
			}
			if e.Rule != "" {
				line += fmt.Sprintf(" (rule %s, layer %s)", e.Rule, e.Layer)
			}
			style := t.Text
			if e.Kind == store.PolicyRefusal || e.Decision == store.PolicyDeny {
				style = t.Bad
			}
			add(style.Render(Cut(sanitize.Line(line), w)))
		}
	}
	if len(d.ProviderCalls) > 0 {
		section("Provider calls", len(d.ProviderCalls))
		for _, c := range d.ProviderCalls {
			usage := "usage not reported"
			if c.TotalTokens != nil {
				usage = Thousands(*c.TotalTokens) + " tokens"
			}
			line := fmt.Sprintf("#%d %s %s · %s", c.Attempt, c.Provider, c.Model, usage)
			if c.LatencyMS > 0 {
				line += " · " + latency(time.Duration(c.LatencyMS)*time.Millisecond)
			}
			style := t.Text
			if c.Failure != "" {
				line += " · failed: " + c.Failure
				style = t.Stale
			} else if c.FinishReason != "" {
				line += " · " + c.FinishReason
			}
			add(style.Render(Cut(sanitize.Line(line), w)))
		}
	}
	if d.Prompt != "" {
		section("Prompt", 0)
		text("prompt", d.Prompt, t.Muted.Render)
	}
	return out
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// wrap breaks sanitized text into lines of at most w cells, breaking long
// words too.
func wrap(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if cellWidth(line) <= w {
			out = append(out, line)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(line, w, ""), "\n")...)
	}
	return out
}
