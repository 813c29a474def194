package views

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/rev"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// Timeline is the step timeline of one agent. Follow mode keeps the cursor
// on the newest step as steps arrive (like tail -f); any move turns it off
// and new steps are counted in a badge instead. The steps need not all be in
// memory (TimelineSteps): the pane draws the ones it has, says which it
// needs (Need), and hands a search or a filter over a run not held whole to
// the explorer to stream through the store (Scan, ScanDone).
type Timeline struct {
	revision // bumped by every change to what it draws (revision.go)

	env     *Env
	w, h    int
	list    List
	src     TimelineSteps
	srcSeen rev.Seen // the revision of the steps last drawn from (Rev)
	runID   string
	title   string
	follow  bool
	live    bool // the run was live when loaded: steps may still come
	fresh   int  // steps that arrived while not following
	loading bool

	// The step filter (timeline_filter.go): the facet's label ("" for
	// every step). cur is the filter and the search as applied: the steps
	// the filter keeps (the list's rows) and the rows the search matches,
	// kept up to date as steps arrive.
	facet    string
	curFacet string
	cur      *StepScan
	// A scan asked for and not back yet: asked says the explorer has it,
	// live is what arrived since (from liveMin on), seek says to go to the
	// first match when it is back (the query changed).
	scan    *StepScan
	asked   bool
	live2   *StepScan
	liveMin int
	seek    bool
	seq     int
	// The search over the rows shown (search.go).
	search Search
	memo   timelineRows // the rows of the last frame (timeline_rows.go)

	// pausedRun is the agent whose following the step pane's reading
	// paused (timeline_pause.go).
	pausedRun string
	// The step filter's picker, and the step the cursor was on before a
	// filter was chosen (timeline_picker.go; -1: none).
	picker       facetPicker
	unfilteredAt int
}

// NewTimeline makes an empty timeline.
func NewTimeline(env *Env) *Timeline {
	return &Timeline{env: env, search: newSearch(env), src: NewStepSlice(nil), cur: newStepScan(0, nil, ""), unfilteredAt: -1}
}

// Rev is the pane's revision, moved too when the steps it draws moved.
func (p *Timeline) Rev() uint64 {
	p.track(&p.srcSeen, p.src)
	return p.revision.Rev()
}

// filtered reports whether the rows are the steps a filter keeps.
func (p *Timeline) filtered() bool { return p.cur.Kept != nil }

// rows is how many rows the list has: the steps the filter keeps.
func (p *Timeline) rows() int {
	if p.filtered() {
		return len(p.cur.Kept)
	}
	return p.src.Len()
}

// index is the step index of row i.
func (p *Timeline) index(i int) int {
	if p.filtered() {
		return p.cur.Kept[i]
	}
	return i
}

// step is the list's row i; ok is false when only its key is in memory.
func (p *Timeline) step(i int) (store.Step, bool) { return p.src.Step(p.index(i)) }

// facetFunc is the test of the facet labelled label (nil: every step).
func (p *Timeline) facetFunc(label string) (func(store.Step) bool, bool) {
	if label == "" {
		return nil, true
	}
	f, ok := facetByLabel(p.src.Facets().list(), label)
	return f.match, ok
}

// rebuild applies the filter and the search anew: at once over steps held
// whole, else as a scan for the explorer to run. seek goes to the first
// match from the cursor once it is known.
func (p *Timeline) rebuild(seek bool) Intent {
	match, ok := p.facetFunc(p.facet)
	if !ok {
		p.facet, match = "", nil // no step has it any more
	}
	p.seq++
	sc := newStepScan(p.seq, match, p.search.Query())
	if p.src.Complete() {
		for i, n := 0, p.src.Len(); i < n; i++ {
			st, _ := p.src.Step(i)
			sc.Add(i, st)
		}
		p.scan, p.live2 = nil, nil
		p.search.scanning = false
		return p.apply(sc, seek)
	}
	p.scan, p.asked, p.live2, p.liveMin, p.seek = sc, false, sc.fork(), -1, seek
	p.search.scanning = sc.query != ""
	return redraw
}

