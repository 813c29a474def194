package codex

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/vigil-run/vigil/store"
)

// A rollout no bigger than wholeLimit is read whole for the run list
// (its counts are then known); a bigger one is read at its head and its
// tail only, so a huge session lists without being read. The tail is read
// from its last tailFirst bytes, and back to tailLimit when those do not
// say how the session stands; the head up to the session's prompt and
// model, and on to headLimit when the tail does not say it either.
const (
	wholeLimit = 1 << 20
	headLimit  = 1 << 20
	tailFirst  = 64 << 10
	tailLimit  = 256 << 10
)

// Runs lists every session: a rollout is a run, a sub-agent's rollout a
// child run (session_meta.parent_thread_id). The rollouts are read on
// every core: a tree of months is thousands of files to decode while the
// explorer's first page waits for the rest.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	files := s.files()
	type glanced struct {
		ses  *session
		full bool
	}
	read := make([]glanced, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ses, full, err := s.glance(files[i]); err == nil {
				read[i] = glanced{ses, full}
			}
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var runs []store.Run
	ids := map[string]string{}
	for i, g := range read {
		if g.ses == nil || g.ses.id == "" {
			continue
		}
		ids[g.ses.id] = files[i]
		runs = append(runs, g.ses.run(g.full))
	}
	s.mu.Lock()
	s.byID = ids
	s.mu.Unlock()
	return runs, nil
}

// glance reads what the run list needs of a rollout: all of it when it
// is small, else its tail (how it stands, its running token total, its
// model now) and its head (who, where, the prompt).
func (s *Store) glance(path string) (ses *session, full bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	ses = newSession()
	if fi.Size() <= wholeLimit {
		_, err = s.foldFrom(f, path, ses, 0, -1, nil)
		return ses, true, err
	}
	// The last of each kind of record the tail holds is the rollout's
	// last: the tail read further only while one is missing.
	tail, err := foldTail(f, fi.Size(), tailFirst)
	if err == nil && !tail.says() {
		tail, err = foldTail(f, fi.Size(), tailLimit)
	}
	if err != nil {
		return nil, false, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, false, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	known := func(h *session) bool { return tail.says() && h.id != "" && h.goal != "" && h.model != "" }
	if _, err := s.foldFrom(f, path, ses, 0, headLimit, known); err != nil {
		return nil, false, err
	}
	if tail.statusSeen {
		ses.status, ses.outcome, ses.finished, ses.duration = tail.status, tail.outcome, tail.finished, tail.duration
	}
	if tail.cumulative != nil {
		ses.cumulative = tail.cumulative
	}
	if tail.model != "" {
		ses.model = tail.model
	}
	return ses, false, nil
}

// says reports whether a tail's fold holds each record the run list takes
// from a rollout's end: a task event, a running token total, a model.
func (ses *session) says() bool {
	return ses.statusSeen && ses.cumulative != nil && ses.model != ""
}

// foldTail folds the whole lines of the last n bytes of a rollout of
// size bytes (the first line, cut, left out). Line numbers here are not
// the file's: problems come from whole reads.
func foldTail(f *os.File, size, n int64) (*session, error) {
	n = min(n, size)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil && err != io.EOF {
		return nil, err
	}
	tail := newSession()
	if i := bytes.IndexByte(b, '\n'); i >= 0 && n < size {
		b = b[i+1:]
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a line still being written
		}
		tail.fold(b[:i])
		b = b[i+1:]
	}
	return tail, nil
}

// run is the session as a run. full says every line was read: its counts
// are known.
func (ses *session) run(full bool) store.Run {
	r := store.Run{ID: ses.id, ParentID: ses.parent, Depth: ses.depth, Goal: ses.goal, Workspace: ses.cwd,
		Provider: providerOf(ses.provider, ses.model), Status: ses.status, Outcome: ses.outcome, StartedAt: ses.started}
	if r.Goal == "" && ses.nickname != "" {
		r.Goal = "sub-agent " + ses.nickname
	}
	steps, tokens := ses.counts()
	if full {
		r.Steps, r.Tokens, r.StatsKnown = steps, tokens, true
	}
	if ses.status.Ended() {
		sum := &store.Summary{Outcome: ses.outcome, Success: ses.outcome == store.OutcomeComplete, FinishedAt: ses.finished}
		if full {
			sum.Steps, sum.Tokens = steps, tokens
		} else if ses.cumulative != nil {
			sum.Tokens = *ses.cumulative
		}
		if ses.duration != nil {
			sum.Duration, sum.HasDuration = *ses.duration, true
		}
		r.Summary = sum
	}
	return r
}

