package views

import (
	"fmt"
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// Drift is the context-drift pane: per turn, the assembler's estimate beside
// the provider's count, as numbers and bars.
type Drift struct {
	revision // bumped by every change to what it draws (revision.go)

	env     *Env
	w, h    int
	list    List
	samples DriftSamples
	title   string
	stick   bool // keep the newest turn in view as turns arrive
	// prefix sums the samples that can no longer change (all but the last
	// few, which a late provider count may still fill in), so a refresh
	// costs O(new samples), not O(turns).
	prefix    runmodel.DriftStats
	prefixLen int
	stats     runmodel.DriftStats
	search    Search
}

// driftTail is how many of the newest samples may still change in place.
const driftTail = 16

// NewDrift makes an empty drift pane.
func NewDrift(env *Env) *Drift {
	return &Drift{env: env, stick: true, search: newSearch(env), samples: SampleSlice(nil)}
}

// DriftSamples is an agent's context samples as the drift pane reads them,
// however the holder keeps them (a run of a million turns keeps them packed).
type DriftSamples interface {
	Len() int
	At(i int) store.ContextSample
}

// SampleSlice is samples held as they were read.
type SampleSlice []store.ContextSample

func (s SampleSlice) Len() int                     { return len(s) }
func (s SampleSlice) At(i int) store.ContextSample { return s[i] }

// rowText is a turn's row as the search reads it.
func (p *Drift) rowText(i int) string {
	return ansi.Strip(p.row(p.env.Theme, p.samples.At(i), max(p.stats.MaxEst, p.stats.MaxReported, 1), false, max(p.w-2, 1)))
}

// driftHead is the lines above the turns: the sums, the sparkline and the
// column header.
const driftHead = 3

// SetSize lays the pane out for w×h.
func (p *Drift) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.list.SetHeight(max(h-2-driftHead, 1))
}

// Focus is a no-op: the drift pane has nothing to arm.
func (p *Drift) Focus() {}

// Capturing reports whether the search is taking typed text.
func (p *Drift) Capturing() bool { return p.search.Typing() }

// Set shows an agent's samples.
func (p *Drift) Set(title string, samples []store.ContextSample) {
	p.bump()
	p.SetSamples(title, SampleSlice(samples))
}

// SetSamples shows an agent's samples, however they are held.
func (p *Drift) SetSamples(title string, samples DriftSamples) {
	p.bump()
	changedAgent := title != p.title
	n := samples.Len()
	p.title, p.samples = title, samples
	p.list.SetLen(n)
	if changedAgent || n < p.prefixLen {
		p.stick = true
		p.prefix, p.prefixLen = runmodel.DriftStats{}, 0
	}
	add := func(s *runmodel.DriftStats, from, to int) {
		for i := from; i < to; i++ {
			one := [1]store.ContextSample{samples.At(i)}
			s.Add(one[:])
		}
	}
	if end := n - driftTail; end > p.prefixLen {
		add(&p.prefix, p.prefixLen, end)
		p.prefixLen = end
	}
	all := p.prefix
	add(&all, p.prefixLen, n)
	p.stats = all.Finish()
	p.search.Index(n, p.rowText)
	if p.stick {
		p.list.Bottom()
	}
}

// Selected is the turn under the cursor.
func (p *Drift) Selected() (store.ContextSample, bool) {
	if p.list.Cursor < p.samples.Len() {
		return p.samples.At(p.list.Cursor), true
	}
	return store.ContextSample{}, false
}

// Key moves through the turns.
func (p *Drift) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	dir := 0
	switch p.search.Key(msg, p.env) {
	case searchKept:
		return redraw
	case searchMoved:
		dir = p.search.Dir(msg, p.env)
		fallthrough
	case searchChanged:
		return p.toMatch(dir)
	}
	if !moveList(&p.list, msg, p.env.Keys) {
		return Intent{}
	}
	p.stick = p.list.AtBottom()
	return redraw
}

