package views

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// RunSummary is what the summary overlay shows about one run: the run
// model's view of it (state, lease, counts, timings) and what the store
// records beyond its steps.
type RunSummary struct {
	Run         store.Run
	State       store.State
	Liveness    store.Liveness
	Lease       *store.Lease
	LeaseHeldBy string // the run whose lease drives it (itself or an ancestor)
	Own, Tree   runmodel.Counts
	Agents      int // runs in its tree
	Elapsed     time.Duration
	HasElapsed  bool
	Calls       []store.ProviderCall // every provider attempt of the run
	Requests    []store.Request      // the run's own requests, decided ones too
	// Facts is what the store records beyond steps; nil when the format
	// has no reader for them (then every one is not recorded).
	Facts *store.RunFacts
}

// Summary is the run summary overlay: everything about one run that is
// not a step, laid out for the box and scrollable.
type Summary struct {
	revision // bumped by every change to what it draws (revision.go)

	env        *Env
	w, h       int // the room the overlay may take
	boxW, boxH int
	s          *RunSummary
	id         string // the run asked for
	loading    bool
	err        string
	lines      []styledLine
	offset     int
}

// NewSummary makes an empty summary overlay.
func NewSummary(env *Env) *Summary { return &Summary{env: env} }

// SetSize gives the overlay the room it may take (the screen less the
// status bar); it lays out again for a new width.
func (p *Summary) SetSize(w, h int) {
	p.bump()
	p.w, p.h = w, h
	p.boxW, p.boxH = min(max(w-4, 20), 112), max(h-2, 4)
	p.layout()
}

// Size is the overlay's box, borders included.
func (p *Summary) Size() (w, h int) { return p.boxW, p.boxH }

func (p *Summary) height() int { return max(p.boxH-2, 1) }

func (p *Summary) layout() {
	p.lines = nil
	if p.s != nil && p.boxW > 4 {
		p.lines = summaryLines(p.s, p.env.Now(), p.boxW-4)
	}
	p.offset = max(0, min(p.offset, len(p.lines)-p.height()))
}

// Want shows that the summary of a run is on its way; a new run starts at
// the top.
func (p *Summary) Want(id string) {
	p.bump()
	if id != p.id {
		p.offset = 0
		p.s = nil
	}
	p.id, p.loading, p.err = id, true, ""
	p.layout()
}

// RunID is the run shown or asked for.
func (p *Summary) RunID() string { return p.id }

// Set shows a run's summary, keeping the scroll when it is the same run.
func (p *Summary) Set(s *RunSummary) {
	p.bump()
	if s != nil && s.Run.ID != p.id {
		p.offset = 0
		p.id = s.Run.ID
	}
	p.s, p.loading, p.err = s, false, ""
	p.layout()
}

// Fail shows why the summary could not be read.
func (p *Summary) Fail(msg string) {
	p.bump()
	p.loading, p.err = false, msg
}

// Focus is a no-op.
func (p *Summary) Focus() {}

// Capturing is false: the overlay takes no typed text.
func (p *Summary) Capturing() bool { return false }

// Paste does nothing: the overlay has no text field.
func (p *Summary) Paste(string) Intent { return Intent{} }

// Key scrolls; it reports NoIntent for keys it has no use for.
func (p *Summary) Key(msg tea.KeyPressMsg) Intent {
	p.bump()
	km := p.env.Keys
	if !scrollText(km, msg, &p.offset, len(p.lines), p.height()) {
		return Intent{}
	}
	return redraw
}

// Click does nothing.
func (p *Summary) Click(x, y int) Intent { return Intent{} }

// Wheel scrolls by d lines.
func (p *Summary) Wheel(d int) Intent {
	p.bump()
	p.scroll(d)
	return redraw
}

func (p *Summary) scroll(d int) {
	p.offset = scrolledBy(p.offset, d, len(p.lines), p.height())
}