// counts is the number of committed turns and the tokens every turn's
// usage reports.
func (ses *session) counts() (steps int, tokens int64) {
	for i, t := range ses.turns {
		if t.usage != nil {
			tokens += t.usage.Total
		}
		if ses.committed(i) {
			steps++
		}
	}
	return steps, tokens
}

func providerOf(provider, model string) string {
	switch {
	case provider == "":
		return model
	case model == "":
		return provider
	}
	return provider + "/" + model
}

// session reads one run's rollout whole.
func (s *Store) session(ctx context.Context, runID string) (*session, error) {
	p, err := s.fileOf(ctx, runID)
	if err != nil {
		return nil, err
	}
	return s.readWhole(p)
}

// RunStats counts the runs' model turns and their reported tokens.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	out := map[string]store.RunStats{}
	for _, id := range ids {
		ses, err := s.session(ctx, id)
		if err != nil {
			continue
		}
		st := store.RunStats{Provider: providerOf(ses.provider, ses.model)}
		st.Steps, st.Tokens = ses.counts()
		for i := range ses.turns {
			if ses.committed(i) {
				st.Through = ses.turns[i].stepID()
			}
		}
		out[id] = st
	}
	return out, nil
}

// Steps is the run's committed model turns, one step each, and the turn
// in flight while its call runs, as a pending step.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	ses, err := s.session(ctx, runID)
	if err != nil {
		return nil, err
	}
	var steps []store.Step
	for i := range ses.turns {
		if !ses.committed(i) {
			if ses.held(i) {
				steps = append(steps, ses.pendingStep(&ses.turns[i]))
			}
			break
		}
		steps = append(steps, ses.step(&ses.turns[i]))
	}
	return steps, nil
}

// committed reports whether turn i is a step: its response is whole and
// its calls answered, or the run moved past it (a later turn, the task's
// end). Until then a turn with a call running is a pending placeholder
// (pendingStep), and its calls live activity (Activity): a committed row,
// once handed out, never changes.
func (ses *session) committed(i int) bool {
	t := &ses.turns[i]
	return i < len(ses.turns)-1 || ses.status.Ended() || (t.closed && !ses.pending(t))
}

// Activity is what each run's open turn is doing: a call whose output is
// not written yet is a running tool (codex records a call's output when
// the tool returns). Codex writes no other live stream to the rollout.
func (s *Store) Activity(ctx context.Context, q store.ActivityQuery) (store.Activity, error) {
	act := store.Activity{Recorded: store.FactSet{}}
	act.Recorded.Add(store.FactRunEvents)
	for _, id := range q.RunIDs {
		ses, err := s.session(ctx, id)
		if err != nil || len(ses.turns) == 0 || ses.committed(len(ses.turns)-1) {
			continue
		}
		t := ses.last()
		for i, c := range t.calls {
			if _, done := ses.results[c.id]; done {
				continue
			}
			act.Events = append(act.Events, store.RunEvent{ID: t.row*1000 + int64(i), RunID: id, Step: t.number,
				Kind: store.LiveTool, Name: "function_call", Text: cut(c.name+" "+c.args, 200), At: t.at})
		}
	}
	return act, nil
}

// step is a turn as the timeline shows it.
func (ses *session) step(t *turn) store.Step {
	st := store.Step{RowID: t.stepID(), RunID: ses.id, Number: t.number, Kind: store.StepTurn, At: t.at,
		ToolCall: t.callSummary()}
	switch {
	case len(t.calls) > 0 && ses.pending(t):
		st.Decision = "unanswered" // the run moved past a call with no output
	case len(t.calls) > 0:
		st.Decision = "tool"
		st.ResultHead = cut(firstLine(ses.results[t.calls[0].id].text), 160)
	case t.text != "":
		st.Decision = "answer"
		st.ResultHead = cut(firstLine(t.text), 160)
	default:
		st.Decision = "turn"
	}
	if t.usage != nil {
		st.Tokens = t.usage.Total
	}
	return st
}

// pendingStep is a turn in flight as the timeline shows it until it
// commits: its calls, running.
func (ses *session) pendingStep(t *turn) store.Step {
	st := store.Step{RowID: t.pendingID(), RunID: ses.id, Number: t.number, Kind: store.StepTurn, At: t.at,
		Decision: "running", ToolCall: t.callSummary(), Pending: true}
	if t.usage != nil {
		st.Tokens = t.usage.Total
	}
	return st
}

