package claudecode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vigil-run/vigil/store"
)

// Format is the name the format registers under.
const Format = "claude-code"

// NotDecided is why no decision is taken here.
const NotDecided = "decisions on Claude Code sessions go through vigil gate"

func init() {
	store.Register(store.Format{
		Name:   Format,
		Detect: func(path string) bool { _, ok := resolve(path); return ok },
		Open:   Open,
		Home:   DefaultPaths,
	})
}

// Store is a Claude Code store opened for reading.
type Store struct {
	path string
	lay  layout

	mu       sync.Mutex
	problems []error
	seen     map[string]bool // problems already reported, by file:line
	counted  map[string]counted
	callers  map[string]string // a nested sub-agent's transcript → its parent's run id

	tree tree

	detailMu sync.Mutex
	detail   *detailFold
}

// counted is a transcript's counts as far as it was read, so RunStats
// reads only what was appended since.
type counted struct {
	ino   uint64
	off   int64
	fold  fold
	stats store.RunStats
}

// Open opens path (a config directory, its projects directory, or one
// project directory) as a Claude Code store.
func Open(path string, _ store.Options) (store.Core, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	lay, ok := resolve(abs)
	if !ok {
		return nil, store.Errorf(abs, store.ErrNotAStore, nil, "not a Claude Code store (no projects directory or session transcript)")
	}
	return &Store{path: abs, lay: lay, seen: map[string]bool{}, counted: map[string]counted{}, callers: map[string]string{}}, nil
}

func (s *Store) Path() string                                   { return s.path }
func (s *Store) Format() string                                 { return Format }
func (s *Store) ReadOnly() (bool, string)                       { return true, NotDecided }
func (s *Store) RecordsLeases() bool                            { return s.lay.config != "" }
func (s *Store) Close() error                                   { return nil }
func (s *Store) Head(ctx context.Context) (store.Cursor, error) { return s.head(), nil }

// Problems are the malformed lines met so far, one error each.
func (s *Store) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.problems...)
}

func (s *Store) report(path string, p *problem) {
	if p == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := path + ":" + itoa(p.line)
	if s.seen[key] {
		return
	}
	s.seen[key] = true
	s.problems = append(s.problems, store.Errorf(path, store.ErrCorrupt, p.err, "%s:%d: malformed line skipped", path, p.line))
}

// entry is one transcript: a session, or one of its sub-agents.
type entry struct {
	id, parent, path, session string
	meta                      *agentMeta
}

// agentMeta is a sub-agent's .meta.json.
type agentMeta struct {
	Description string `json:"description"`
	ToolUseID   string `json:"toolUseId"`
	SpawnDepth  int    `json:"spawnDepth"`
	Model       string `json:"model"`
	Finished    bool   `json:"finished"`
}

// sessionEntries is one session's transcript f and its sub-agents', each
// followed by its sub-agents. A sub-agent's parent is the transcript
// holding the tool call its meta names (the session itself at depth 1).
// Callers hold s.tree.listMu.
func (s *Store) sessionEntries(f string) []entry {
	sid := strings.TrimSuffix(filepath.Base(f), ".jsonl")
	out := []entry{{id: sid, path: f, session: sid}}
	subs := s.subagentFiles(f)
	for _, sf := range subs {
		e := entry{id: strings.TrimSuffix(filepath.Base(sf), ".jsonl"), path: sf, session: sid, parent: sid}
		if m := s.tree.meta(strings.TrimSuffix(sf, ".jsonl") + ".meta.json"); m != nil {
			e.meta = m
			if m.SpawnDepth > 1 && m.ToolUseID != "" {
				e.parent = s.callerOf(subs, sf, m.ToolUseID, sid)
			}
		}
		out = append(out, e)
	}
	return out
}

// callerOf is the sibling sub-agent whose transcript holds the tool call
// id (a nested spawn), else the session. A caller found is kept: the
// spawning call is written once.
func (s *Store) callerOf(subs []string, self, callID, session string) string {
	s.mu.Lock()
	p, ok := s.callers[self]
	s.mu.Unlock()
	if ok {
		return p
	}
	needle := []byte(`"id":"` + callID + `"`)
	for _, sf := range subs {
		if sf == self {
			continue
		}
		if b, err := os.ReadFile(sf); err == nil && containsBytes(b, needle) {
			p = strings.TrimSuffix(filepath.Base(sf), ".jsonl")
			s.mu.Lock()
			s.callers[self] = p
			s.mu.Unlock()
			return p
		}
	}
	return session
}