// toMatch moves to the match dir away (0: the first from the cursor).
func (p *Drift) toMatch(dir int) Intent {
	p.search.Index(p.samples.Len(), p.rowText)
	if i, ok := p.search.Target(p.list.Cursor, dir); ok {
		p.list.Select(i)
	}
	p.stick = p.list.AtBottom()
	return redraw
}

// Paste adds to the search being typed.
func (p *Drift) Paste(text string) Intent {
	p.bump()
	if !p.search.Paste(text) {
		return Intent{}
	}
	return p.toMatch(0)
}

// Click selects the turn clicked.
func (p *Drift) Click(x, y int) Intent {
	p.bump()
	if p.samples.Len() == 0 || !p.list.SelectVisible(y-1-driftHead) { // the top border and the head
		return Intent{}
	}
	p.stick = p.list.AtBottom()
	return redraw
}

// Wheel moves the window by d rows.
func (p *Drift) Wheel(d int) Intent {
	p.bump()
	p.list.Scroll(d)
	p.stick = p.list.AtBottom()
	return redraw
}

// View draws the pane.
func (p *Drift) View(focused bool) string {
	t, w, h := p.env.Theme, p.w, p.h
	inner := w - 2
	st := p.stats
	var body []string
	title := "5 Drift"
	if p.title != "" {
		title += " · " + p.title
	}
	if p.samples.Len() == 0 {
		body = append(body, t.Muted.Render("  no context samples for this agent"))
		return t.Frame(title, "", body, w, h, focused)
	}
	summary := fmt.Sprintf("Σ est %s · Σ reported %s", textfmt.Tokens(st.SumEst), textfmt.Tokens(st.SumReported))
	if st.HasReported {
		summary += " · cumulative " + t.driftStyle(st.Cumulative).Render(textfmt.Percent(st.Cumulative)) +
			t.Text.Render(fmt.Sprintf(" · mean |gap| %s", textfmt.Tokens(int64(st.MeanAbsGap))))
	}
	body = append(body, t.Text.Render(summary))
	body = append(body, t.Muted.Render("drift ")+p.sparkline(t, inner-6))
	body = append(body, t.Muted.Render(driftHeader(inner)))
	scale := max(st.MaxEst, st.MaxReported, 1)
	from, to := p.list.Visible()
	for i := from; i < to; i++ {
		body = append(body, p.search.Highlight(t, p.row(t, p.samples.At(i), scale, i == p.list.Cursor && focused, inner)))
	}
	note := countNote(st.Turns, st.Turns, "turn")
	if st.Missing > 0 {
		note += " · " + t.Warning.Render(fmt.Sprintf("%d missing", st.Missing))
	}
	if s := p.search.Note(p.env, p.list.Cursor); s != "" {
		note = fitNote(title, w, []string{s, note})
	}
	return t.FrameScroll(title, note, body, w, h, focused, ListScrollbar(&p.list, driftHead))
}

const driftCols = "TURN  ESTIMATE  REPORTED     GAP   DRIFT "

func driftHeader(w int) string {
	return textfmt.Fit(driftCols+"█ both  ▓ reported above estimate  ░ estimate above reported", w)
}

