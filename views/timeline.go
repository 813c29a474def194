package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// Timeline is the step timeline of one agent. Follow mode keeps the cursor
// on the newest step as steps arrive (like tail -f); any move turns it off
// and new steps are counted in a badge instead.
type Timeline struct {
	env     *Env
	w, h    int
	list    List
	steps   []store.Step
	runID   string
	title   string
	follow  bool
	live    bool // the run was live when loaded: steps may still come
	fresh   int  // steps that arrived while not following
	loading bool

	// The step filter (timeline_filter.go): the facet's label ("" for
	// every step) and the steps it keeps, as indices into steps (nil when
	// every step is shown). The list's rows are these.
	facet string
	view  []int
	// The search over the rows shown (search.go).
	search Search
}

// NewTimeline makes an empty timeline.
func NewTimeline(env *Env) *Timeline { return &Timeline{env: env, search: newSearch(env)} }

// rows is how many rows the list has: the steps the filter keeps.
func (p *Timeline) rows() int {
	if p.view != nil {
		return len(p.view)
	}
	return len(p.steps)
}

// step is the list's row i.
func (p *Timeline) step(i int) store.Step {
	if p.view != nil {
		return p.steps[p.view[i]]
	}
	return p.steps[i]
}

// refilter works out the rows the filter keeps after the steps or the
// filter changed, keeping the cursor on its step where it is kept.
func (p *Timeline) refilter() {
	if p.facet == "" {
		p.refilterWith(nil)
		return
	}
	p.refilterWith(stepFacets(p.steps))
}

// refilterWith is refilter with the steps' facets worked out already.
func (p *Timeline) refilterWith(facets []stepFacet) {
	var at int64 = -1
	if p.list.Cursor < p.rows() {
		at = p.step(p.list.Cursor).RowID
	}
	p.view = nil
	if p.facet != "" {
		f, ok := facetByLabel(facets, p.facet)
		if !ok {
			p.facet = "" // no step has it any more
		} else {
			p.view = []int{}
			for i, st := range p.steps {
				if f.match(st) {
					p.view = append(p.view, i)
				}
			}
		}
	}
	p.list.SetLen(p.rows())
	for i := 0; i < p.rows(); i++ {
		if p.step(i).RowID == at {
			p.list.Select(i)
			break
		}
	}
	p.search.Index(p.rows(), p.rowText)
}

// rowText is a row's text as the search reads it: its number, decision
// and tool call (the store's text: what is drawn is that text made safe).
func (p *Timeline) rowText(i int) string {
	st := p.step(i)
	return strconv.Itoa(st.Number) + " " + st.Decision + " · " + st.ToolCall
}

// SetSize lays the pane out for w×h.
func (p *Timeline) SetSize(w, h int) {
	p.w, p.h = w, h
	p.list.SetHeight(max(h-2, 1))
}

// Focus is a no-op: the timeline has nothing to arm.
func (p *Timeline) Focus() {}

// Capturing reports whether the search is taking typed text.
func (p *Timeline) Capturing() bool { return p.search.Typing() }

// Load shows another agent's steps: follow is on when the run is live.
func (p *Timeline) Load(runID, title string, steps []store.Step, live bool) {
	p.runID, p.title, p.steps, p.follow, p.fresh, p.loading = runID, title, steps, live, 0, false
	p.live = live
	p.list = List{height: p.list.height}
	p.facet, p.view = "", nil
	p.search.Clear()
	p.list.SetLen(len(steps))
	if live {
		p.list.Bottom()
	}
}

// Loading marks the pane as waiting for an agent's steps.
func (p *Timeline) Loading(runID, title string) {
	p.runID, p.title, p.steps, p.loading = runID, title, nil, true
	p.facet, p.view = "", nil
	p.list.SetLen(0)
}

// Update takes the agent's steps after a refresh. Steps only ever grow at
// the end, so the cursor stays on the step it was on.
func (p *Timeline) Update(steps []store.Step) {
	before := p.rows()
	p.steps = steps
	p.refilter()
	added := p.rows() - before
	if p.follow {
		p.list.Bottom()
	} else if added > 0 {
		p.fresh += added
	}
}

// RunID is the agent shown.
func (p *Timeline) RunID() string { return p.runID }

// Following reports follow mode.
func (p *Timeline) Following() bool { return p.follow }

// Selected is the step under the cursor.
func (p *Timeline) Selected() (store.Step, bool) {
	if p.list.Cursor < p.rows() {
		return p.step(p.list.Cursor), true
	}
	return store.Step{}, false
}

func (p *Timeline) selectIntent() Intent {
	if st, ok := p.Selected(); ok {
		return Intent{Kind: SelectStep, ID: p.runID, RowID: st.RowID}
	}
	return redraw
}

// ShowLast puts the cursor on the newest step, as the last-row key would.
func (p *Timeline) ShowLast() {
	p.list.Bottom()
	p.afterMove()
}