// View draws the overlay at its box size.
func (p *Summary) View(bool) string {
	t := p.env.Theme
	height := p.height()
	var body []string
	title := "Run summary"
	switch {
	case p.err != "":
		body = []string{t.Bad.Render(" " + sanitize.Line(p.err))}
	case p.s == nil:
		body = []string{t.Muted.Render(" loading…")}
	default:
		title = "Run #" + store.DisplayID(p.s.Run.ID) + " · summary"
		end := min(p.offset+height, len(p.lines))
		for _, l := range renderLines(t, p.lines[p.offset:end]) {
			body = append(body, " "+l)
		}
	}
	km := p.env.Keys
	note := fmt.Sprintf("%s/%s/%s close", km.Summary.Help().Key, km.Quit.Help().Key, km.Back.Help().Key)
	if len(p.lines) > height {
		note = fmt.Sprintf("%d–%d of %d · %s", p.offset+1, min(p.offset+height, len(p.lines)), len(p.lines), note)
	}
	sb := Scrollbar{Rows: height, From: p.offset, To: min(p.offset+height, len(p.lines)), Total: len(p.lines)}
	return t.FrameScroll(title, note, body, p.boxW, p.boxH, true, sb)
}

// summaryLines lays a run's summary out for a width.
func summaryLines(s *RunSummary, now time.Time, w int) []styledLine {
	var out []styledLine
	r := s.Run
	add := func(ro role, text string) {
		for _, l := range wrap(text, w) {
			out = append(out, one(ro, l))
		}
	}
	const labelW = 11
	field := func(label, value string) {
		lines := wrap(sanitize.Text(value), max(w-labelW, 8))
		for i, l := range lines {
			lab := ""
			if i == 0 {
				lab = label
			}
			out = append(out, styledLine{{roleMuted, textfmt.PadRight(lab, labelW)}, {roleText, l}})
		}
	}
	missing := func() { out = append(out, one(roleFaint, store.NotRecorded)) }
	section := func(name string) {
		label := "── " + name + " "
		out = append(out, one(plain, ""), styledLine{{roleHeading, label}, {roleFaint, strings.Repeat("─", max(w-textfmt.Width(label), 0))}})
	}
	has := func(f store.Fact) bool { return s.Facts != nil && s.Facts.Recorded.Has(f) }

	for _, l := range wrap(sanitize.Text("#"+store.DisplayID(r.ID)+" "+r.Goal), w) {
		out = append(out, one(roleBold, l))
	}
	state := StateLabel(s.State, r.Outcome)
	if r.Status != "" {
		state += " · status " + string(r.Status)
	}
	if r.Outcome != "" {
		state += " · outcome " + string(r.Outcome)
	}
	field("state", state)
	if r.ParentID != "" {
		field("parent", fmt.Sprintf("#%s (depth %d)", store.DisplayID(r.ParentID), r.Depth))
	}
	field("workspace", orDash(r.Workspace))
	if r.Provider != "" {
		field("provider", r.Provider)
	}
	if r.TurnKind != "" {
		field("turn", r.TurnKind)
	}
	started := "not recorded"
	if !r.StartedAt.IsZero() {
		started = textfmt.Ago(r.StartedAt, now)
	}
	if s.HasElapsed {
		if r.Ended() {
			started += " · took " + textfmt.Duration(s.Elapsed)
		} else {
			started += " · running for " + textfmt.Duration(s.Elapsed)
		}
	}
	field("started", started)
	if sum := r.Summary; sum != nil && !sum.FinishedAt.IsZero() {
		ok := "did not succeed"
		if sum.Success {
			ok = "succeeded"
		}
		field("finished", textfmt.Ago(sum.FinishedAt, now)+" · "+ok)
	}
	field("lease", leaseText(s, now))
	if r.Recovery != nil {
		field("recovery", fmt.Sprintf("%s at step %d, started %s: the driver died inside it; a resume waits for retry, completed or abort",
			r.Recovery.Tool, r.Recovery.Step, textfmt.Ago(r.Recovery.StartedAt, now)))
	}
	counts := "agent: " + countsText(s.Own)
	if s.Agents > 1 {
		counts += fmt.Sprintf(" · tree: %d agents, %s", s.Agents, countsText(s.Tree))
	}
	field("counts", counts)
	if s.Facts != nil && (has(store.FactCheckpoints) || has(store.FactGates)) {
		var parts []string
		if has(store.FactCheckpoints) {
			parts = append(parts, plural(s.Facts.Checkpoints, "checkpoint"), plural(s.Facts.Resumes(), "resume"))
		}
		if has(store.FactGates) {
			n := 0
			for _, g := range s.Facts.GateFailures {
				n += g.Count
			}
			parts = append(parts, plural(n, "gate failure"))
		}
		field("history", strings.Join(parts, " · "))
	}

	// Tokens: the provider's own counts, summed over every attempt.
	u := store.SumUsage(s.Calls)
	section(fmt.Sprintf("Tokens · %s, %d failed, %d reported", plural(u.Calls, "provider call"), u.Failed, u.Reported))
	switch {
	case u.Calls == 0:
		out = append(out, one(roleFaint, "no provider calls recorded"))
	default:
		out = append(out, usageLines(u, w)...)
	}

	section("Checkpoints and resumes")
	if !has(store.FactCheckpoints) {
		missing()
	} else {
		add(roleText, fmt.Sprintf("%s taken · %s", plural(s.Facts.Checkpoints, "checkpoint"), plural(s.Facts.Resumes(), "resume")))
		for _, m := range s.Facts.Markers {
			line := fmt.Sprintf("%s at step %d", m.Kind, m.Step)
			if m.Detail != "" {
				line += ": " + m.Detail
			}
			add(roleMuted, sanitize.Line(line))
		}
	}

	section("Gates")
	switch {
	case !has(store.FactGates) && !has(store.FactGateAttempts):
		missing()
	default:
		if has(store.FactGates) {
			if len(s.Facts.GateFailures) == 0 {
				add(roleText, "no gate failures")
			} else {
				var parts []string
				for _, g := range s.Facts.GateFailures {
					parts = append(parts, fmt.Sprintf("%s ×%d", g.Key, g.Count))
				}
				add(roleBad, sanitize.Line("failures by phase: "+strings.Join(parts, ", ")))
			}
		}
		if has(store.FactGateAttempts) {
			for _, g := range s.Facts.GateAttempts {
				ro := roleText
				switch g.Outcome {
				case store.GateFailed:
					ro = roleBad
				case store.GateErrored:
					ro = roleStale
				case store.GatePassed:
					ro = roleGood
				}
				line := fmt.Sprintf("step %d %s %s", g.Step, g.Phase, g.Outcome)
				if g.Detail != "" {
					line += ": " + g.Detail
				}
				add(ro, textfmt.Cut(sanitize.Line(line), w))
			}
			if len(s.Facts.GateAttempts) == 0 {
				add(roleMuted, "no gate attempts")
			}
		}
	}

	section(fmt.Sprintf("Requests · %d", len(s.Requests)))
	if len(s.Requests) == 0 {
		add(roleMuted, "none asked")
	}
	for _, q := range s.Requests {
		ro, status := roleWaiting(q), "open"
		if q.Resolved {
			status = "decided: " + orDash(q.Decision)
			if q.DecidedBy != "" {
				status += " by " + q.DecidedBy
			}
		} else if q.Standing == store.StandingOrphaned {
			status = "orphaned"
		}
		line := fmt.Sprintf("%s:%s %s (step %d) · %s", q.Kind, q.ID, requestWhat(q), q.Step, status)
		add(ro, textfmt.Cut(sanitize.Line(line), w))
	}

	section("Memory")
	if !has(store.FactMemory) {
		missing()
	} else {
		if len(s.Facts.Memory) == 0 {
			add(roleMuted, "wrote no memory")
		}
		for _, m := range s.Facts.Memory {
			line := fmt.Sprintf("%s = %s (%s, step %d)", m.Key, m.Value, m.Kind, m.Step)
			if m.Pinned {
				line += " · pinned"
			}
			add(roleText, textfmt.Cut(sanitize.Line(line), w))
		}
		if len(s.Facts.Recalled) > 0 {
			add(roleMuted, textfmt.Cut(sanitize.Line("recalled: "+strings.Join(s.Facts.Recalled, ", ")), w))
		}
	}

	section("Context events")
	if !has(store.FactContextEvents) {
		missing()
	} else {
		if len(s.Facts.ContextEvents) == 0 {
			add(roleMuted, "none besides the per-turn sizes")
		}
		for _, e := range s.Facts.ContextEvents {
			add(roleText, textfmt.Cut(sanitize.Line(fmt.Sprintf("step %d %s %s", e.Step, e.Kind, e.Detail)), w))
		}
	}

	section("Provider tools and citations")
	if !has(store.FactServerTools) && !has(store.FactCitations) {
		missing()
	} else {
		out = append(out, providerToolLines(s.Facts.ServerTools, s.Facts.Citations, has(store.FactServerTools), has(store.FactCitations), w)...)
	}

	section("Folds")
	if !has(store.FactFolds) {
		missing()
	} else {
		if len(s.Facts.Folds) == 0 {
			add(roleMuted, "no compaction summaries")
		}
		for _, f := range s.Facts.Folds {
			add(roleText, fmt.Sprintf("step %d: %s folded into ~%s tokens", f.Step, plural(f.Folded, "observation"), textfmt.Thousands(f.EstTokens)))
			for _, l := range wrap(sanitize.Text(f.Text), w-2) {
				out = append(out, one(roleMuted, "  "+l))
			}
		}
	}

	section("Now")
	out = append(out, nowLines(s, has, now, w)...)

	section("Audit")
	if !has(store.FactSandbox) && !has(store.FactMCP) {
		missing()
	} else {
		by := map[string]int{}
		var keys []string
		failed := 0
		for _, e := range s.Facts.Audit {
			k := e.Source + " " + e.Kind
			if by[k] == 0 {
				keys = append(keys, k)
			}
			by[k]++
			if e.OK != nil && !*e.OK {
				failed++
			}
		}
		if len(keys) == 0 {
			add(roleMuted, "no sandbox or MCP events")
		}
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, by[k]))
		}
		if len(parts) > 0 {
			add(roleText, sanitize.Line(strings.Join(parts, " · ")))
		}
		if failed > 0 {
			add(roleBad, plural(failed, "MCP call")+" failed")
		}
	}
	return out
}

