package views

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// MaxSectionLines caps how many wrapped lines one section of the detail
// shows; the rest is summarised in a visible marker.
const MaxSectionLines = 4000

// Detail is the step detail pane: everything recorded about one step in a
// scrollable, wrapped view.
type Detail struct {
	revision // bumped by every change to what it draws (revision.go)

	env     *Env
	w, h    int
	d       *store.StepDetail
	loading bool
	err     string
	lines   []styledLine // the step laid out for the width; nil until sized
	offset  int
	search  Search
	hit     int // the line of the match last gone to (-1: none)

	pausedNote string // the timeline's following, paused for this reading (detail_note.go)
}

// NewDetail makes an empty detail pane.
func NewDetail(env *Env) *Detail { return &Detail{env: env, search: newSearch(env), hit: -1} }

func (p *Detail) lineText(i int) string { return plainText(p.lines[i]) }

// goToMatch scrolls a match into view, a third of the way down.
func (p *Detail) goToMatch(dir int) {
	from := p.hit
	if from < 0 {
		from = p.offset
	}
	i, ok := p.search.Target(from, dir)
	if !ok {
		return
	}
	p.hit = i
	if i < p.offset || i >= p.offset+p.height() {
		p.offset = i - p.height()/3
		p.scroll(0)
	}
}

// SetSize lays the pane out for w×h: a new width wraps the step again.
func (p *Detail) SetSize(w, h int) {
	p.bump()
	if w != p.w {
		p.lines = nil
	}
	p.w, p.h = w, h
	p.layout()
}

// layout wraps the step for the width once it is known (a pane off screen
// in the compact layout is not sized yet), and keeps the scroll inside it.
func (p *Detail) layout() {
	if p.d != nil && p.lines == nil && p.w > 2 {
		p.lines = detailLinesFor(p.d, p.w-2, detailOpts{openKey: p.env.Keys.Page.Help().Key})
		p.search.Index(len(p.lines), p.lineText)
		p.hit = -1
	}
	p.offset = max(0, min(p.offset, len(p.lines)-p.height()))
}

// height is how many lines the body shows.
func (p *Detail) height() int { return max(p.h-2, 1) }

// Focus is a no-op: the detail has nothing to arm.
func (p *Detail) Focus() {}

// Capturing reports whether the search is taking typed text.
func (p *Detail) Capturing() bool { return p.search.Typing() }

// Set shows a step's detail (nil clears it).
func (p *Detail) Set(d *store.StepDetail) {
	p.bump()
	same := d != nil && p.d != nil && d.RowID == p.d.RowID
	p.d, p.loading, p.err, p.lines = d, false, "", nil
	if !same {
		p.offset = 0
	}
	p.layout()
}

// Loading marks the pane as waiting for a step.
func (p *Detail) Loading() {
	p.bump()
	p.loading, p.err = true, ""
}

// Fail shows why the detail could not be read.
func (p *Detail) Fail(msg string) {
	p.bump()
	p.loading, p.err, p.d, p.lines = false, msg, nil, nil
}

// Offset is the first line shown: it moves when the step is read.
func (p *Detail) Offset() int { return p.offset }

// RowID is the step shown (0 when none).
func (p *Detail) RowID() int64 {
	if p.d == nil {
		return 0
	}
	return p.d.RowID
}

// Key scrolls.
func (p *Detail) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km := p.env.Keys
	switch p.search.Key(msg, p.env) {
	case searchChanged:
		return p.searchChanged()
	case searchMoved:
		p.goToMatch(p.search.Dir(msg, p.env))
		return redraw
	case searchKept:
		return redraw
	}
	if !scrollText(km, msg, &p.offset, len(p.lines), p.height()) {
		return Intent{}
	}
	return redraw
}

// searchChanged goes to the first match of a query just changed.
func (p *Detail) searchChanged() Intent {
	p.search.Index(len(p.lines), p.lineText)
	p.hit = -1
	p.goToMatch(0)
	return redraw
}

// Paste adds to the search being typed.
func (p *Detail) Paste(text string) Intent {
	p.bump()
	if !p.search.Paste(text) {
		return Intent{}
	}
	return p.searchChanged()
}

// Click does nothing but focus the pane (the root does that).
func (p *Detail) Click(x, y int) Intent { return Intent{} }

// Wheel scrolls by d lines.
func (p *Detail) Wheel(d int) Intent {
	p.bump()
	p.scroll(d)
	return redraw
}

func (p *Detail) scroll(d int) {
	p.offset = scrolledBy(p.offset, d, len(p.lines), p.height())
}

