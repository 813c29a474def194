package views

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/rev"
	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// Every pane, driven through every exported method it has (found by
// reflection: a method added later is driven too) in random order with
// random arguments, never draws something new under the revision it drew
// the old thing at; and it never draws differently at two clocks its
// Clock does not tell apart. tui's pane cache keeps a drawing until one of
// the two moves: this is what makes that safe.
func TestAPaneDrawsNothingNewUnderTheSameRevision(t *testing.T) {
	for _, name := range []string{"Runs", "Tree", "Timeline", "Detail", "Drift", "Approvals", "Summary"} {
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= 12; seed++ {
				drivePane(t, name, seed, 150)
			}
		})
	}
}

// drivePane makes a pane, then calls n of its methods at random, checking
// the revision and the clock after each.
func drivePane(t *testing.T, name string, seed int64, n int) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	w := newPaneWorld(r)
	p := w.panes[name]()
	typ := reflect.TypeOf(p)
	var methods []reflect.Method
	for i := 0; i < typ.NumMethod(); i++ {
		switch m := typ.Method(i); m.Name {
		case "View", "Rev", "Clock":
		default:
			methods = append(methods, m)
		}
	}
	p.SetSize(80, 24)
	var trail []string
	for range n {
		if r.Intn(8) == 0 {
			// The owner of what the pane reads as it draws changes it, and
			// tells the pane nothing.
			before, drawn := p.Rev(), draw(p)
			what := w.moveData()
			trail = append(trail, what)
			if p.Rev() == before {
				if now := draw(p); now != drawn {
					t.Fatalf("seed %d: %s draws something new under the same revision after %s, after\n%s\nbefore:\n%s\nafter:\n%s",
						seed, name, what, strings.Join(trail, "\n"), drawn, now)
				}
			}
			continue
		}
		m := methods[r.Intn(len(methods))]
		if key, ok := typ.MethodByName("Key"); ok && r.Intn(2) == 0 {
			m = key // most of what happens to a pane is a key
		}
		args := w.args(t, name, m, p)
		before, drawn := p.Rev(), draw(p)
		res := reflect.ValueOf(p).MethodByName(m.Name).Call(args)
		if tl, ok := p.(*Timeline); ok && m.Name == "Scan" {
			if sc := res[0].Interface().(*StepScan); sc != nil {
				w.run(tl, sc) // the explorer runs the scan the timeline asked for
			}
		}
		trail = append(trail, call(m.Name, args))
		if p.Rev() == before {
			if now := draw(p); now != drawn {
				t.Fatalf("seed %d: %s.%s changed the drawing under the same revision, after\n%s\nbefore:\n%s\nafter:\n%s",
					seed, name, m.Name, strings.Join(trail, "\n"), drawn, now)
			}
		}
		w.checkClock(t, p, name, seed, trail)
	}
}

// draw is the pane drawn unfocused and focused.
func draw(p Pane) string { return p.View(false) + "\n\x00\n" + p.View(true) }

// checkClock draws the pane at later clocks: one whose Clock is the same
// must draw the same (the data's times are whole seconds, so an age moves
// only as a second turns).
func (w *paneWorld) checkClock(t *testing.T, p Pane, name string, seed int64, trail []string) {
	t.Helper()
	base := w.now
	defer func() { w.now = base }()
	r := p.Rev()
	drawn, clock := draw(p), p.Clock(base)
	for _, d := range []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, time.Second, 3 * time.Second, 2 * time.Minute, 3 * time.Hour} {
		w.now = base.Add(d)
		if p.Clock(w.now) != clock {
			continue
		}
		if now := draw(p); now != drawn || p.Rev() != r {
			t.Fatalf("seed %d: %s drawn %v later at the same Clock differs, after\n%s\nbefore:\n%s\nafter:\n%s",
				seed, name, d, strings.Join(trail, "\n"), drawn, now)
		}
	}
}

func call(name string, args []reflect.Value) string {
	var s []string
	for _, a := range args {
		v := []rune(fmt.Sprint(a.Interface()))
		s = append(s, string(v[:min(len(v), 60)]))
	}
	return name + "(" + strings.Join(s, ", ") + ")"
}