func (s *Store) find(id string) (entry, error) {
	for _, e := range s.scan() {
		if e.id == id {
			return e, nil
		}
	}
	return entry{}, store.Errorf(s.path, store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
}

// Runs reads each transcript's head and tail only, on every core: a
// history of thousands of sessions is that many files to decode while the
// explorer's first page waits for the rest.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	live := liveSessions(s.lay.registry(), time.Now())
	entries := s.scan()
	depth := depths(entries)
	out := make([]store.Run, len(entries))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range entries {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			out[i] = s.run(entries[i], live)
			out[i].Depth = depth[entries[i].id]
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// depths is each transcript's depth in its tree.
func depths(entries []entry) map[string]int {
	parent := make(map[string]string, len(entries))
	for _, e := range entries {
		parent[e.id] = e.parent
	}
	out := make(map[string]int, len(entries))
	for _, e := range entries {
		d := 0
		for p := e.parent; p != "" && d < len(entries); p = parent[p] {
			d++
		}
		out[e.id] = d
	}
	return out
}

// run is one transcript's run, from its head (goal, start, workspace) and
// tail (where it stands), and the registry's live sessions.
func (s *Store) run(e entry, live map[string]store.Lease) store.Run {
	r := store.Run{ID: e.id, ParentID: e.parent, Provider: "anthropic", Status: store.StatusRunning}
	// Most transcripts say what run needs in their first and last few
	// kilobytes; the others are read again as far as the tail always was.
	var stop string
	var atRest bool
	for _, n := range []int64{16 << 10, 64 << 10} {
		head, tail, size, err := headTail(e.path, n)
		if err != nil {
			r.Status, r.Outcome = store.StatusFailed, store.OutcomeUnreadable
			return r
		}
		prompted := runHead(&r, head)
		var turned bool
		stop, atRest, turned = tailState(tail)
		if size <= n || prompted && turned {
			break
		}
		r.StartedAt, r.Workspace, r.Goal = time.Time{}, "", ""
	}
	if e.meta != nil && r.Goal == "" {
		r.Goal = e.meta.Description
	}
	r.TurnKind = stop
	lease, isLive := live[e.session]
	switch {
	case e.meta != nil && e.meta.Finished:
		r.Status, r.Outcome = store.StatusCompleted, outcomeOf(stop)
	case isLive:
		if e.parent == "" {
			r.Lease = &lease
		}
	case s.RecordsLeases() && atRest:
		r.Status, r.Outcome = store.StatusCompleted, outcomeOf(stop)
	}
	return r
}

// runHead sets r's start, workspace and goal from a transcript's head;
// false when head ends before the first prompt.
func runHead(r *store.Run, head []byte) bool {
	for _, l := range completeLines(head) {
		var rec record
		if json.Unmarshal(l, &rec) != nil {
			continue
		}
		if r.StartedAt.IsZero() {
			r.StartedAt, _ = time.Parse(time.RFC3339Nano, rec.Timestamp)
		}
		r.Workspace = cmpOr(r.Workspace, rec.Cwd)
		var prompt string
		if rec.Type == "user" && !rec.IsMeta && rec.Message != nil && json.Unmarshal(rec.Message.Content, &prompt) == nil {
			r.Goal = oneLine(prompt, 400)
			return true
		}
	}
	return false
}

// tailState is the last turn's stop reason in tail and whether the session
// is at rest after it; turned is false when tail may begin inside that
// turn (a longer tail could say otherwise).
func tailState(tail []byte) (stop string, atRest, turned bool) {
	f := fold{keep: 256}
	lines := completeLines(tail)
	from := lastTurnStart(lines)
	for _, l := range lines[from:] {
		f.feed(l, func(t *turn) { stop, atRest = t.stop, !t.running() && t.stop != "tool_use" })
	}
	if f.open != nil {
		stop, atRest = f.open.stop, false
	}
	return stop, atRest, from > 0
}

// lastTurnStart is where the last turn of lines begins: its first line
// (a turn is a run of assistant lines of one message) when lines hold one,
// else 0. Only the last turn and what follows it say where a session
// stands, and a tail is mostly earlier turns' lines: those are not
// decoded.
func lastTurnStart(lines [][]byte) int {
	id := ""
	for i := len(lines) - 1; i >= 0; i-- {
		var r struct {
			Type    string `json:"type"`
			Message *struct {
				ID string `json:"id"`
			} `json:"message"`
		}
		if json.Unmarshal(lines[i], &r) != nil {
			continue // a line fold skips too
		}
		mine := r.Type == "assistant" && r.Message != nil
		switch {
		case id == "" && mine:
			id = r.Message.ID
		case id != "" && (!mine || r.Message.ID != id):
			return i + 1
		}
	}
	return 0
}

// outcomeOf maps the last turn's stop reason: end_turn is a finished run;
// another word passes through.
func outcomeOf(stop string) store.Outcome {
	if stop == "end_turn" || stop == "" {
		return store.OutcomeFinished
	}
	return store.Outcome(stop)
}

// turns folds one transcript whole: every turn, the last one possibly
// still open (its calls running).
func (s *Store) turns(path string, keep int) ([]*turn, error) {
	f := fold{keep: keep}
	var out []*turn
	emit := func(t *turn) { out = append(out, t) }
	_, err := readLines(path, 0, func(l []byte) { s.report(path, f.feed(l, emit)) })
	if err != nil {
		return nil, store.Errorf(path, store.ErrIO, err, "")
	}
	if f.open != nil {
		out = append(out, f.open)
	}
	return out, nil
}

// RunStats counts each run's turns and tokens; a transcript counted
// before is read on from where that count stopped.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	out := map[string]store.RunStats{}
	byID := map[string]entry{}
	for _, e := range s.scan() {
		byID[e.id] = e
	}
	for _, id := range ids {
		if e, ok := byID[id]; ok {
			st, err := s.count(e.path)
			if err != nil {
				return nil, err
			}
			out[id] = st
		}
	}
	return out, nil
}

func (s *Store) count(path string) (store.RunStats, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.RunStats{}, store.Errorf(path, store.ErrIO, err, "")
	}
	s.mu.Lock()
	c, ok := s.counted[path]
	s.mu.Unlock()
	if !ok || c.ino != store.Inode(fi) || fi.Size() < c.off {
		c = counted{ino: store.Inode(fi), fold: fold{keep: cursorKeep, counting: true}}
	}
	c.fold = c.fold.clone()
	add := func(t *turn) {
		c.stats.Steps, c.stats.Through = t.number, t.commit
		if tot := t.usage.total(); tot != nil {
			c.stats.Tokens += *tot
		}
	}
	off, err := readLines(path, c.off, func(l []byte) { s.report(path, c.fold.feed(l, add)) })
	if err != nil {
		return store.RunStats{}, store.Errorf(path, store.ErrIO, err, "")
	}
	c.off = off
	s.mu.Lock()
	s.counted[path] = c
	s.mu.Unlock()
	st := c.stats
	// The turn still open counts as a step, but its tokens come with its
	// committed row (Changes), whose row id is past Through: counted here
	// too, a reader adding that row would count them twice.
	if t := c.fold.open; t != nil {
		st.Steps = t.number
	}
	return st, nil
}