// apply makes sc the filter and search shown, keeping the cursor on its
// step where the filter keeps it.
func (p *Timeline) apply(sc *StepScan, seek bool) Intent {
	at := -1
	if p.list.Cursor < p.rows() {
		at = p.index(p.list.Cursor)
	}
	p.cur, p.curFacet = sc, p.facet
	p.search.hits = sc.HitRows
	p.list.SetLen(p.rows())
	if at >= 0 {
		if !p.filtered() {
			p.list.Select(at)
		} else if i := sort.SearchInts(sc.Kept, at); i < len(sc.Kept) && sc.Kept[i] == at {
			p.list.Select(i)
		}
	}
	if seek {
		return p.goToMatch(0)
	}
	return p.selectIntent()
}

// Scan is the scan the explorer is to run over the store, once: nil when
// none waits. Feed it every step of the agent through to its Len now, in
// order, then hand it back to ScanDone.
func (p *Timeline) Scan() *StepScan {
	if p.scan == nil || p.asked {
		return nil
	}
	p.bump()
	p.asked = true
	return p.scan.fork()
}

// Scanning reports whether a scan is out.
func (p *Timeline) Scanning() bool { return p.scan != nil }

// ScanDone takes a scan back: what it found, and what arrived since.
func (p *Timeline) ScanDone(sc *StepScan) Intent {
	p.bump()
	if p.scan == nil || sc.Seq != p.scan.Seq {
		return Intent{} // a query or a filter since replaced it
	}
	merged := sc.merge(p.live2, p.liveMin)
	seek := p.seek
	p.scan, p.live2 = nil, nil
	p.search.scanning = false
	in := p.apply(merged, seek)
	if p.follow {
		p.list.Bottom()
	}
	return in
}

// ScanFailed drops a scan the explorer could not run (the filter and the
// search are off), reporting whether the pane was waiting for it.
func (p *Timeline) ScanFailed(seq int) bool {
	p.bump()
	if p.scan == nil || seq != p.scan.Seq {
		return false
	}
	p.scan, p.live2 = nil, nil
	p.facet = p.curFacet
	p.search.Clear()
	p.dropQuery()
	return true
}

// dropQuery ends the search, keeping the filter.
func (p *Timeline) dropQuery() {
	if p.cur.query != "" {
		p.cur.query, p.cur.Hits, p.cur.HitRows = "", nil, nil
	}
	p.search.hits = nil
}

// Need is the steps near the screen that are not in memory yet, ascending:
// the rows in view and a screen's worth either side.
func (p *Timeline) Need() []int {
	if p.src.Complete() {
		return nil
	}
	from, to := p.list.Visible()
	from, to = max(from-p.list.height, 0), min(to+p.list.height, p.rows())
	var out []int
	for i := from; i < to; i++ {
		if _, ok := p.step(i); !ok {
			out = append(out, p.index(i))
		}
	}
	return out
}

// Around is the step indices the pane shows now, [from, to): what a holder
// of a window keeps when it trims.
func (p *Timeline) Around() (from, to int) {
	f, t := p.list.Visible()
	if p.rows() == 0 {
		return p.src.Len(), p.src.Len()
	}
	t = max(t, f+1)
	return p.index(min(f, p.rows()-1)), p.index(min(t, p.rows())-1) + 1
}

// Height is how many rows the pane shows at once.
func (p *Timeline) Height() int { return p.list.height }

// SetSize lays the pane out for w×h.
func (p *Timeline) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.list.SetHeight(max(h-2, 1))
}

// Focus is a no-op: the timeline has nothing to arm.
func (p *Timeline) Focus() {}

// Capturing reports whether the search is taking typed text.
func (p *Timeline) Capturing() bool { return p.search.Typing() || p.picker.on }

// Load shows another agent's steps, held whole: follow is on when the run is
// live.
func (p *Timeline) Load(runID, title string, steps []store.Step, live bool) {
	p.Show(runID, title, NewStepSlice(steps), live)
}