// paneWorld is the data the panes are driven with: a few runs, a tree, a
// run's steps, requests and samples, every time a whole second before now.
type paneWorld struct {
	r     *rand.Rand
	now   time.Time
	env   *Env
	panes map[string]func() Pane

	runs   []store.Run
	steps  []store.Step
	reqs   []store.Request
	nodes  *worldNodes
	shown  map[*Timeline]*worldSteps // the steps each timeline was shown, to grow
	scans  []*StepScan               // scans a timeline asked for, run over its steps
	sample []store.ContextSample
}

func newPaneWorld(r *rand.Rand) *paneWorld {
	w := &paneWorld{r: r, now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), shown: map[*Timeline]*worldSteps{}}
	w.env = &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return w.now }}
	ago := func(s int) time.Time { return w.now.Add(-time.Duration(s) * time.Second) }
	w.runs = []store.Run{
		{ID: "1", Goal: "Coordinate the release", Status: store.StatusRunning, StartedAt: ago(95), StatsKnown: true, Steps: 4, Tokens: 900},
		{ID: "2", ParentID: "1", Goal: "Write the notes", Status: store.StatusRunning, StartedAt: ago(61), StatsKnown: true, Steps: 2},
		{ID: "3", ParentID: "1", Goal: "Tag the build", Status: store.StatusCompleted, Outcome: "done", StartedAt: ago(50)},
	}
	for i := range 9 {
		st := store.Step{RowID: int64(i + 1), RunID: "1", Number: i + 1, Decision: fmt.Sprintf("decision %d", i+1),
			ToolCall: fmt.Sprintf("read_file n%d.txt", i), Tokens: int64(100 * (i + 1)), At: ago(90 - 10*i), Latency: time.Second}
		if i%3 == 2 {
			st.Retries = []store.Retry{{RowID: int64(100 + i), Decision: "retry"}}
		}
		w.steps = append(w.steps, st)
	}
	w.reqs = []store.Request{
		{Kind: store.Approval, ID: "a1", RunID: "2", Act: "write", Target: "notes.md", Content: "line one\nline two", HasContent: true, AskedAt: ago(30)},
		{Kind: store.Question, ID: "q1", RunID: "1", Question: "Ship it?", Choices: []string{"yes", "no"}, AskedAt: ago(12)},
		{Kind: store.Plan, ID: "p1", RunID: "3", PlanSteps: []store.PlanStep{{Intent: "tag", Agent: "3"}}, AskedAt: ago(5)},
	}
	rep := int64(1200)
	w.sample = []store.ContextSample{{Step: 1, Estimated: 1000, Reported: &rep}, {Step: 2, Estimated: 1500}, {Step: 3, Estimated: 2100, Reported: &rep}}
	w.nodes = &worldNodes{w: w}
	w.panes = map[string]func() Pane{
		"Runs":      func() Pane { return NewRuns(w.env) },
		"Tree":      func() Pane { p := NewTree(w.env); p.SetNodes(w.nodes); return p },
		"Timeline":  func() Pane { return NewTimeline(w.env) },
		"Detail":    func() Pane { return NewDetail(w.env) },
		"Drift":     func() Pane { return NewDrift(w.env) },
		"Approvals": func() Pane { return NewApprovals(w.env) },
		"Summary":   func() Pane { return NewSummary(w.env) },
	}
	return w
}

// worldNodes makes the tree's nodes from the world's runs, as tui's run
// model does; changing a run in place moves its revision.
type worldNodes struct {
	w   *paneWorld
	rev rev.Rev
}

func (n *worldNodes) Node(id string) *AgentNode {
	for _, r := range n.w.runs {
		if r.ID == id {
			st := store.StateRunning
			if r.Status == store.StatusCompleted {
				st = store.StateFinished
			}
			return &AgentNode{Run: r, State: st, Own: runmodel.Counts{Steps: r.Steps, Tokens: r.Tokens, Known: r.StatsKnown}}
		}
	}
	return nil
}

func (n *worldNodes) Rev() uint64 { return n.rev.Rev() }

// worldSteps is an agent's steps as tui holds them: growing as steps
// commit, whole or only their keys (a long run, read by range).
type worldSteps struct {
	steps  []store.Step
	whole  bool
	facets *StepFacets
	rev    rev.Rev
}