func (t *turn) callSummary() string {
	var names []string
	for _, c := range t.calls {
		names = append(names, c.name+" "+c.args)
	}
	return cut(strings.Join(names, "; "), 200)
}

// StepDetail is one turn whole: its text, its calls with their results,
// its usage. It reads a turn by its committed row id or by its pending
// placeholder's, as the turn stands now.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	ses, err := s.session(ctx, runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	for i := range ses.turns {
		t := &ses.turns[i]
		if rowID != t.stepID() && rowID != t.pendingID() {
			continue
		}
		st := ses.step(t)
		if ses.held(i) {
			st = ses.pendingStep(t)
		}
		st.RowID = rowID // the row asked for: a reader matches the detail to its row
		d := store.StepDetail{Step: st, TurnText: t.text, HasTurnText: t.text != ""}
		var calls, results []string
		for _, c := range t.calls {
			d.Tools = append(d.Tools, store.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
			calls = append(calls, c.name+" "+c.args)
			if r, ok := ses.results[c.id]; ok {
				results = append(results, c.id+": "+r.text)
			} else {
				results = append(results, c.id+": running (no result yet)")
			}
		}
		d.ToolCallFull, d.Result = strings.Join(calls, "\n"), strings.Join(results, "\n")
		if pc, ok := ses.call(t); ok {
			d.ProviderCalls = []store.ProviderCall{pc}
		}
		return d, nil
	}
	return store.StepDetail{}, store.Errorf(s.path, store.ErrNoSuchRun, nil, "run %s has no step at row %d", runID, rowID)
}

// call is a turn's usage as a provider call; false when none was recorded.
func (ses *session) call(t *turn) (store.ProviderCall, bool) {
	u := t.usage
	if u == nil {
		return store.ProviderCall{}, false
	}
	p := func(v int64) *int64 { return &v }
	return store.ProviderCall{RowID: t.useRow, RunID: ses.id, Step: t.number, Attempt: 1, Provider: ses.provider,
		Model: t.model, PromptTokens: p(u.Input), CompletionTokens: p(u.Output), TotalTokens: p(u.Total),
		CacheReadTokens: p(u.Cached), CacheWriteTokens: p(u.CacheWrite), ReasoningTokens: p(u.Reasoning), At: t.at}, true
}

// sample is a turn's context size: last_token_usage's total is what the
// request put in the window (codex-rs/protocol TokenUsage::
// tokens_in_context_window).
func (ses *session) sample(t *turn) (store.ContextSample, bool) {
	if t.usage == nil {
		return store.ContextSample{}, false
	}
	v := t.usage.Total
	cs := store.ContextSample{RowID: t.useRow, RunID: ses.id, Step: t.number, NoEstimate: true, Reported: &v}
	if t.window != nil {
		cs.Detail = "of a " + strconv.FormatInt(*t.window, 10) + "-token window"
	}
	return cs, true
}

// ProviderCalls is the run's model responses with their usage.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	ses, err := s.session(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []store.ProviderCall
	for i := range ses.turns {
		if pc, ok := ses.call(&ses.turns[i]); ok {
			out = append(out, pc)
		}
	}
	return out, nil
}

// ContextSamples is each turn's context size as Codex reported it.
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	ses, err := s.session(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []store.ContextSample
	for i := range ses.turns {
		if cs, ok := ses.sample(&ses.turns[i]); ok {
			out = append(out, cs)
		}
	}
	return out, nil
}

// AgentEvents are the spawns the runs' spawn_agent results name.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	if len(runIDs) == 0 {
		runs, err := s.Runs(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			runIDs = append(runIDs, r.ID)
		}
	}
	var out []store.AgentEvent
	for _, id := range runIDs {
		ses, err := s.session(ctx, id)
		if err != nil {
			continue
		}
		out = append(out, ses.spawnEvents(ses.spawns)...)
	}
	return out, nil
}

func (ses *session) spawnEvents(spawns []spawn) []store.AgentEvent {
	var out []store.AgentEvent
	for _, sp := range spawns {
		out = append(out, store.AgentEvent{RowID: sp.row, RunID: ses.id, Step: sp.step, Kind: store.AgentSpawn, ChildRunID: sp.child})
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimLeft(s, "\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