// nowLines are what the run holds open: its plan, the children queued
// under it, its messages, its processes and its live stream.
func nowLines(s *RunSummary, has func(store.Fact) bool, now time.Time, w int) []styledLine {
	var out []styledLine
	add := func(ro role, text string) { out = append(out, one(ro, textfmt.Cut(sanitize.Line(text), w))) }
	f := s.Facts
	label := func(name string, ok bool, value func()) {
		if !ok {
			out = append(out, styledLine{{roleMuted, textfmt.PadRight(name, 11)}, {roleFaint, store.NotRecorded}})
			return
		}
		value()
	}
	label("plan", has(store.FactTodos), func() {
		if len(f.Todos) == 0 {
			add(roleMuted, "plan: none written")
			return
		}
		done := 0
		for _, t := range f.Todos {
			if t.State == store.TodoDone {
				done++
			}
		}
		add(roleText, fmt.Sprintf("plan: %d of %d done", done, len(f.Todos)))
		for _, t := range f.Todos {
			add(todoRole(t.State), "  "+todoMark(t.State)+" "+t.Text)
		}
	})
	label("queued", has(store.FactQueue), func() {
		if len(f.Queued) == 0 {
			add(roleMuted, "queued children: none")
			return
		}
		add(roleStale, fmt.Sprintf("queued children: %d (no run yet)", len(f.Queued)))
		for _, q := range f.Queued {
			add(roleMuted, fmt.Sprintf("  ⧗ %s · depth %d, asked at step %d, %s", q.Goal, q.Depth, q.Step, textfmt.Ago(q.QueuedAt, now)))
		}
	})
	label("messages", has(store.FactMessages), func() {
		unread := 0
		for _, m := range f.Messages {
			if !m.Read() {
				unread++
			}
		}
		add(roleText, fmt.Sprintf("messages to it: %d, %d unread", len(f.Messages), unread))
		for _, m := range f.Messages {
			mark, ro := "✓", roleMuted
			if !m.Read() {
				mark, ro = "✉", roleWarning
			}
			add(ro, fmt.Sprintf("  %s from %s (#%s) at step %d: %s", mark, m.FromName, store.DisplayID(m.FromID), m.Step, firstLineOf(m.Body)))
		}
	})
	label("processes", has(store.FactProcesses), func() {
		if len(f.Processes) == 0 {
			add(roleMuted, "processes: none started")
			return
		}
		running := 0
		for _, p := range f.Processes {
			if p.State == store.ProcessRunning {
				running++
			}
		}
		add(roleText, fmt.Sprintf("processes: %d started, %d running (as the run last knew)", len(f.Processes), running))
		for _, p := range f.Processes {
			st := string(p.State)
			if p.Code != nil {
				st += fmt.Sprintf(" (%d)", *p.Code)
			}
			ro := roleMuted
			if p.State == store.ProcessRunning {
				ro = roleGood
			}
			add(ro, fmt.Sprintf("  ⚙ %d %s · %s, step %d", p.Handle, p.Line, st, p.Step))
			if tail := lastLine(p.Output); tail != "" {
				add(roleFaint, "    "+tail)
			}
		}
	})
	label("stream", has(store.FactRunEvents), func() {
		if f.Stream == 0 {
			add(roleMuted, "live stream: nothing broadcast")
			return
		}
		line := fmt.Sprintf("live stream: %s", plural(f.Stream, "event"))
		if e := f.LastEvent; e != nil {
			line += fmt.Sprintf(" · last %s %s (step %d, %s)", e.Name, e.Text, e.Step, textfmt.Ago(e.At, now))
		}
		add(roleText, line)
	})
	return out
}