// View draws the pane.
func (p *Detail) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	height := p.height()
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
		end := min(p.offset+height, len(p.lines))
		body = renderLines(t, p.lines[p.offset:end])
		for i := range body {
			body[i] = p.search.Highlight(t, body[i])
		}
	}
	note := ""
	if len(p.lines) > height {
		note = fmt.Sprintf("%d–%d of %s lines", p.offset+1, min(p.offset+height, len(p.lines)), textfmt.Thousands(int64(len(p.lines))))
	}
	if p.pausedNote != "" { // detail_note.go
		notes := []string{t.Warning.Render(p.pausedNote)}
		if note != "" {
			notes = append(notes, note)
		}
		note = fitNote(title, w, notes)
	}
	if s := p.search.Note(p.env, p.hit); s != "" {
		note = fitNote(title, w, []string{s, note})
	}
	sb := Scrollbar{Rows: height, From: p.offset, To: min(p.offset+height, len(p.lines)), Total: len(p.lines)}
	return t.FrameScroll(title, note, body, w, h, focused, sb)
}

// detailOpts are how a step is laid out beyond its width.
type detailOpts struct {
	// openKey is the key that opens the step in the pager, named in the
	// line under a field cut to its head that the pager shows whole.
	openKey string
	// wholeFields lays each field the store can write whole (FieldBytes)
	// out as one fieldMark line naming it, for StepParts.
	wholeFields bool
}

// fieldMark is the text of a line that stands for a field written whole.
const fieldMark = "\x00field "

// detailLines lays a step out as wrapped lines for a width.
func detailLines(d *store.StepDetail, w int) []styledLine { return detailLinesFor(d, w, detailOpts{}) }