// Show shows another agent's steps: follow is on when the run is live.
func (p *Timeline) Show(runID, title string, src TimelineSteps, live bool) {
	p.bump()
	p.runID, p.title, p.src, p.follow, p.fresh, p.loading = runID, title, src, live, 0, false
	p.live = live
	p.list = List{height: p.list.height}
	p.facet, p.curFacet, p.cur, p.scan, p.live2 = "", "", newStepScan(0, nil, ""), nil, nil
	p.picker, p.unfilteredAt = facetPicker{}, -1
	p.search.Clear()
	p.list.SetLen(src.Len())
	if live {
		p.list.Bottom()
	}
}

// Loading marks the pane as waiting for an agent's steps.
func (p *Timeline) Loading(runID, title string) {
	p.bump()
	p.runID, p.title, p.src, p.loading = runID, title, NewStepSlice(nil), true
	p.facet, p.curFacet, p.cur, p.scan, p.live2 = "", "", newStepScan(0, nil, ""), nil, nil
	p.picker, p.unfilteredAt = facetPicker{}, -1
	p.list.SetLen(0)
}

// Grew takes the steps a refresh changed: fresh are steps from..from+
// len(fresh)-1, the last step again when it changed in place, then the new
// ones; had is how many steps there were before. Steps only ever grow at
// the end, so the cursor stays on its step; the work is O(len(fresh)),
// whatever the run's size.
func (p *Timeline) Grew(had, from int, fresh []store.Step) {
	p.bump()
	before := had
	if p.filtered() {
		before = len(p.cur.Kept)
	}
	for k, st := range fresh {
		p.cur.Add(from+k, st)
		if p.scan != nil {
			if p.liveMin < 0 {
				p.liveMin = from + k
			}
			p.live2.Add(from+k, st)
		}
	}
	p.search.hits = p.cur.HitRows
	if p.curFacet != "" {
		if _, ok := p.facetFunc(p.curFacet); !ok {
			p.facet = "" // no step has it any more
			p.rebuild(false)
		}
	}
	p.list.SetLen(p.rows())
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

// Selected is the step under the cursor: only its key (RowID, RunID,
// Number, Pending) while its row is not in memory.
func (p *Timeline) Selected() (store.Step, bool) {
	if p.list.Cursor < p.rows() {
		st, _ := p.step(p.list.Cursor)
		return st, true
	}
	return store.Step{}, false
}

// SelectedWhole is the step under the cursor when its row is in memory.
func (p *Timeline) SelectedWhole() (store.Step, bool) {
	if p.list.Cursor < p.rows() {
		return p.step(p.list.Cursor)
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
	p.bump()
	p.list.Bottom()
	p.afterMove()
}

// Paste adds to the search being typed.
func (p *Timeline) Paste(text string) Intent {
	p.bump()
	if !p.search.Paste(text) {
		return Intent{}
	}
	return p.rebuild(true)
}

// Key moves through the steps; f toggles follow, / searches, the step
// filter key cycles the filter.
func (p *Timeline) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km := p.env.Keys
	if p.picker.on {
		return p.pickerKey(msg) // timeline_picker.go
	}
	switch p.search.Key(msg, p.env) {
	case searchChanged:
		return p.rebuild(true)
	case searchMoved:
		if p.search.scanning {
			return redraw // the matches are still being found
		}
		return p.goToMatch(p.search.Dir(msg, p.env))
	case searchKept:
		if p.search.Query() == "" {
			p.dropQuery()
			if p.scan != nil && p.scan.query != "" {
				p.rebuild(false) // the filter alone, if one is asked for
			}
		}
		return redraw
	}
	if key.Matches(msg, km.StepFilter) {
		p.openPicker()
		return redraw
	}
	if key.Matches(msg, km.Back) && p.facet != "" {
		return p.setFacet("")
	}
	if key.Matches(msg, km.Follow) {
		p.follow, p.pausedRun = !p.follow, ""
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
	p.bump()
	if !p.list.SelectVisible(y - 1) { // the top border
		return Intent{}
	}
	p.afterMove()
	return p.selectIntent()
}

// Wheel moves the window by d rows; the step under the cursor is shown.
func (p *Timeline) Wheel(d int) Intent {
	p.bump()
	p.list.Scroll(d)
	p.afterMove()
	return p.selectIntent()
}

// View draws the pane; only the rows on screen are rendered (a row not read
// yet shows its number).
func (p *Timeline) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	var body []string
	p.memo.frame()
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		st, ok := p.step(i)
		if !ok {
			line := textfmt.PadLeft(fmt.Sprint(st.Number), 4) + " …"
			if i == p.list.Cursor {
				body = append(body, selectStyle(t, focused).Render(textfmt.Fit(line, inner)))
			} else {
				body = append(body, t.Muted.Render(line))
			}
			continue
		}
		body = append(body, p.search.Highlight(t, p.memoRow(t, st, i == p.list.Cursor, focused, inner)))
	}
	if p.picker.on {
		body = p.pickerView(t, focused, inner, h-2)
	}
	n := p.src.Len()
	switch {
	case p.picker.on:
	case p.loading:
		body = append(body, t.Muted.Render("  loading steps…"))
	case p.runID == "":
		body = append(body, t.Muted.Render("  select an agent to see its steps"))
	case n == 0 && p.live:
		body = append(body, t.Muted.Render("  no steps yet"))
	case n == 0:
		body = append(body, t.Muted.Render("  no steps: the run committed none"))
	case p.rows() == 0 && p.scan != nil:
		body = append(body, t.Muted.Render("  finding the steps…"))
	case p.rows() == 0:
		body = append(body, t.Muted.Render(fmt.Sprintf("  no step is %s (%s: every step)", p.curFacet, p.env.Keys.Back.Help().Key)))
	}
	// Notes, most important first: where the title leaves too little room,
	// the count goes before the follow mode does.
	var notes []string
	if n := p.search.Note(p.env, p.list.Cursor); n != "" {
		notes = append(notes, n)
	}
	switch {
	case p.scan != nil && p.facet != p.curFacet && p.facet != "":
		notes = append(notes, t.Warning.Render("finding "+p.facet+"…"))
	case p.scan != nil && p.facet != p.curFacet:
		notes = append(notes, t.Warning.Render("every step…"))
	case p.curFacet != "":
		notes = append(notes, t.Warning.Render("only "+p.curFacet))
	}
	if p.fresh > 0 {
		notes = append(notes, t.Warning.Render(fmt.Sprintf("%d new", p.fresh)))
	}
	if p.follow {
		notes = append(notes, "following")
	} else if p.paused() {
		notes = append(notes, t.Warning.Render(p.pausedNote()))
	}
	if n > 0 {
		// The steps are the shown agent's own, not its tree's.
		notes = append(notes, "agent: "+countNote(p.rows(), n, "step"))
	}
	title := "3 Timeline"
	if p.title != "" {
		title += " · " + p.title
	}
	// Short of room the count drops its scope word before the title is
	// cut for it, and before it drops.
	if n > 0 && textfmt.Width(title)+textfmt.Width(strings.Join(notes, " · "))+6 > w-2 {
		notes[len(notes)-1] = countNote(p.rows(), n, "step")
	}
	note := fitNote(title, w, notes)
	return t.FrameScroll(title, note, body, w, h, focused, ListScrollbar(&p.list, 0))
}

func (p *Timeline) row(t *Theme, st store.Step, selected, focused bool, w int) string {
	num := textfmt.PadLeft(fmt.Sprint(st.Number), 4)
	tokens := textfmt.PadLeft(stepTokens(st), 6)
	lat := textfmt.PadLeft(latency(st.Latency), 6)
	retry := ""
	if n := len(st.Retries); n > 0 && !st.Pending {
		retry = fmt.Sprintf(" ↩%d", n)
	}
	decision := sanitize.Line(st.Decision)
	tool := sanitize.Line(st.ToolCall)
	if st.Pending { // a placeholder: folded rows carry no call, a turn in flight its running one
		decision = "… " + decision
	}
	// The retry mark takes its room from the text, never from the columns
	// after it: tokens and latency stay in line in every row.
	textW := max(max(w-4-1-6-6-2-1, 8)-textfmt.Width(retry), 1)
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