// usageLines is a token breakdown: each count the provider reported, or a
// dash where none did.
func usageLines(u store.Usage, w int) []styledLine { return breakdown(u, w, false) }

// breakdown lays the counts out in as few lines as fit w; brief leaves out
// the cache, reasoning and server-tool counts that are zero or unreported.
func breakdown(u store.Usage, w int, brief bool) []styledLine {
	n := func(p *int64) string {
		if p == nil {
			return "—"
		}
		return textfmt.Thousands(*p)
	}
	pairs := [][2]string{{"prompt", n(u.Prompt)}, {"completion", n(u.Completion)}, {"total", n(u.Total)},
		{"cache read", n(u.CacheRead)}, {"cache write", n(u.CacheWrite)}, {"reasoning", n(u.Reasoning)}, {"server tools", n(u.ServerToolRequests)}}
	var out []styledLine
	var line styledLine
	lw := 0
	for i, p := range pairs {
		if brief && i >= 3 && (p[1] == "—" || p[1] == "0") {
			continue
		}
		cell := []span{{roleMuted, p[0] + " "}, {roleText, p[1]}, {plain, "   "}}
		cw := textfmt.Width(p[0]) + 1 + textfmt.Width(p[1]) + 3
		if lw > 0 && lw+cw > w {
			out = append(out, trimRight(line))
			line, lw = nil, 0
		}
		line = append(line, cell...)
		lw += cw
	}
	if len(line) > 0 {
		out = append(out, trimRight(line))
	}
	return out
}

