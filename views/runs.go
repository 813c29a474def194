package views

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// RunItem is one root run as the runs pane lists it, with its tree's
// totals: every count on the row is the whole tree's.
type RunItem struct {
	Run      store.Run
	State    store.State
	Agents   int             // runs in the tree, the root included
	Tree     runmodel.Counts // steps and tokens of the whole tree (unknown: shown as …)
	Duration time.Duration
	Waiting  int // requests waiting on a human anywhere in the tree
	// Store is the prefix of the store the run is in when several are
	// open ("" with one: no store column); StoreOffline says that store
	// cannot be read now (the row is as last read).
	Store        string
	StoreOffline bool
}

// SortKey orders the runs pane.
type SortKey int

const (
	SortNewest SortKey = iota
	SortOldest
	SortTokens
	SortSteps
	SortDuration
	SortState
	sortKeys
)

var sortNames = [...]string{"newest", "oldest", "tokens", "steps", "duration", "state"}

func (k SortKey) String() string { return sortNames[k] }

// Runs is the runs pane: every root run, filterable and sortable.
type Runs struct {
	revision // bumped by every change to what it draws (revision.go)

	env  *Env
	w, h int
	list List
	cols []column // the columns that fit, sized to the ids shown
	all  []RunItem
	// shown are the rows listed, as indexes into all: filtered and in the
	// pane's order. A copy of each item (a run and its tree's totals,
	// about 300 bytes) was 6 MB on 20 k roots, made again with every
	// refresh (once a second, for the clock) and grown by appending to it,
	// which was the 10 M-step store's peak (32 MB of copies while the
	// whole run list arrived); sorting moves indexes, not items.
	shown     []int32
	sort      SortKey
	filter    textinput.Model
	filtering bool
	selected  string // run id under the cursor, kept across refreshes
	reading   bool   // more runs are on their way (SetReading)
}

// NewRuns makes an empty runs pane.
func NewRuns(env *Env) *Runs {
	// The filter's prompt is the key that opens it.
	return &Runs{env: env, filter: newInput(env.Keys.Filter.Help().Key, "goal, outcome or status")}
}

// SetSize lays the pane out for w×h.
func (p *Runs) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.fit()
}

// fit derives the geometry from the size, the runs shown and whether the
// filter line is open.
func (p *Runs) fit() {
	inner := p.w - 2
	p.list.SetHeight(max(p.h-3-boolInt(p.filterLine()), 1)) // borders and the header row
	// With several stores the store column names the store and the id
	// column the store's own id; where the store column has no room, the
	// id says both ("#beta/4").
	p.cols = visibleColumns(p.withRunWidth(runColumns, true), inner)
	if !hasColumn(p.cols, "STORE") {
		p.cols = visibleColumns(p.withRunWidth(runColumns, false), inner)
	}
	p.filter.SetWidth(max(inner-4, 4))
}

// filterLine reports whether the last line shows the filter.
func (p *Runs) filterLine() bool { return p.filtering || p.filter.Value() != "" }

// Focus is a no-op: the runs pane has nothing to arm.
func (p *Runs) Focus() {}

// Capturing reports whether the filter is taking typed text.
func (p *Runs) Capturing() bool { return p.filtering }

// SetItems replaces the runs, keeping the cursor on the same run. The
// pane keeps items until the next SetItems, which may be handed the same
// array filled again (the explorer refills one every second).
func (p *Runs) SetItems(items []RunItem) {
	p.bump()
	p.all = items
	p.apply()
}

// ClockMoved says the clock moved the state or duration of items in
// place, in the array SetItems was handed (states: a state moved): the
// pane draws again, and filters and sorts again only where its order or
// filter reads what moved.
func (p *Runs) ClockMoved(states bool) {
	p.bump()
	if p.sort == SortDuration || (states && (p.sort == SortState || p.filter.Value() != "")) {
		p.apply()
	}
}

// SetReading says whether more runs are still being read (the first
// frame is drawn from the newest page): an empty list then says so, not
// that the store has none.
func (p *Runs) SetReading(v bool) {
	p.bump()
	p.reading = v
}

// Selected is the run under the cursor.
func (p *Runs) Selected() (RunItem, bool) {
	if p.list.Cursor < len(p.shown) {
		return *p.item(p.list.Cursor), true
	}
	return RunItem{}, false
}

// Sort is the current order.
func (p *Runs) Sort() SortKey { return p.sort }