func (s *worldSteps) Len() int { return len(s.steps) }
func (s *worldSteps) Step(i int) (store.Step, bool) {
	if s.whole || i%2 == 0 || i == len(s.steps)-1 {
		return s.steps[i], true
	}
	st := s.steps[i]
	return store.Step{RowID: st.RowID, RunID: st.RunID, Number: st.Number}, false
}
func (s *worldSteps) Complete() bool      { return s.whole }
func (s *worldSteps) Facets() *StepFacets { return s.facets }
func (s *worldSteps) Rev() uint64         { return s.rev.Rev() }

// grow commits a step: the tail of what a refresh brings (Timeline.Grew).
func (s *worldSteps) grow(st store.Step) (had, from int, fresh []store.Step) {
	had = len(s.steps)
	s.steps = append(s.steps, st)
	s.facets.Add(st)
	s.rev.Bump()
	return had, had, []store.Step{st}
}

// moveData changes what the panes read as they draw, as its owner does:
// a run's counts in the model behind the tree, a stretch of steps read
// whole behind the timeline.
func (w *paneWorld) moveData() string {
	if w.r.Intn(2) == 0 {
		i := w.r.Intn(len(w.runs))
		w.runs[i].Steps++
		w.runs[i].Tokens += 500
		w.runs[i].StatsKnown = true
		w.nodes.rev.Bump()
		return fmt.Sprintf("(run %s counted %d steps)", w.runs[i].ID, w.runs[i].Steps)
	}
	for _, src := range w.shown {
		src.whole = !src.whole
		src.rev.Bump()
		return fmt.Sprintf("(the steps held whole: %t)", src.whole)
	}
	return "(nothing)"
}

var paneKeys = []string{"j", "k", "up", "down", "g", "G", "home", "end", "pgup", "pgdown", "enter", "esc", "backspace", "tab",
	"shift+tab", "/", "s", "f", "i", "a", "d", "D", "e", "r", "y", "n", "N", "h", "w", "z", "t", "o", "E", "p", "c", "C", "?", "x", " ", "1"}