// providerToolLines lists what the provider ran and cited.
func providerToolLines(tools []store.ServerToolCall, cites []store.Citation, hasTools, hasCites bool, w int) []styledLine {
	var out []styledLine
	add := func(ro role, text string) { out = append(out, one(ro, textfmt.Cut(sanitize.Line(text), w))) }
	switch {
	case !hasTools:
		add(roleFaint, "server tools: "+store.NotRecorded)
	case len(tools) == 0:
		add(roleMuted, "server tools: none ran")
	}
	for _, t := range tools {
		if t.Error != "" {
			add(roleBad, fmt.Sprintf("step %d %s %s failed: %s", t.Step, t.Provider, t.Tool, t.Error))
		} else {
			add(roleText, fmt.Sprintf("step %d %s %s", t.Step, t.Provider, t.Tool))
		}
	}
	switch {
	case !hasCites:
		add(roleFaint, "citations: "+store.NotRecorded)
	case len(cites) == 0:
		add(roleMuted, "citations: none")
	}
	for _, c := range cites {
		line := fmt.Sprintf("step %d cited %s", c.Step, c.URL)
		if c.Title != "" {
			line += " — " + c.Title
		}
		add(roleText, line)
		if c.CitedText != "" {
			add(roleMuted, "  “"+c.CitedText+"”")
		}
	}
	return out
}