// Filter is the current filter text.
func (p *Runs) Filter() string { return p.filter.Value() }

// item is the i-th row listed.
func (p *Runs) item(i int) *RunItem { return &p.all[p.shown[i]] }

func (p *Runs) apply() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	if cap(p.shown) < len(p.all) {
		p.shown = make([]int32, 0, len(p.all))
	}
	p.shown = p.shown[:0]
	for i := range p.all {
		if q == "" || matches(&p.all[i], q) {
			p.shown = append(p.shown, int32(i))
		}
	}
	sortRuns(p.all, p.shown, p.sort)
	p.list.SetLen(len(p.shown))
	p.fit()
	for i, k := range p.shown {
		if p.all[k].Run.ID == p.selected {
			p.list.Select(i)
			return
		}
	}
	p.remember()
}

func (p *Runs) remember() {
	if it, ok := p.Selected(); ok {
		p.selected = it.Run.ID
	}
}

func matches(it *RunItem, q string) bool {
	for _, f := range []string{it.Run.Goal, string(it.Run.Outcome), StateLabel(it.State, it.Run.Outcome), it.State.String(), "#" + it.Run.ID, it.Store} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

// sortRuns orders the rows (indexes into items) by k, ties newest first.
// The rows usually come in the default order already (the model lists
// roots newest first): one pass finds that and nothing is moved.
func sortRuns(items []RunItem, rows []int32, k SortKey) {
	// Age: start time where both have one, else the id (numeric ids grow).
	// A run with no start time counts as oldest, so the order is total.
	newer := func(a, b *store.Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		if c := cmp.Compare(store.IDNumber(b.ID), store.IDNumber(a.ID)); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	}
	first := func(a, b *RunItem) int {
		switch k {
		case SortOldest:
			return newer(&b.Run, &a.Run)
		case SortTokens:
			return cmp.Compare(b.Tree.Tokens, a.Tree.Tokens)
		case SortSteps:
			return cmp.Compare(b.Tree.Steps, a.Tree.Steps)
		case SortDuration:
			return cmp.Compare(b.Duration, a.Duration)
		case SortState:
			return cmp.Compare(a.State, b.State)
		}
		return 0
	}
	order := func(i, j int32) int {
		a, b := &items[i], &items[j]
		if c := first(a, b); c != 0 {
			return c
		}
		return newer(&a.Run, &b.Run)
	}
	if !slices.IsSortedFunc(rows, order) {
		slices.SortStableFunc(rows, order)
	}
}

// Paste adds to the filter being typed.
func (p *Runs) Paste(text string) Intent {
	p.bump()
	if !p.filtering {
		return Intent{}
	}
	feed(&p.filter, tea.PasteMsg{Content: text})
	p.apply()
	return redraw
}

// Key handles a key; it returns OpenRun when a run is chosen.
func (p *Runs) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km := p.env.Keys
	if p.filtering {
		switch {
		case key.Matches(msg, km.Dismiss):
			p.filtering = false
			p.filter.SetValue("")
			p.filter.Blur()
		case key.Matches(msg, km.Submit):
			p.filtering = false
			p.filter.Blur()
		default:
			feed(&p.filter, msg)
		}
		p.apply()
		return redraw
	}
	switch {
	case key.Matches(msg, km.Filter):
		p.filtering = true
		p.filter.Focus()
		p.fit()
		return redraw
	case key.Matches(msg, km.Sort):
		p.sort = (p.sort + 1) % sortKeys
		p.apply()
		return redraw
	case key.Matches(msg, km.Back) && p.filter.Value() != "":
		p.filter.SetValue("")
		p.apply()
		return redraw
	case key.Matches(msg, km.Open):
		if it, ok := p.Selected(); ok {
			return Intent{Kind: OpenRun, ID: it.Run.ID}
		}
		return Intent{}
	}
	if moveList(&p.list, msg, km) {
		p.remember()
		return redraw
	}
	return Intent{}
}

// Click opens the run clicked.
func (p *Runs) Click(x, y int) Intent {
	p.bump()
	if !p.list.SelectVisible(y - 2) { // the top border and the header row
		return Intent{}
	}
	p.remember()
	it, _ := p.Selected()
	return Intent{Kind: OpenRun, ID: it.Run.ID}
}

// Wheel moves the window by d rows.
func (p *Runs) Wheel(d int) Intent {
	p.bump()
	p.list.Scroll(d)
	p.remember()
	return redraw
}