func detailLinesFor(d *store.StepDetail, w int, o detailOpts) []styledLine {
	var out []styledLine
	add := func(r role, s string) { out = append(out, one(r, s)) }
	cut := map[string]bool{}
	for _, f := range d.Truncated {
		cut[f] = true
	}
	section := func(name string, n int) {
		label := "── " + name + " "
		if n > 0 {
			label = fmt.Sprintf("── %s (%d) ", name, n)
		}
		out = append(out, one(plain, ""), styledLine{{roleHeading, label}, {roleFaint, strings.Repeat("─", max(w-textfmt.Width(label), 0))}})
	}
	// cutNote says under a field cut to its head (shown bytes of it) how
	// much more the store holds, and how to see it whole.
	cutNote := func(name string, shown int) {
		size, whole := d.FieldBytes[name]
		switch {
		case cut[name] && whole && o.openKey != "":
			add(roleWarning, fmt.Sprintf("… %s more — %s opens it whole in the pager", sizeText(size-int64(shown)), o.openKey))
		case cut[name] && whole:
			add(roleWarning, fmt.Sprintf("… %s more: the store holds %s", sizeText(size-int64(shown)), sizeText(size)))
		case cut[name]:
			add(roleWarning, fmt.Sprintf("✂ cut at %d KB: the store holds more", store.MaxDetailBytes>>10))
		}
	}
	text := func(name, s string, r role) {
		_, whole := d.FieldBytes[name]
		if whole && cut[name] && o.wholeFields {
			add(plain, fieldMark+name)
			return
		}
		lines := wrap(sanitize.Text(s), w)
		more := len(lines) - MaxSectionLines
		if more > 0 {
			lines = lines[:MaxSectionLines]
		}
		for _, l := range lines {
			add(r, l)
		}
		if more > 0 {
			add(roleWarning, fmt.Sprintf("✂ %s more lines not shown", textfmt.Thousands(int64(more))))
		}
		cutNote(name, len(s))
	}

	head := fmt.Sprintf("step %d · %s tokens", d.Number, textfmt.Thousands(d.Tokens))
	if d.TokensUnknown {
		head = fmt.Sprintf("step %d · tokens not reported", d.Number)
	}
	if d.Pending {
		head = fmt.Sprintf("step %d · not committed yet", d.Number)
	}
	if d.Latency > 0 {
		head += " · " + latency(d.Latency)
	}
	switch n := len(d.Retries); {
	case n == 1:
		head += " · ↩ 1 provider retry"
	case n > 1:
		head += fmt.Sprintf(" · ↩ %d provider retries", n)
	}
	if n := len(d.ProviderCalls); n > 0 {
		head += " · " + plural(n, "provider attempt")
	}
	for _, l := range wrap(head, w) { // its facts wrap rather than lose the last
		add(roleMuted, l)
	}
	for _, l := range wrap(sanitize.Text(d.Decision), w) {
		add(roleBold, l)
	}
	// The rows folded under the step, as the timeline's ↩N counts them; a
	// retry paired with its failed attempt is shown there, under Provider
	// calls, instead.
	failed := 0
	for _, c := range d.ProviderCalls {
		if c.Failure != "" {
			failed++
		}
	}
	for _, r := range d.Retries {
		if r.Kind == store.StepRetry && failed > 0 {
			failed--
			continue
		}
		add(roleStale, "↩ "+textfmt.Cut(sanitize.Line(r.Decision), w-2))
	}

	if d.ToolCallFull != "" {
		section("Tool call", 0)
		text("tool call", prettyCall(d.ToolCallFull), roleText) // JSON arguments indented (open_text.go)
	}
	section("Result", 0)
	text("result", d.Result, roleText)
	if d.HasTurnText && d.TurnText != "" {
		section("Model said", 0)
		text("turn", d.TurnText, roleText)
	}
	if len(d.Observations) > 0 {
		section("Observations", len(d.Observations))
		for _, o := range d.Observations {
			add(roleBold, textfmt.Cut(sanitize.Line(strings.TrimSpace(o.Kind+" "+o.Target)), w))
			name := ""
			if o.RowID != 0 {
				name = store.ObservationField(o.RowID)
			}
			text(name, strings.TrimSpace(o.Text), roleMuted)
		}
	}
	if len(d.Edits) > 0 {
		section("Edits", len(d.Edits))
		for _, e := range d.Edits {
			out = append(out, styledLine{
				{roleBold, textfmt.Cut(fmt.Sprintf("%s %s", sanitize.Line(e.Tool), sanitize.Line(e.Path)), w-12)},
				{roleGood, fmt.Sprintf(" +%d", e.LinesAdded)},
				{roleBad, fmt.Sprintf(" −%d", e.LinesRemoved)},
			})
			name := ""
			if e.RowID != 0 {
				name = store.EditField(e.RowID)
			}
			if _, whole := d.FieldBytes[name]; whole && cut[name] && o.wholeFields {
				add(plain, fieldMark+name)
				continue
			}
			for _, l := range wrap(sanitize.Text(e.Hunk), w) {
				switch {
				case strings.HasPrefix(l, "+"):
					add(roleGood, l)
				case strings.HasPrefix(l, "-"):
					add(roleBad, l)
				default:
					add(roleMuted, l)
				}
			}
			cutNote(name, len(e.Hunk))
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
			if e.Step != d.Number { // before the first step, which has no row of its own
				line = fmt.Sprintf("step %d · %s", e.Step, line)
			}
			r := roleText
			if e.Kind == store.PolicyRefusal || e.Decision == store.PolicyDeny {
				r = roleBad
			}
			add(r, textfmt.Cut(sanitize.Line(line), w))
		}
	}
	if len(d.ProviderCalls) > 0 {
		// Every attempt, in the order made; each failed one is paired with
		// the retry row the timeline folds under the step (↩N), in order.
		// The step's token breakdown goes in the heading when it fits there,
		// else on the line under it.
		u := store.SumUsage(d.ProviderCalls)
		var counts []styledLine
		if u.Reported > 0 {
			counts = breakdown(u, w, true)
		}
		if len(counts) == 1 && textfmt.Width(fmt.Sprintf("── Provider calls (%d) · ", len(d.ProviderCalls)))+counts[0].width()+3 <= w {
			label := fmt.Sprintf("── Provider calls (%d) · %s ", len(d.ProviderCalls), strings.ReplaceAll(plainText(counts[0]), "   ", " · "))
			out = append(out, one(plain, ""), styledLine{{roleHeading, label}, {roleFaint, strings.Repeat("─", max(w-textfmt.Width(label), 0))}})
		} else {
			section("Provider calls", len(d.ProviderCalls))
			out = append(out, counts...)
		}
		var retries []store.Retry
		for _, r := range d.Retries {
			if r.Kind == store.StepRetry {
				retries = append(retries, r)
			}
		}
		failed := 0
		for i, c := range d.ProviderCalls {
			usage := "usage not reported"
			if c.TotalTokens != nil {
				usage = textfmt.Thousands(*c.TotalTokens) + " tokens"
			}
			line := fmt.Sprintf("%d. %s %s · %s", i+1, c.Provider, c.Model, usage)
			if c.LatencyMS > 0 {
				line += " · " + latency(time.Duration(c.LatencyMS)*time.Millisecond)
			}
			r := roleText
			if c.Failure != "" {
				line += " · failed: " + c.Failure
				r = roleStale
			} else if c.FinishReason != "" {
				line += " · " + c.FinishReason
			}
			add(r, textfmt.Cut(sanitize.Line(strings.Join(strings.Fields(line), " ")), w))
			if c.TotalTokens != nil && len(d.ProviderCalls) > 1 {
				for _, l := range breakdown(store.SumUsage([]store.ProviderCall{c}), w-3, true) {
					out = append(out, append(styledLine{{plain, "   "}}, l...))
				}
			}
			if c.Failure != "" {
				if failed < len(retries) {
					add(roleStale, "   ↩ "+textfmt.Cut(sanitize.Line(retries[failed].Decision), w-5))
				}
				failed++
			}
		}
	}
	if len(d.ServerTools) > 0 || len(d.Citations) > 0 {
		section("Provider tools and citations", len(d.ServerTools)+len(d.Citations))
		out = append(out, providerToolLines(d.ServerTools, d.Citations, true, true, w)...)
	}
	if d.Prompt != "" {
		section("Prompt", 0)
		text("prompt", d.Prompt, roleMuted)
	}
	return out
}

// plainText is a laid-out line's text without its styles.
func plainText(l styledLine) string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.text)
	}
	return b.String()
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
		if textfmt.Width(line) <= w {
			out = append(out, line)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(line, w, ""), "\n")...)
	}
	return out
}

// sizeText is a byte count as a person reads it: "187 MB", "300 KB".
func sizeText(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", (n+1<<19)>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