// leaseText says who drives the run and until when.
func leaseText(s *RunSummary, now time.Time) string {
	l := s.Lease
	if l == nil {
		switch s.Liveness {
		case store.LivenessUnknown:
			return "the store records no leases"
		case store.Unleased:
			return "none: nobody drives the run"
		}
		return "none"
	}
	line := "owner " + l.Owner
	if pid := l.OwnerPID(); pid > 0 {
		line += fmt.Sprintf(" (pid %d)", pid)
	}
	if s.LeaseHeldBy != "" && s.LeaseHeldBy != s.Run.ID {
		line += " · held by #" + store.DisplayID(s.LeaseHeldBy)
	}
	line += fmt.Sprintf(" · generation %d", l.Generation)
	if !l.AcquiredAt.IsZero() {
		line += " · acquired " + textfmt.Ago(l.AcquiredAt, now)
	}
	if !l.RenewedAt.IsZero() {
		line += " · renewed " + textfmt.Ago(l.RenewedAt, now)
		exp := l.RenewedAt.Add(l.TTL)
		if l.Expired(now) {
			line += " · lapsed " + textfmt.Ago(exp, now)
		} else {
			line += " · expires in " + textfmt.Duration(exp.Sub(now))
		}
	}
	return line + " · " + s.Liveness.String()
}

func countsText(c runmodel.Counts) string {
	if !c.Known {
		return "counting…"
	}
	return plural(c.Steps, "step") + ", " + textfmt.TokensProse(c.Tokens, c.Unreported)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return textfmt.Thousands(int64(n)) + " " + noun + "s"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func requestWhat(q store.Request) string {
	switch q.Kind {
	case store.Approval:
		return q.Act + " " + q.Target
	case store.Question:
		return firstLineOf(q.Question)
	case store.Plan:
		return plural(len(q.PlanSteps), "step")
	}
	return ""
}

func roleWaiting(q store.Request) role {
	if q.Resolved {
		return roleMuted
	}
	return roleWarning
}

func todoMark(s store.TodoState) string {
	switch s {
	case store.TodoDone:
		return "☑"
	case store.TodoActive:
		return "▶"
	}
	return "☐"
}

func todoRole(s store.TodoState) role {
	switch s {
	case store.TodoDone:
		return roleMuted
	case store.TodoActive:
		return roleBold
	}
	return roleText
}