type column struct {
	title string
	width int
	right bool
	minW  int  // the pane width from which the column is shown
	tree  bool // a count over the run's whole tree
}

var runColumns = []column{
	{"", 2, false, 0, false},
	{"STATE", 12, false, 0, false},
	{"RUN", 5, false, 0, false},
	{"STORE", 5, false, 0, false},
	{"GOAL", 0, false, 0, false},
	{"AGENTS", 6, true, 0, true},
	{"STEPS", 6, true, 0, true},
	{"TOKENS", 7, true, 0, true},
	{"STARTED", 9, true, 0, false},
	{"TIME", 7, true, 0, false},
}

// runColumnPriority is the order in which the optional columns are given
// room as the pane widens: the glyph, the id and the goal always show (the
// glyph says the state in one cell); then the store a run is in (only
// with several stores open; without room for it the id names it,
// "#beta/4"), what a run cost, the state in words with the requests waiting in its tree, how long it ran
// and when it started, and the tree's agent count.
var runColumnPriority = []string{"STORE", "TOKENS", "STEPS", "STATE", "TIME", "STARTED", "AGENTS"}

// minGoal is the goal's width an optional column may not squeeze below:
// half the pane up to 22 cells; 10 in a narrow pane, beside the tokens.
func minGoal(w int) int {
	if w < 40 {
		return 10
	}
	return clamp(w/2, 10, 22)
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// View draws the pane.
func (p *Runs) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	now := p.env.Now()
	body := []string{t.Muted.Render(header(p.cols))}
	from, to := p.list.Visible()
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	for i := from; i < to; i++ {
		body = append(body, highlight(t, p.row(t, *p.item(i), p.cols, i == p.list.Cursor, focused, now, inner), q))
	}
	if len(p.shown) == 0 {
		msg := "no runs in this store yet"
		switch {
		case p.filter.Value() != "":
			msg = "no run matches the filter"
		case p.reading:
			msg = "reading the runs…" // the newest page held no whole tree
		}
		body = append(body, t.Muted.Render("  "+msg))
	}
	for len(body) < h-2-boolInt(p.filterLine()) {
		body = append(body, "")
	}
	if p.filtering {
		body = append(body, inputView(p.filter, t))
	} else if p.filter.Value() != "" {
		clears := "  (" + p.env.Keys.Back.Help().Key + " clears)"
		body = append(body, t.Muted.Render("filter: ")+t.Text.Render(sanitize.Line(p.filter.Value()))+t.Muted.Render(clears))
	}
	note := countNote(len(p.shown), len(p.all), "run")
	if p.sort != SortNewest {
		note += " · " + p.sort.String()
	}
	return t.FrameScroll("1 Runs", note, body, w, h, focused, ListScrollbar(&p.list, 1))
}