// Key moves through the steps; f toggles follow, / searches, the step
// filter key cycles the filter.
func (p *Timeline) Key(msg tea.KeyPressMsg) Intent {
	km := p.env.Keys
	switch p.search.Key(msg, p.env) {
	case searchChanged:
		p.search.Index(p.rows(), p.rowText)
		return p.goToMatch(0)
	case searchMoved:
		return p.goToMatch(p.search.Dir(msg, p.env))
	case searchKept:
		return redraw
	}
	if key.Matches(msg, km.StepFilter) {
		facets := stepFacets(p.steps)
		p.facet = nextFacet(facets, p.facet).label
		p.refilterWith(facets)
		if p.follow {
			p.list.Bottom()
		}
		return p.selectIntent()
	}
	if key.Matches(msg, km.Back) && p.facet != "" {
		p.facet = ""
		p.refilter()
		return p.selectIntent()
	}
	if key.Matches(msg, km.Follow) {
		p.follow = !p.follow
		if p.follow {
			p.fresh = 0
			p.list.Bottom()
		}
		return p.selectIntent()
	}
	before := p.list.Cursor
	if !moveList(&p.list, msg, km) {
		if key.Matches(msg, km.Open) {
			return p.selectIntent()
		}
		return Intent{}
	}
	p.afterMove()
	if p.list.Cursor == before {
		return redraw
	}
	return p.selectIntent()
}

// goToMatch moves the cursor to a match (dir as Search.Target has it).
func (p *Timeline) goToMatch(dir int) Intent {
	i, ok := p.search.Target(p.list.Cursor, dir)
	if !ok || i == p.list.Cursor {
		return redraw
	}
	p.list.Select(i)
	p.afterMove()
	return p.selectIntent()
}

// afterMove ends follow mode on a move, unless the move lands on the newest
// step (G is how one catches up).
func (p *Timeline) afterMove() {
	p.follow = false
	if p.list.AtBottom() {
		p.fresh = 0
	}
}

// Click selects the step clicked.
func (p *Timeline) Click(x, y int) Intent {
	if !p.list.SelectVisible(y - 1) { // the top border
		return Intent{}
	}
	p.afterMove()
	return p.selectIntent()
}

// Wheel moves the window by d rows; the step under the cursor is shown.
func (p *Timeline) Wheel(d int) Intent {
	p.list.Scroll(d)
	p.afterMove()
	return p.selectIntent()
}

// View draws the pane; only the rows on screen are rendered.
func (p *Timeline) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	var body []string
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.search.Highlight(t, p.row(t, p.step(i), i == p.list.Cursor, focused, inner)))
	}
	switch {
	case p.loading:
		body = append(body, t.Muted.Render("  loading steps…"))
	case p.runID == "":
		body = append(body, t.Muted.Render("  select an agent to see its steps"))
	case len(p.steps) == 0 && p.live:
		body = append(body, t.Muted.Render("  no steps yet"))
	case len(p.steps) == 0:
		body = append(body, t.Muted.Render("  no steps: the run committed none"))
	case p.rows() == 0:
		body = append(body, t.Muted.Render(fmt.Sprintf("  no step is %s (%s: every step)", p.facet, p.env.Keys.Back.Help().Key)))
	}
	// Notes, most important first: where the title leaves too little room,
	// the count goes before the follow mode does.
	var notes []string
	if n := p.search.Note(p.env, p.list.Cursor); n != "" {
		notes = append(notes, n)
	}
	if p.facet != "" {
		notes = append(notes, t.Warning.Render("only "+p.facet))
	}
	if p.fresh > 0 {
		notes = append(notes, t.Warning.Render(fmt.Sprintf("%d new", p.fresh)))
	}
	if p.follow {
		notes = append(notes, "following")
	}
	if len(p.steps) > 0 {
		// The steps are the shown agent's own, not its tree's.
		notes = append(notes, "agent: "+countNote(p.rows(), len(p.steps), "step"))
	}
	title := "3 Timeline"
	if p.title != "" {
		title += " · " + p.title
	}
	// Short of room the count drops its scope word before the title is
	// cut for it, and before it drops.
	if len(p.steps) > 0 && textfmt.Width(title)+textfmt.Width(strings.Join(notes, " · "))+6 > w-2 {
		notes[len(notes)-1] = countNote(p.rows(), len(p.steps), "step")
	}
	note := fitNote(title, w, notes)
	return t.FrameScroll(title, note, body, w, h, focused, ListScrollbar(&p.list, 0))
}

func (p *Timeline) row(t *Theme, st store.Step, selected, focused bool, w int) string {
	num := textfmt.PadLeft(fmt.Sprint(st.Number), 4)
	tokens := textfmt.PadLeft(textfmt.Tokens(st.Tokens), 6)
	lat := textfmt.PadLeft(latency(st.Latency), 6)
	retry := ""
	if n := len(st.Retries); n > 0 && !st.Pending {
		retry = fmt.Sprintf(" ↩%d", n)
	}
	decision := sanitize.Line(st.Decision)
	tool := sanitize.Line(st.ToolCall)
	if st.Pending {
		decision, tool = "… "+decision, ""
	}
	textW := max(w-4-1-6-6-2-textfmt.Width(retry)-1, 8)
	text := decision
	if tool != "" {
		text = decision + " · " + tool
	}
	text = textfmt.Cut(text, textW)
	if selected {
		line := num + " " + textfmt.PadRight(text, textW) + retry + " " + tokens + lat
		return selectStyle(t, focused).Render(textfmt.Fit(line, w))
	}
	dStyle := t.Text
	if st.Pending {
		dStyle = t.Stale
	}
	// Colour the decision and the tool call apart; the cut keeps the join.
	dec, rest := text, ""
	if i := strings.Index(text, " · "); i >= 0 && tool != "" {
		dec, rest = text[:i], text[i:]
	}
	return t.Muted.Render(num) + " " + dStyle.Render(dec) + t.Muted.Render(rest) +
		strings.Repeat(" ", max(textW-textfmt.Width(text), 0)) + t.Stale.Render(retry) + " " + t.Text.Render(tokens) + t.Muted.Render(lat)
}

func latency(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return textfmt.Duration(d)
}