func paneKey(k string) tea.KeyPressMsg {
	special := map[string]tea.KeyPressMsg{
		"tab": {Code: tea.KeyTab}, "shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "enter": {Code: tea.KeyEnter},
		"esc": {Code: tea.KeyEscape}, "backspace": {Code: tea.KeyBackspace}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp}, "end": {Code: tea.KeyEnd}, "home": {Code: tea.KeyHome},
		" ": {Code: tea.KeySpace, Text: " "},
	}
	if m, ok := special[k]; ok {
		return m
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// args makes the arguments of a call of m on pane p: by method where the
// call must fit the pane's state (a scan it asked for, steps its source
// grew by), else by type. A method taking a type with no maker fails the
// test: give it one, so the method is driven.
func (w *paneWorld) args(t *testing.T, pane string, m reflect.Method, p Pane) []reflect.Value {
	t.Helper()
	r := w.r
	switch pane + "." + m.Name {
	case pane + ".SetSize": // the sizes the root gives (layout.go's minimums up)
		return vals([]int{24, 40, 60, 80, 120}[r.Intn(5)], []int{6, 10, 16, 24, 40}[r.Intn(5)])
	case "Timeline.Show":
		tl := p.(*Timeline)
		src := &worldSteps{steps: append([]store.Step(nil), w.steps[:r.Intn(len(w.steps)+1)]...), whole: r.Intn(2) == 0}
		src.facets = NewStepFacets(src.steps)
		src.rev.Bump()
		w.shown[tl] = src
		return vals("1", "#1 coordinator: release", TimelineSteps(src), r.Intn(2) == 0)
	case "Timeline.Grew":
		src := w.shown[p.(*Timeline)]
		if src == nil || p.(*Timeline).src != TimelineSteps(src) {
			return vals(0, 0, []store.Step(nil))
		}
		n := len(src.steps) + 1
		had, from, fresh := src.grow(store.Step{RowID: int64(1000 + n), RunID: "1", Number: n, Decision: fmt.Sprintf("grown %d", n),
			Tokens: int64(10 * n), At: w.now.Add(-time.Second)})
		return vals(had, from, fresh)
	case "Timeline.Scan":
		return nil
	case "Timeline.ScanDone", "Timeline.ScanFailed":
		sc := w.scanFor(p.(*Timeline))
		if m.Name == "ScanFailed" {
			return vals(sc.Seq)
		}
		return vals(sc)
	}
	in := m.Type.NumIn()
	out := make([]reflect.Value, 0, in-1)
	for i := 1; i < in; i++ { // 0 is the receiver
		out = append(out, w.value(t, pane+"."+m.Name, m.Type.In(i)))
	}
	return out
}

// scanFor is the last scan the timeline handed out, run over its steps as
// the explorer would, or one it never asked for.
func (w *paneWorld) scanFor(p *Timeline) *StepScan {
	if sc := p.Scan(); sc != nil {
		w.run(p, sc)
	}
	switch {
	case len(w.scans) == 0 || w.r.Intn(4) == 0:
		return newStepScan(w.r.Intn(5), nil, "")
	case w.r.Intn(3) == 0:
		return w.scans[w.r.Intn(len(w.scans))]
	}
	return w.scans[len(w.scans)-1]
}

// run feeds a scan every step of the timeline's agent, as the explorer
// streams them through the store.
func (w *paneWorld) run(p *Timeline, sc *StepScan) {
	if src := w.shown[p]; src != nil {
		for i, st := range src.steps {
			sc.Add(i, st)
		}
	}
	w.scans = append(w.scans, sc)
}

func vals(vs ...any) []reflect.Value {
	out := make([]reflect.Value, len(vs))
	for i, v := range vs {
		out[i] = reflect.ValueOf(v)
	}
	return out
}

// value is a random argument of type typ.
func (w *paneWorld) value(t *testing.T, method string, typ reflect.Type) reflect.Value {
	t.Helper()
	r := w.r
	pick := func(vs ...any) reflect.Value { return reflect.ValueOf(vs[r.Intn(len(vs))]) }
	ago := func(s int) time.Time { return w.now.Add(-time.Duration(s) * time.Second) }
	switch typ {
	case reflect.TypeOf(0):
		return pick(0, 1, 2, 3, 5, 10, 20, 40, 80, 120, -1, -3)
	case reflect.TypeOf(""):
		return pick("", "1", "2", "3", "a1", "release", "ship it", "gone")
	case reflect.TypeOf(false):
		return pick(false, true)
	case reflect.TypeOf(time.Time{}):
		return pick(w.now, ago(3))
	case reflect.TypeOf(tea.KeyPressMsg{}):
		return reflect.ValueOf(paneKey(paneKeys[r.Intn(len(paneKeys))]))
	case reflect.TypeOf(error(nil)), reflect.TypeFor[error]():
		if r.Intn(2) == 0 {
			return reflect.Zero(reflect.TypeFor[error]())
		}
		return reflect.ValueOf(errors.New("the store is read-only")).Convert(reflect.TypeFor[error]())
	case reflect.TypeOf([]RunItem(nil)):
		var items []RunItem
		for _, run := range w.runs[:r.Intn(len(w.runs)+1)] {
			st := store.StateRunning
			if run.Status == store.StatusCompleted {
				st = store.StateFinished
			}
			items = append(items, RunItem{Run: run, State: st, Agents: 1 + r.Intn(3), Tree: runmodel.Counts{Steps: run.Steps, Tokens: run.Tokens, Known: true},
				Duration: time.Duration(r.Intn(90)) * time.Second, Waiting: r.Intn(2)})
		}
		return reflect.ValueOf(items)
	case reflect.TypeOf([]ApprovalItem(nil)):
		var items []ApprovalItem
		for _, q := range w.reqs {
			if r.Intn(3) > 0 {
				items = append(items, ApprovalItem{Req: q, Asker: "#" + q.RunID + " agent", Delivery: store.Delivery(r.Intn(3)), FirstSeen: ago(40)})
			}
		}
		return reflect.ValueOf(items)
	case reflect.TypeOf(store.RequestKey{}):
		return reflect.ValueOf(w.reqs[r.Intn(len(w.reqs))].Key())
	case reflect.TypeOf(store.Decision{}):
		q := w.reqs[r.Intn(len(w.reqs))]
		return reflect.ValueOf(store.Decision{Key: q.Key(), Verdict: []store.Verdict{store.VerdictApprove, store.VerdictDeny, store.VerdictRevise, ""}[r.Intn(4)], Text: "yes"})
	case reflect.TypeOf(store.DecideResult{}):
		return pick(store.DecideResult{}, store.DecideResult{Won: true, Decision: "approved", DecidedBy: "tui"})
	case reflect.TypeOf(Decided{}):
		q := w.reqs[r.Intn(len(w.reqs))]
		q.Resolved, q.Decision, q.DecidedBy, q.DecidedAt = true, "denied", "cli", ago(2)
		return reflect.ValueOf(Decided{Req: q, Channel: "cli", Seen: ago(1)})
	case reflect.TypeOf([]HistoryItem(nil)):
		var items []HistoryItem
		for _, q := range w.reqs[:r.Intn(len(w.reqs)+1)] {
			items = append(items, HistoryItem{Rec: decided(q, ago(4)), Asker: "#1"})
		}
		return reflect.ValueOf(items)
	case reflect.TypeOf(Reasons{}):
		return pick(Reasons{}, Reasons{Format: "io-harness", Carries: func(store.RequestKind, store.Verdict) bool { return true }})
	case reflect.TypeOf(&store.StepDetail{}):
		if r.Intn(4) == 0 {
			return reflect.Zero(typ)
		}
		st := w.steps[r.Intn(len(w.steps))]
		return reflect.ValueOf(&store.StepDetail{Step: st, Prompt: "the prompt\nof the step", Result: "ok", ToolCallFull: st.ToolCall,
			ProviderCalls: []store.ProviderCall{{Provider: "anthropic", Model: "m", LatencyMS: 900, At: st.At}}})
	case reflect.TypeOf([]store.ContextSample(nil)):
		return reflect.ValueOf(w.sample[:r.Intn(len(w.sample)+1)])
	case reflect.TypeFor[DriftSamples]():
		return reflect.ValueOf(SampleSlice(w.sample[:r.Intn(len(w.sample)+1)])).Convert(typ)
	case reflect.TypeOf([]store.Step(nil)):
		return reflect.ValueOf(append([]store.Step(nil), w.steps[:r.Intn(len(w.steps)+1)]...))
	case reflect.TypeOf([]Doing(nil)):
		var ds []Doing
		if r.Intn(2) == 0 {
			ds = append(ds, Doing{RunID: "2", Kind: store.LiveModel, Text: "model streaming 1.2 KB", Since: ago(4)})
		}
		if r.Intn(2) == 0 {
			ds = append(ds, Doing{RunID: "1", Kind: store.LiveRetry, Text: "retrying", Until: w.now.Add(2 * time.Second)})
		}
		return reflect.ValueOf(ds)
	case reflect.TypeOf([]TreeLine(nil)):
		kids := map[string][]string{"1": {"2", "3"}}
		lines := FlattenTreeOf("1", 3, func(id string) bool { return id <= "3" }, func(id string) []string { return kids[id] },
			map[string][]store.AgentEvent{"1": {{Kind: store.AgentSpawnRefused, Detail: "budget"}}}, nil)
		return reflect.ValueOf(lines[:r.Intn(len(lines)+1)])
	case reflect.TypeOf(&Budget{}):
		return pick((*Budget)(nil), &Budget{Ceiling: 10000, Remaining: 4000})
	case reflect.TypeFor[Nodes]():
		if r.Intn(3) == 0 { // the model moved under the tree
			w.runs[0].Steps++
			w.runs[0].Tokens += 50
			w.nodes.rev.Bump()
		}
		return reflect.ValueOf(w.nodes).Convert(typ)
	case reflect.TypeOf(&RunSummary{}):
		run := w.runs[r.Intn(len(w.runs))]
		return reflect.ValueOf(&RunSummary{Run: run, State: store.StateRunning, Own: runmodel.Counts{Steps: 2, Known: true}, Agents: 2,
			Elapsed: 30 * time.Second, HasElapsed: true, Requests: w.reqs[:r.Intn(len(w.reqs)+1)]})
	}
	t.Fatalf("%s takes a %s: give it a maker here, so the method is driven", method, typ)
	return reflect.Value{}
}

func decided(q store.Request, at time.Time) store.DecisionRecord {
	q.Resolved, q.Decision, q.DecidedBy, q.DecidedAt = true, "approved", "tui", at
	return store.DecisionRecord{Request: q, Channel: "tui"}
}