func countNote(shown, all int, noun string) string {
	plural := noun + "s"
	if all == 1 {
		plural = noun
	}
	if shown == all {
		return textfmt.Thousands(int64(all)) + " " + plural
	}
	return textfmt.Thousands(int64(shown)) + " of " + textfmt.Thousands(int64(all))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// offlineMark starts the store cell of a store that cannot be read now.
const offlineMark = "✕ "

// withRunWidth sizes the RUN column to the ids shown (numbers are short;
// other formats' ids are shortened by store.DisplayID), and the STORE
// column to the stores' prefixes, or drops it when one store is open.
// runWidthMax is the widest the RUN column gets.
const runWidthMax = 15

// displayIDWidth is the width of store.DisplayID(id), found without making
// it: the runs list sizes its RUN column from every run on each change.
func displayIDWidth(id string) int {
	head, tail, cut := store.DisplayIDParts(id)
	if !cut {
		return textfmt.Width(id)
	}
	return textfmt.Width(head) + textfmt.Width("…") + textfmt.Width(tail)
}

func (p *Runs) withRunWidth(cols []column, withStore bool) []column {
	w, sw := 4, 0
	for _, k := range p.shown {
		it := &p.all[k]
		w = max(w, displayIDWidth(runID(it, withStore))+1)
		if it.Store != "" {
			sw = max(sw, textfmt.Width(it.Store)+textfmt.Width(offlineMark), 5)
		}
	}
	out := make([]column, 0, len(cols))
	for _, c := range cols {
		switch c.title {
		case "RUN":
			c.width = min(w, runWidthMax)
		case "STORE":
			if sw == 0 || !withStore {
				continue
			}
			c.width = min(sw, 16)
		}
		out = append(out, c)
	}
	return out
}

// visibleColumns keeps the columns that fit, in the order of
// runColumnPriority, while the goal keeps minGoal cells, and gives the rest
// to the goal (the flexible column, width 0). Columns keep their places.
func visibleColumns(all []column, w int) []column {
	used := 0
	for _, c := range all {
		if c.width > 0 && !optionalColumn(c.title) {
			used += c.width + 1
		}
	}
	used += 1 // the goal's separator
	take := map[string]bool{}
	for _, title := range runColumnPriority {
		for _, c := range all {
			if c.title == title {
				if w-used-(c.width+1) < minGoal(w) {
					goto chosen
				}
				used += c.width + 1
				take[title] = true
			}
		}
	}
chosen:
	var cols []column
	for _, c := range all {
		if !optionalColumn(c.title) || take[c.title] {
			if c.width == 0 {
				c.width = max(w-used, 8)
			}
			cols = append(cols, c)
		}
	}
	return cols
}

func optionalColumn(title string) bool {
	for _, t := range runColumnPriority {
		if t == title {
			return true
		}
	}
	return false
}

// header is the column titles; the tree-scoped counts are marked as such
// by one tag in front of the first of them.
func header(cols []column) string {
	var b strings.Builder
	scoped := -1
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		if c.tree && scoped < 0 {
			scoped = textfmt.Width(b.String())
		}
		if c.right {
			b.WriteString(textfmt.PadLeft(c.title, c.width))
		} else {
			b.WriteString(textfmt.PadRight(c.title, c.width))
		}
	}
	if scoped < 0 {
		return b.String()
	}
	return scopeTag(b.String(), scoped, TreeScope)
}

func (p *Runs) row(t *Theme, it RunItem, cols []column, selected, focused bool, now time.Time, w int) string {
	stStyle := t.StateStyle(it.State, it.Run.Outcome)
	storeShown := hasColumn(cols, "STORE")
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		var cell string
		style := t.Text
		switch c.title {
		case "":
			cell, style = StateGlyph(it.State, it.Run.Outcome), stStyle
		case "STATE":
			label := StateLabel(it.State, it.Run.Outcome)
			if it.Waiting > 0 {
				label += fmt.Sprintf(" ◆%d", it.Waiting)
			}
			cell, style = label, stStyle
		case "RUN":
			cell, style = "#"+sanitize.Line(store.DisplayID(runID(&it, storeShown))), t.Muted
		case "STORE":
			cell, style = sanitize.Line(it.Store), t.Muted
			if it.StoreOffline {
				cell, style = offlineMark+cell, t.Bad
			}
		case "GOAL":
			cell = sanitize.Line(it.Run.Goal)
		case "AGENTS":
			cell = textfmt.Thousands(int64(it.Agents))
		case "STEPS":
			cell = unknown(it.Tree.Known, textfmt.Thousands(int64(it.Tree.Steps)))
		case "TOKENS":
			cell = unknown(it.Tree.Known, textfmt.TokensPart(it.Tree.Tokens, it.Tree.Unreported, c.width))
		case "STARTED":
			cell, style = textfmt.Ago(it.Run.StartedAt, now), t.Muted
		case "TIME":
			cell, style = "-", t.Muted
			if it.Duration > 0 {
				cell = textfmt.Duration(it.Duration)
			}
		}
		if c.right {
			cell = textfmt.PadLeft(cell, c.width)
		} else {
			cell = textfmt.PadRight(cell, c.width)
		}
		if !selected {
			cell = style.Render(cell)
		}
		b.WriteString(cell)
	}
	line := b.String()
	if selected {
		return selectStyle(t, focused).Render(textfmt.Fit(line, w))
	}
	return line
}

func selectStyle(t *Theme, focused bool) interface{ Render(...string) string } {
	if focused {
		return t.Selected
	}
	return t.SelectedBlur
}

func unknown(known bool, s string) string {
	if !known {
		return "…"
	}
	return s
}

// runID is the id the RUN column shows: the store's own id when the store
// column names the store.
func runID(it *RunItem, storeShown bool) string {
	if storeShown && it.Store != "" {
		return strings.TrimPrefix(it.Run.ID, it.Store+"/")
	}
	return it.Run.ID
}

func hasColumn(cols []column, title string) bool {
	for _, c := range cols {
		if c.title == title {
			return true
		}
	}
	return false
}
