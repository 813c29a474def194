package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// agent is one simulated run. Its brain decides the next turn (what the
// model answers); the turn becomes a queue of operations that write what
// io-harness writes for a step, in io-harness's order.
type agent struct {
	e      *engine
	t      *tree // nil for a run outside a tree
	id     string
	name   string
	depth  int
	parent *agent
	goal   string

	verifyFile, needle string

	rng   *rand.Rand
	prof  profile
	brain func(*agent) *turn
	phase int

	step   int   // last committed step
	tokens int64 // spent so far (steps.tokens)
	ledger []entry
	said   string // the last thing the model said
	notes  []string
	startT time.Duration
	leased bool

	ops          []op
	wake         time.Duration
	parked       *store.RequestKey
	resolved     store.Request
	waitChildren bool
	done         bool
	outcome      store.Outcome
	cur          *stepRun

	children []*agent
	inflight int
	reports  []string
	endings  map[string]store.Outcome // child address → outcome

	// what humans told it
	deniedWhat string // what was denied ("exec rm -rf build/ && make release")
	answer     string
	verdict    store.Verdict
	correction string
	plans      int
	idle       int
	wrap       int

	deferred     string // the request a deferred approval paused on
	deferredGate *gate
}

type op func() (time.Duration, error)

type entry struct {
	step int
	obs  store.Observation
}

// turn is one model answer: what it said and the tools it called.
type turn struct {
	text       string
	calls      []*call
	final      store.Outcome // after this step commits, the agent ends with this outcome
	completion int           // extra completion tokens (a file the model wrote out)
	retries    []string      // provider failures before the answer (nil: maybe random)
	noRetry    bool
	unreported bool // the provider reports no usage for this turn
	noDraw     bool // the step ends the agent without a budget draw (stalled)
	// after runs once the step has committed (a replan or stall event).
	after func(a *agent, n int) error
}

// call is one tool call.
type call struct {
	name string
	args map[string]any
	dur  time.Duration // how long the tool runs
	run  func(a *agent, n int) (result, error)

	gate      *gate
	question  *question
	plan      []store.PlanStep
	waitChild bool // spawn_agent with wait: the step waits for the child's report
}

type result struct {
	decision string
	obs      store.Observation
}

// gate is an action the policy routes to "ask".
type gate struct {
	act, target string
	content     *string
	deferred    bool // the in-process approver defers: the run pauses (history)
}

type question struct {
	text, context string
	choices       []string
}

// stepRun is the step in progress.
type stepRun struct {
	n         int
	turn      *turn
	prompt    string
	est       int64
	attempts  []attempt
	tokens    int64
	decisions []string
	calls     []string
	obs       []store.Observation
	final     store.Outcome
	noDraw    bool
}

type attempt struct {
	failure string
	errText string
	wait    time.Duration
	latency time.Duration
}

// tick runs the agent's operations until one has to wait.
func (a *agent) tick() error {
	a.waitChildren = false
	if a.t != nil && a.t.halted {
		return a.finish("budget_ceiling_reached")
	}
	if a.parked != nil {
		req, err := a.e.st.Request(a.e.ctx, *a.parked)
		if err != nil {
			return err
		}
		if !req.Resolved {
			a.wake = a.e.now + a.e.pollEvery()
			return nil
		}
		a.parked, a.resolved = nil, req
	}
	for !a.done {
		if len(a.ops) == 0 {
			t := a.brain(a)
			if t == nil { // nothing to do until the children report
				if a.inflight == 0 {
					return fmt.Errorf("demo: %s has nothing left to do but never finished", a.label())
				}
				a.waitChildren = true
				return nil
			}
			a.begin(t)
		}
		o := a.ops[0]
		a.ops = a.ops[1:]
		d, err := o()
		if err != nil {
			return err
		}
		switch {
		case a.parked != nil:
			a.wake = a.e.now + a.e.pollEvery()
			return nil
		case a.waitChildren:
			return nil
		case d > 0:
			a.wake = a.e.now + d
			return nil
		}
	}
	return nil
}

// begin turns a turn into the step's operations: assemble the context,
// ask the provider (retrying), dispatch each call, commit.
func (a *agent) begin(t *turn) {
	s := &stepRun{n: a.step + 1, turn: t, final: t.final}
	a.cur = s
	s.attempts = a.drawAttempts(t)
	if !t.unreported && a.step > 1 && a.rng.IntN(100) < 6 {
		t.unreported = true
	}
	a.ops = append(a.ops, a.opAssemble)
	for i := range s.attempts {
		a.ops = append(a.ops, a.opAttempt(i))
	}
	for _, c := range t.calls {
		a.ops = append(a.ops, a.opCall(c)...)
	}
	a.ops = append(a.ops, a.opCommit)
}