func (p *Drift) row(t *Theme, c store.ContextSample, scale int64, selected bool, w int) string {
	barW := max(w-len(driftCols), 4)
	turn := textfmt.PadLeft(fmt.Sprint(c.Step), 4)
	est := textfmt.PadLeft(textfmt.Tokens(c.Estimated), 8)
	if c.NoEstimate {
		// Only the provider's count: nothing to compare it with.
		est = textfmt.PadLeft("–", 8)
		rep := "missing"
		if c.Reported != nil {
			rep = textfmt.Tokens(*c.Reported)
		}
		var b int
		if c.Reported != nil {
			b = bar(*c.Reported, scale, barW)
		}
		line := turn + "  " + est + "  " + textfmt.PadLeft(rep, 8) + "  " + textfmt.PadLeft("–", 6) + "  " + textfmt.PadLeft("–", 6) + " "
		if selected {
			return t.Selected.Render(textfmt.Fit(line+strings.Repeat("█", b), w))
		}
		return t.Muted.Render(line) + t.Reported.Render(strings.Repeat("█", b))
	}
	if c.Reported == nil {
		line := turn + "  " + est + "  " + textfmt.PadLeft("missing", 8) + "  " + textfmt.PadLeft("–", 6) + "  " + textfmt.PadLeft("–", 6) + " " +
			strings.Repeat("░", bar(c.Estimated, scale, barW))
		if selected {
			return t.Selected.Render(textfmt.Fit(line, w))
		}
		return t.Muted.Render(turn+"  "+est+"  ") + t.Warning.Render(textfmt.PadLeft("missing", 8)) +
			t.Muted.Render("  "+textfmt.PadLeft("–", 6)+"  "+textfmt.PadLeft("–", 6)+" ") + t.Estimate.Render(strings.Repeat("░", bar(c.Estimated, scale, barW)))
	}
	r := *c.Reported
	gap := r - c.Estimated
	drift := 0.0
	if r != 0 {
		drift = float64(gap) / float64(r)
	}
	gapS := textfmt.Tokens(gap)
	if gap > 0 {
		gapS = "+" + gapS
	}
	nums := turn + "  " + est + "  " + textfmt.PadLeft(textfmt.Tokens(r), 8) + "  " + textfmt.PadLeft(gapS, 6) + "  " + textfmt.PadLeft(textfmt.Percent(drift), 6) + " "
	eb, rb := bar(c.Estimated, scale, barW), bar(r, scale, barW)
	both := strings.Repeat("█", min(eb, rb))
	under := strings.Repeat("▓", max(rb-eb, 0)) // the provider counted more than estimated
	over := strings.Repeat("░", max(eb-rb, 0))  // the estimate overshot
	if selected {
		return t.Selected.Render(textfmt.Fit(nums+both+under+over, w))
	}
	return t.Muted.Render(turn) + "  " + t.Estimate.Render(est) + "  " + t.Reported.Render(textfmt.PadLeft(textfmt.Tokens(r), 8)) + "  " +
		t.driftStyle(drift).Render(textfmt.PadLeft(gapS, 6)+"  "+textfmt.PadLeft(textfmt.Percent(drift), 6)) + " " +
		t.Reported.Render(both) + t.driftStyle(drift).Render(under) + t.Estimate.Render(over)
}

func bar(v, scale int64, w int) int {
	if v <= 0 {
		return 0
	}
	return max(int(math.Round(float64(v)/float64(scale)*float64(w))), 1)
}

// sparkline draws each turn's drift as a block from ▁ (none) to █ (the
// largest), the last w turns; a missing turn is a gap.
func (p *Drift) sparkline(t *Theme, w int) string {
	blocks := []rune("▁▂▃▄▅▆▇█")
	n := p.samples.Len()
	samples := make([]store.ContextSample, 0, min(n, max(w, 0)))
	for i := max(n-w, 0); i < n; i++ {
		samples = append(samples, p.samples.At(i))
	}
	var peak float64
	vals := make([]float64, len(samples))
	for i, c := range samples {
		if c.Reported == nil || *c.Reported == 0 || c.NoEstimate {
			vals[i] = math.NaN()
			continue
		}
		vals[i] = math.Abs(float64(*c.Reported-c.Estimated) / float64(*c.Reported))
		peak = math.Max(peak, vals[i])
	}
	var b strings.Builder
	for _, v := range vals {
		if math.IsNaN(v) {
			b.WriteString(t.Warning.Render("·"))
			continue
		}
		i := 0
		if peak > 0 {
			i = int(math.Round(v / peak * float64(len(blocks)-1)))
		}
		b.WriteString(t.driftStyle(v).Render(string(blocks[i])))
	}
	return b.String()
}

// driftStyle colours a drift by how far off the estimate was.
func (t *Theme) driftStyle(d float64) interface{ Render(...string) string } {
	switch a := math.Abs(d); {
	case a >= 0.25:
		return t.Bad
	case a >= 0.10:
		return t.Stale
	}
	return t.Good
}