func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	e, err := s.find(runID)
	if err != nil {
		return nil, err
	}
	ts, err := s.turns(e.path, 4<<10)
	if err != nil {
		return nil, err
	}
	out := make([]store.Step, len(ts))
	for i, t := range ts {
		out[i] = t.step(runID)
	}
	return out, nil
}

func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	e, err := s.find(runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	if d, ok := s.recentDetail(e.path, runID, rowID); ok {
		return d, nil
	}
	ts, err := s.turns(e.path, store.MaxDetailBytes)
	if err != nil {
		return store.StepDetail{}, err
	}
	for _, t := range ts {
		if t.row == rowID || t.commit == rowID { // its placeholder's id or its own
			return t.detail(runID), nil
		}
	}
	return store.StepDetail{}, store.Errorf(e.path, store.ErrNotFound, nil, "no step at row %d (line %d) of run %s", rowID, lineOf(rowID), runID)
}

func (t *turn) detail(runID string) store.StepDetail {
	d := store.StepDetail{Step: t.step(runID), Prompt: t.prompt, TurnText: t.text, HasTurnText: t.text != "",
		ProviderCalls: []store.ProviderCall{t.providerCall(runID)}}
	var calls, results []string
	for _, c := range t.calls {
		d.Tools = append(d.Tools, store.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
		calls = append(calls, c.name+" "+c.args)
		switch {
		case !c.hasResult:
			results = append(results, c.name+": running (no result yet)")
		case c.isError:
			results = append(results, c.name+" failed: "+c.result)
		default:
			results = append(results, c.result)
		}
	}
	d.ToolCallFull, d.Result = strings.Join(calls, "\n"), strings.Join(results, "\n")
	return d
}

func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	e, err := s.find(runID)
	if err != nil {
		return nil, err
	}
	ts, err := s.turns(e.path, 1)
	if err != nil {
		return nil, err
	}
	var out []store.ContextSample
	for _, t := range ts {
		out = append(out, t.contextSample(runID))
	}
	return out, nil
}

func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	e, err := s.find(runID)
	if err != nil {
		return nil, err
	}
	ts, err := s.turns(e.path, 1)
	if err != nil {
		return nil, err
	}
	var out []store.ProviderCall
	for _, t := range ts {
		out = append(out, t.providerCall(runID))
	}
	return out, nil
}

// Requests: a permission Claude Code waits on leaves no record in the
// transcript, so there are none to show here.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	return nil, nil
}

// AgentEvents are the spawns the sub-agents' meta files record.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	want := map[string]bool{}
	for _, id := range runIDs {
		want[id] = true
	}
	var out []store.AgentEvent
	for _, e := range s.scan() {
		if e.parent == "" || (len(want) > 0 && !want[e.parent]) {
			continue
		}
		ev := store.AgentEvent{RunID: e.parent, Kind: store.AgentSpawn, ChildRunID: e.id}
		if e.meta != nil {
			ev.Detail = e.meta.Description
		}
		out = append(out, ev)
	}
	return out, nil
}

// Classify: no decision written here reaches a Claude Code session.
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved || run.Ended() {
		return store.Closed, "no longer waiting"
	}
	return store.Deferred, NotDecided
}

func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	return store.DecideResult{}, store.Errorf(s.path, store.ErrReadOnly, nil, "%s", NotDecided)
}