var failures = []struct {
	kind, text string
	wait       func(n int) time.Duration
	latency    [2]time.Duration
}{
	{"Server (HTTP 529)", `provider error (Server, HTTP 529): {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		func(n int) time.Duration { return 500 * time.Millisecond << (n - 1) }, [2]time.Duration{300 * time.Millisecond, 900 * time.Millisecond}},
	{"RateLimited (HTTP 429)", "provider error (RateLimited, HTTP 429): rate limit exceeded for anthropic/claude-sonnet-4.5; retry after 2s",
		func(int) time.Duration { return 2 * time.Second }, [2]time.Duration{80 * time.Millisecond, 200 * time.Millisecond}},
	{"Timeout", "provider error (Timeout): no response within 120s",
		func(n int) time.Duration { return 500 * time.Millisecond << (n - 1) }, [2]time.Duration{120 * time.Second, 120 * time.Second}},
}

func failureNamed(kind string) int {
	for i, f := range failures {
		if f.kind == kind {
			return i
		}
	}
	panic("unknown failure " + kind)
}

// drawAttempts decides, up front, how the provider answers this step:
// zero to two failed attempts, then the answer.
func (a *agent) drawAttempts(t *turn) []attempt {
	kinds := t.retries
	if kinds == nil && !t.noRetry && a.step > 0 && a.rng.IntN(100) < 9 {
		kinds = []string{failures[a.rng.IntN(2)].kind}
		if a.rng.IntN(3) == 0 {
			kinds = append(kinds, kinds[0])
		}
	}
	var out []attempt
	for i, k := range kinds {
		f := failures[failureNamed(k)]
		out = append(out, attempt{failure: k, errText: f.text, wait: f.wait(i + 1), latency: between(a.rng, f.latency)})
	}
	return append(out, attempt{latency: between(a.rng, a.prof.latency)})
}

func (a *agent) opAssemble() (time.Duration, error) {
	e, s := a.e, a.cur
	for _, r := range a.reports {
		s.obs = append(s.obs, store.Observation{Kind: "child", Text: r})
	}
	a.reports = nil
	recalled := 0
	if s.n == 1 && len(a.notes) > 0 {
		recalled = len(a.notes)
		if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, "memory_recall",
			fmt.Sprintf("%d of %d note(s) carried", recalled, len(a.notes)), nil); err != nil {
			return 0, err
		}
	}
	prompt, carried, stubbed := a.prompt(s.n)
	s.prompt = prompt
	s.est = int64(math.Ceil(float64(utf8.RuneCountInString(prompt)) / 4))
	detail := fmt.Sprintf("carried=%d stubbed=%d reread=0 recalled=%d collapsed=false", carried, stubbed, recalled)
	if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, harness.ContextAssembled, detail, &s.est); err != nil {
		return 0, err
	}
	return s.attempts[0].latency, nil
}

// drift is how far the provider's count runs above the estimate: about
// 10 % at first, growing toward 40 % as the run goes on.
func (a *agent) drift(n int) float64 {
	d := 0.10 + 0.30*math.Min(1, float64(n-1)/10) + (a.rng.Float64()-0.5)*0.06
	return math.Max(d, 0.05)
}

func (a *agent) opAttempt(i int) op {
	return func() (time.Duration, error) {
		e, s := a.e, a.cur
		at := s.attempts[i]
		call := store.ProviderCall{Step: s.n, Attempt: i, Provider: e.w.provider, LatencyMS: at.latency.Milliseconds()}
		record := func() error {
			if err := e.st.RecordProviderCall(e.ctx, a.id, call); err != nil {
				return err
			}
			e.stampAt(stamp{table: "provider_calls", col: "at", dt: true, where: "run_id = ? AND step = ? AND attempt = ?",
				args: []any{num(a.id), s.n, i}})
			return nil
		}
		if at.failure != "" {
			call.Failure = at.failure
			if err := record(); err != nil {
				return 0, err
			}
			if err := e.st.RecordRetry(e.ctx, a.id, s.n, i+1, at.failure, at.wait, at.errText); err != nil {
				return 0, err
			}
			e.logf(a, "step %d: retry %d after %s in %s", s.n, i+1, at.failure, harness.RustDuration(at.wait))
			return at.wait + s.attempts[i+1].latency, nil
		}
		call.Model = e.w.model
		call.FinishReason = "tool_calls"
		if len(s.turn.calls) == 0 {
			call.FinishReason = "stop"
		}
		if !s.turn.unreported {
			// The provider's total runs above the estimate by the drift;
			// the completion is part of it.
			total := int64(math.Round(float64(s.est) * (1 + a.drift(s.n))))
			completion := min(int64(60+a.rng.IntN(260)+s.turn.completion), total/3)
			prompt := total - completion
			call.PromptTokens, call.CompletionTokens, call.TotalTokens = &prompt, &completion, &total
			s.tokens = total
		}
		if err := record(); err != nil {
			return 0, err
		}
		if s.tokens > 0 {
			if err := e.st.RecordContextReported(e.ctx, a.id, s.n, s.tokens); err != nil {
				return 0, err
			}
		}
		if text := strings.TrimSpace(s.turn.text); text != "" && a.t != nil {
			if err := e.st.RecordAgentEvent(e.ctx, store.AgentEvent{RunID: a.id, Step: s.n, Kind: store.AgentSaid, Detail: text}); err != nil {
				return 0, err
			}
			a.said = text
		}
		return 0, nil
	}
}

func (c *call) json() string {
	if c.args == nil {
		return "{}"
	}
	return compactJSON(c.args)
}

func (a *agent) opCall(c *call) []op {
	e := a.e
	record := func(r result) {
		s := a.cur
		if r.decision == "" {
			return
		}
		s.decisions = append(s.decisions, r.decision)
		if r.obs.Text != "" {
			s.obs = append(s.obs, r.obs)
		}
	}
	perform := func() (time.Duration, error) {
		r, err := c.run(a, a.cur.n)
		if err != nil {
			return 0, err
		}
		record(r)
		return c.dur, nil
	}
	callText := c.name + ":" + c.json()
	pre := func() (time.Duration, error) {
		a.cur.calls = append(a.cur.calls, callText)
		return 0, nil
	}
	switch {
	case c.waitChild:
		var child *agent
		return []op{pre, func() (time.Duration, error) {
			kids := len(a.children)
			r, err := c.run(a, a.cur.n)
			if err != nil || r.decision != "" { // refused: nothing to wait for
				record(r)
				return 0, err
			}
			child = a.children[kids]
			a.waitChildren = true
			return 0, nil
		}, func() (time.Duration, error) {
			if child == nil {
				return 0, nil
			}
			prefix := "\n[child " + child.id + " "
			for i, rep := range a.reports {
				if strings.HasPrefix(rep, prefix) {
					a.reports = append(a.reports[:i:i], a.reports[i+1:]...)
					record(result{decision: fmt.Sprintf("spawned child %s: %s { steps: %d }", child.id, outcomeVariant(child.outcome), child.step),
						obs: store.Observation{Kind: "child", Text: rep}})
					break
				}
			}
			return 0, nil
		}}
	case c.gate != nil:
		g := c.gate
		return []op{pre, func() (time.Duration, error) {
			s := a.cur
			id, err := e.st.PutPending(e.ctx, a.id, s.n, g.act, g.target, g.content)
			if err != nil {
				return 0, err
			}
			if g.deferred {
				if err := e.st.RecordPolicyEvent(e.ctx, store.PolicyEvent{RunID: a.id, Step: s.n, Kind: store.PolicyDecision,
					Act: g.act, Target: g.target, Decision: store.PolicyDefer, Source: "approver"}); err != nil {
					return 0, err
				}
				a.deferred = id
				s.decisions = append(s.decisions, fmt.Sprintf("awaiting approval (request %s)", id))
				s.final, s.noDraw = store.OutcomeAwaitingApproval, true
				a.ops = []op{a.opCommit} // the run stops here: nothing after the pause is dispatched
				e.logf(a, "step %d: approval %s deferred: %s %s", s.n, id, g.act, g.target)
				return 0, nil
			}
			a.parked = &store.RequestKey{Kind: store.Approval, ID: id}
			e.logf(a, "step %d: waits for approval %s: %s %s", s.n, id, g.act, firstLine(g.target))
			return 0, nil
		}, func() (time.Duration, error) {
			s, req := a.cur, a.resolved
			// io-harness reads any word but approve as a denial.
			landed := store.PolicyDeny
			if store.Verdict(req.Decision) == store.VerdictApprove {
				landed = store.PolicyApprove
			}
			if err := e.st.RecordPolicyEvent(e.ctx, store.PolicyEvent{RunID: a.id, Step: s.n, Kind: store.PolicyDecision,
				Act: g.act, Target: g.target, Decision: landed, Source: "attached"}); err != nil {
				return 0, err
			}
			e.logf(a, "step %d: approval %s: %s (attached)", s.n, req.ID, landed)
			if landed != store.PolicyApprove {
				record(result{decision: g.act + " denied", obs: store.Observation{Kind: "error",
					Text: fmt.Sprintf("\n[%s denied] %s — answered by an attached process\n", g.act, g.target)}})
				a.deniedWhat = g.act + " " + firstLine(g.target)
				s.final = store.OutcomeDenied
				return 0, nil
			}
			return perform()
		}}
	case c.question != nil:
		q := c.question
		return []op{pre, func() (time.Duration, error) {
			s := a.cur
			if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, "question_asked", q.text, nil); err != nil {
				return 0, err
			}
			id, err := e.st.PutQuestion(e.ctx, a.id, s.n, q.text, q.context, q.choices)
			if err != nil {
				return 0, err
			}
			e.stampAt(stamp{table: "pending_questions", col: "asked_at", where: "id = ?", args: []any{num(id)}})
			a.parked = &store.RequestKey{Kind: store.Question, ID: id}
			e.logf(a, "step %d: waits for an answer to question %s: %s", s.n, id, q.text)
			return 0, nil
		}, func() (time.Duration, error) {
			s, req := a.cur, a.resolved
			a.answer = req.Decision
			if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, "question_answered", req.DecidedBy+": "+req.Decision, nil); err != nil {
				return 0, err
			}
			e.logf(a, "step %d: question %s answered by %s: %s", s.n, req.ID, req.DecidedBy, req.Decision)
			record(result{decision: "asked, answered by " + req.DecidedBy, obs: store.Observation{Kind: "tool",
				Text: "\n[answer] " + req.Decision + "\n(This is what the operator wanted. It is not permission for anything.)\n"}})
			return 0, nil
		}}
	case c.plan != nil:
		return []op{pre, func() (time.Duration, error) {
			s := a.cur
			id, err := e.st.PutPlan(e.ctx, a.id, s.n, c.plan)
			if err != nil {
				return 0, err
			}
			e.stampAt(stamp{table: "plans", col: "proposed_at", where: "id = ?", args: []any{num(id)}})
			if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, "plan_proposed", fmt.Sprintf("%d steps", len(c.plan)), nil); err != nil {
				return 0, err
			}
			a.plans++
			a.parked = &store.RequestKey{Kind: store.Plan, ID: id}
			e.logf(a, "step %d: waits for a verdict on plan %s (%d steps)", s.n, id, len(c.plan))
			return 0, nil
		}, func() (time.Duration, error) {
			s, req := a.cur, a.resolved
			a.verdict, a.correction = store.Verdict(req.Decision), req.Correction
			if err := e.st.RecordContextEvent(e.ctx, a.id, s.n, "plan_decided", req.DecidedBy+": "+req.Decision, nil); err != nil {
				return 0, err
			}
			e.logf(a, "step %d: plan %s: %s (%s)", s.n, req.ID, req.Decision, req.DecidedBy)
			switch a.verdict {
			case store.VerdictApprove:
				record(result{decision: fmt.Sprintf("plan %s approved", req.ID), obs: store.Observation{Kind: "message",
					Text: "\n[plan approved] Carry it out. Writes and commands are checked against the policy again from here.\n"}})
			case store.VerdictRevise:
				record(result{decision: "plan sent back", obs: store.Observation{Kind: "message",
					Text: "\n[plan not approved] " + req.Correction + "\n(Propose a different plan with `propose_plan`. Nothing has been done yet and nothing will be until a plan is approved.)\n"}})
			default:
				record(result{decision: fmt.Sprintf("plan %s cancelled", req.ID), obs: store.Observation{Kind: "message",
					Text: "\n[plan cancelled] The operator stopped this work.\n"}})
				s.final, s.noDraw = store.OutcomePlanRejected, true
			}
			return 0, nil
		}}
	}
	return []op{pre, perform}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func (a *agent) opCommit() (time.Duration, error) {
	e, s := a.e, a.cur
	var text *string
	if s.turn.text != "" {
		t := s.turn.text
		text = &t
	}
	calls := make([]harness.ToolCall, 0, len(s.turn.calls))
	for _, c := range s.turn.calls {
		calls = append(calls, harness.ToolCall{Name: c.name, Arguments: json.RawMessage(c.json())})
	}
	if len(s.turn.calls) == 0 {
		s.decisions = append(s.decisions, "no tool call")
		s.obs = append(s.obs, store.Observation{Kind: "message", Text: fmt.Sprintf("\n[step %d] no tool call: %s\n", s.n, s.turn.text)})
	}
	var result strings.Builder
	for _, o := range s.obs {
		result.WriteString(o.Text)
	}
	rec := harness.StepRecord{Step: s.n, Decision: strings.Join(s.decisions, "; "), Result: result.String(),
		Prompt: s.prompt, ToolCall: strings.Join(s.calls, " | "), Tokens: s.tokens,
		Turn: &harness.Turn{Text: text, Calls: calls}}
	if err := e.st.CheckpointStep(e.ctx, a.id, rec); err != nil {
		return 0, err
	}
	if err := a.renewRoot(); err != nil {
		return 0, err
	}
	for i := range s.obs {
		s.obs[i].Step = s.n // observed this step
	}
	if err := e.st.RecordObservations(e.ctx, a.id, s.obs); err != nil {
		return 0, err
	}
	for _, o := range s.obs {
		a.ledger = append(a.ledger, entry{step: s.n, obs: o})
	}
	a.step, a.tokens = s.n, a.tokens+s.tokens
	e.logf(a, "step %d: %s (%d tokens)", s.n, rec.Decision, s.tokens)
	if s.turn.after != nil {
		if err := s.turn.after(a, s.n); err != nil {
			return 0, err
		}
	}
	if a.t != nil && !s.noDraw && !s.turn.noDraw {
		a.t.drawn += s.tokens
		tokens, remaining := s.tokens, a.t.ceiling-a.t.drawn
		if err := e.st.RecordAgentEvent(e.ctx, store.AgentEvent{RunID: a.id, Step: s.n, Kind: store.AgentBudgetDraw,
			Tokens: &tokens, Remaining: &remaining}); err != nil {
			return 0, err
		}
		if remaining < 0 { // crossing the ceiling halts the whole tree
			a.t.halted = true
			e.logf(a, "step %d: the tree crossed its %d-token ceiling", s.n, a.t.ceiling)
			return 0, a.finish("budget_ceiling_reached")
		}
	}
	if s.final != "" {
		return 0, a.finish(s.final)
	}
	return between(a.rng, a.prof.gap), nil
}

// renewRoot renews the lease that drives this agent: a root's own step
// commit renews it (CheckpointStep does); a tree's children are not
// leased, so their commits renew the root's.
func (a *agent) renewRoot() error {
	root := a
	for root.parent != nil {
		root = root.parent
	}
	if !root.leased {
		return nil
	}
	if root != a {
		if err := a.e.st.RenewLease(a.e.ctx, root.id); err != nil {
			return err
		}
	}
	a.e.stampAt(stamp{table: "run_leases", col: "renewed_at", where: "run_id = ?", args: []any{num(root.id)}})
	return nil
}

// finish ends the agent: its outcome, its summary and, for a child, the
// report its parent collects at its next step.
func (a *agent) finish(outcome store.Outcome) error {
	e := a.e
	if err := e.st.FinishRun(e.ctx, a.id, outcome); err != nil {
		return err
	}
	a.done, a.outcome, a.ops = true, outcome, nil
	if harness.StatusForOutcome(outcome) == store.StatusCompleted {
		e.stampAt(stamp{table: "run_outcomes", col: "finished_at", where: "run_id = ?", args: []any{num(a.id)}})
		e.stampAt(stamp{table: "run_outcomes", col: "duration_ms", ms: true, t: e.now - a.startT, where: "run_id = ?", args: []any{num(a.id)}})
	}
	e.logf(a, "finished: %s after %d steps, %d tokens", outcome, a.step, a.tokens)
	if p := a.parent; p != nil {
		said := "\n(it ended without saying anything; read its trace by run id)\n"
		if a.said != "" {
			said = "\n" + a.said + "\n"
		}
		p.reports = append(p.reports, fmt.Sprintf("\n[child %s %q -> %s { steps: %d }, %d steps, %d tokens]%s",
			a.id, a.goal, outcomeVariant(outcome), a.step, a.step, a.tokens, said))
		p.inflight--
		if p.endings == nil {
			p.endings = map[string]store.Outcome{}
		}
		p.endings[a.address()] = outcome
		if p.waitChildren && p.inflight == 0 && p.wake < e.now {
			p.wake = e.now
		}
	}
	if a.leased {
		if err := e.st.ReleaseLease(e.ctx, a.id); err != nil {
			return err
		}
		a.leased = false
	}
	return nil
}

// outcomeVariant is the RunOutcome variant name io-harness prints for an
// outcome string.
func outcomeVariant(outcome store.Outcome) string {
	var b strings.Builder
	for _, part := range strings.Split(string(outcome), "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// prompt is what the model is sent: who it is, its goal and policy, any
// notes from earlier runs, and what it has seen — the latest observations
// in full and older ones stubbed, so the prompt grows but stays bounded.
func (a *agent) prompt(n int) (string, int, int) {
	var b strings.Builder
	w := a.e.w
	role := "the root agent"
	if a.parent != nil {
		role = fmt.Sprintf("sub-agent %s, spawned by %s", a.address(), a.parent.address())
	}
	fmt.Fprintf(&b, "You are %s, working in the repository at %s.\n\n", role, w.ws)
	fmt.Fprintf(&b, "Goal: %s\n", a.goal)
	if a.verifyFile != "" {
		fmt.Fprintf(&b, "You are done when %s contains %q.\n", a.verifyFile, a.needle)
	}
	b.WriteString(systemPrompt)
	b.WriteString(toolReference)
	if a.t != nil {
		b.WriteString(treePrompt)
	}
	b.WriteString(w.workspaceMap())
	if len(a.notes) > 0 {
		b.WriteString("\n## Notes from earlier runs (they may be out of date)\n")
		for _, n := range a.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	b.WriteString("\n## What you have seen so far\n")
	const keep = 6
	carried, stubbed := 0, 0
	for i, en := range a.ledger {
		if len(a.ledger)-i > keep {
			stubbed++
			target := en.obs.Target
			if target == "" {
				target = en.obs.Kind
			}
			fmt.Fprintf(&b, "[step %d: %s %s, %d chars: stubbed; read it again if you need it]\n", en.step, en.obs.Kind, target,
				utf8.RuneCountInString(en.obs.Text))
			continue
		}
		carried++
		b.WriteString(en.obs.Text)
	}
	for _, o := range a.cur.obs { // child reports folded in at this step
		carried++
		b.WriteString(o.Text)
	}
	if carried+stubbed == 0 {
		b.WriteString("(nothing yet)\n")
	}
	fmt.Fprintf(&b, "\n## Step %d\nDecide the next action and call the tools for it.\n", n)
	return b.String(), carried, stubbed
}

const systemPrompt = `
Tools: read_file, write_file, edit_file, grep, find, list_dir, git_log, exec, shell,
remember, ask_question, propose_plan.
Policy: reading is allowed everywhere; writing src/**, docs/** and *.md is allowed and any
other write asks the operator; ` + "`go`" + ` and ` + "`make test`" + ` run freely and any other command asks;
the network is closed. A refused or denied action is not an error: adapt and carry on.
Work in small verified steps. Say what you found when you finish.
`

const toolReference = `
## Tools
read_file {path, offset?, limit?}: a text file, whole or a line range. Refused when it would not fit.
write_file {path, content}: create or replace a whole file. Prefer edit_file for a change to part of one.
edit_file {path, old, new}: replace exactly one occurrence of old with new; fails when old is absent or repeated.
patch_file {path, patch}: apply a unified diff with context lines; each hunk lands where written or not at all.
grep {pattern, path?}: regex search over file contents; path is a glob. Returns path:line: text for each hit.
find {glob}: list the paths that match a glob.
list_dir {path?}: one directory, one level deep, with sizes. No path lists the workspace root.
git_log {range?, max_count?}, git_status {}, git_diff {path?}: read the repository history and state.
exec {program, args}: run one program with an argv; its exit code and output come back.
shell {command}: run a command line (pipes, &&, ||, redirects); every sub-command is checked before any runs.
remember {key, value}: keep a short note for later runs over this workspace. forget {key} removes one.
ask_question {question, context?, choices?}: ask the operator what they meant. The answer permits nothing.
propose_plan {steps: [{intent, agent?}]}: propose a plan; nothing is written or run until it is approved.
`

const treePrompt = `
You are part of an agent tree. spawn_agent starts a sub-agent (pass "as" to name it and
"wait": false to keep working while it runs); its report reaches you at a later step.
read_messages waits for what other agents send you. The tree shares one token budget.
`
