package geminicli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
)

// FormatName is the name the format registers under.
const FormatName = "gemini-cli"

// NotDecided is why decisions are not taken on these sessions.
const NotDecided = "decisions on Gemini CLI sessions go through vigil gate"

func init() {
	store.Register(store.Format{
		Name:   FormatName,
		Detect: detect,
		Open:   func(path string, _ store.Options) (store.Core, error) { return Open(path) },
		Home:   DefaultPaths,
	})
}

func detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return len(chatsDirs(path)) > 0
	}
	return fi.Mode().IsRegular() && isChatFile(path)
}

// Store is a set of Gemini CLI chat files opened for reading.
type Store struct {
	root   string
	single string   // the one chat file named, "" for a directory
	dirs   []string // the chats directories

	mu       sync.Mutex
	byRun    map[string]sessionFile // run id → its file, as last listed
	index    map[string]*fileIndex  // path → the light fold Changes extends
	whole    *fileIndex             // the last session read whole, extended as it grows
	problems map[string]error       // "file:line" → the malformed line
}

// Open opens a chats directory (or a directory above one) or one chat file.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, store.Errorf(abs, store.ErrNotFound, err, "")
	}
	s := &Store{root: abs, byRun: map[string]sessionFile{}, index: map[string]*fileIndex{}, problems: map[string]error{}}
	switch {
	case fi.IsDir():
		if s.dirs = chatsDirs(abs); len(s.dirs) == 0 {
			return nil, store.Errorf(abs, store.ErrNotAStore, nil, "no Gemini CLI chats (chats/session-*.jsonl) under this directory")
		}
	case isChatFile(abs):
		s.single = abs
	default:
		return nil, store.Errorf(abs, store.ErrNotAStore, nil, "not a Gemini CLI chat file (its first line is no session header)")
	}
	return s, nil
}

func (s *Store) Path() string             { return s.root }
func (s *Store) Format() string           { return FormatName }
func (s *Store) ReadOnly() (bool, string) { return true, NotDecided }

// RecordsLeases is false: Gemini CLI records no process that drives a
// session, so whether one is live is not known.
func (s *Store) RecordsLeases() bool { return false }
func (s *Store) Close() error        { return nil }

// files lists the chat files now.
func (s *Store) files() []sessionFile {
	if s.single != "" {
		f := sessionFile{path: s.single, project: filepath.Dir(filepath.Dir(s.single))}
		if filepath.Base(filepath.Dir(s.single)) != "chats" {
			f.parent = filepath.Base(filepath.Dir(s.single))
			f.project = filepath.Dir(f.project)
		}
		return []sessionFile{f}
	}
	return listFiles(s.dirs)
}

// problem records a malformed line once.
func (s *Store) problem(path string, n int, err error) {
	key := fmt.Sprintf("%s:%d", path, n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.problems[key]; !ok {
		s.problems[key] = store.Errorf(path, store.ErrCorrupt, err, "line %d: malformed chat record, skipped: %v", n, err)
	}
}

// Problems lists the malformed lines met so far, one each.
func (s *Store) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.problems))
	for k := range s.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]error, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.problems[k])
	}
	return out
}

// fileOf finds a run's chat file, listing the files again if it is new.
func (s *Store) fileOf(id string) (sessionFile, error) {
	s.mu.Lock()
	f, ok := s.byRun[id]
	s.mu.Unlock()
	if ok {
		return f, nil
	}
	if _, err := s.Runs(context.Background()); err != nil {
		return sessionFile{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.byRun[id]; ok {
		return f, nil
	}
	return sessionFile{}, store.Errorf(s.root, store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
}

// runOf dresses a conv as a run.
func runOf(c *conv, f sessionFile) store.Run {
	r := store.Run{ID: c.sessionID, ParentID: f.parent, Goal: c.goal, Workspace: workspace(f.project),
		Provider: "gemini", Status: store.StatusRunning, TurnKind: c.kind}
	if r.ParentID != "" {
		r.Depth = 1
	}
	r.StartedAt = parseTime(c.start)
	r.Status, r.Outcome = status(c)
	if r.Status.Ended() {
		sum := &store.Summary{Outcome: r.Outcome, Success: r.Outcome.Succeeded(), FinishedAt: parseTime(c.updated)}
		if !r.StartedAt.IsZero() && !sum.FinishedAt.IsZero() {
			sum.Duration, sum.HasDuration = sum.FinishedAt.Sub(r.StartedAt), true
		}
		r.Summary = sum
	}
	return r
}

// status is what the newest message says: a model turn that wrote text
// and no tool call ended the run's turn, as did a sub-agent's
// complete_task or its summary; an error message failed it. Anything else
// is still going (the CLI records no process, so not whether it is alive).
func status(c *conv) (store.Status, store.Outcome) {
	e := c.last()
	switch {
	case c.kind == "subagent" && c.summary != "":
		return store.StatusCompleted, store.OutcomeComplete
	case e == nil:
		return store.StatusRunning, ""
	case e.msg.Type == "error":
		return store.StatusFailed, store.OutcomeError
	case e.msg.Type != "gemini":
		return store.StatusRunning, ""
	}
	calls := e.msg.ToolCalls
	if len(calls) == 0 {
		// A turn's calls are written only when they finish: a turn with no
		// text and no calls yet is waiting on them. One with text may be
		// an answer or text before calls still running; the file cannot
		// tell until they land, and an answer is what it says so far.
		if e.msg.said {
			return store.StatusCompleted, store.OutcomeComplete
		}
		return store.StatusRunning, ""
	}
	if last := calls[len(calls)-1]; last.Name == "complete_task" && last.Status == "success" {
		return store.StatusCompleted, store.OutcomeComplete
	}
	return store.StatusRunning, ""
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Runs reads each chat file's head and tail only: its header and first
// prompt, and its newest messages for the status.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	files := s.files()
	runs := make([]store.Run, 0, len(files))
	byRun := map[string]sessionFile{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := headTail(f.path)
		if err != nil || c.sessionID == "" {
			continue // gone since it was listed, or its header not written yet
		}
		r := runOf(c, f)
		byRun[r.ID] = f
		runs = append(runs, r)
	}
	s.mu.Lock()
	s.byRun = byRun
	s.mu.Unlock()
	return runs, nil
}

// headTail folds a file's first and last stretch (the whole of a small one).
func headTail(path string) (*conv, error) {
	const stretch = 256 << 10
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	c := newConv(true)
	apply := func(l rawLine) error {
		if rec, err := parseLine(l.text); err == nil {
			c.apply(rec, l.off)
		}
		return nil
	}
	if fi.Size() <= 2*stretch {
		_, err = eachLine(f, 0, -1, apply)
		return c, err
	}
	if _, err := eachLine(f, 0, stretch, apply); err != nil {
		return nil, err
	}
	// The tail from the first line that starts in it.
	from := fi.Size() - stretch
	first := true
	_, err = eachLine(f, from-1, -1, func(l rawLine) error {
		if first {
			first = false
			return nil
		}
		return apply(l)
	})
	return c, err
}

// RunStats counts each run's turns and the tokens they report.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	out := map[string]store.RunStats{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := s.turnsOf(id)
		if errors.Is(err, store.ErrNoSuchRun) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var st store.RunStats
		for _, e := range c {
			if e.num > 0 {
				st.Steps = e.num
				if e.msg.Tokens != nil {
					st.Tokens += e.msg.Tokens.Total
				}
			}
			st.Through = max(st.Through, e.row)
		}
		st.Provider = "gemini"
		out[id] = st
	}
	return out, nil
}

// turnsOf is a run's messages in order, read whole. The last session read is kept
// and extended by what was appended since: the timeline, its details and
// its calls are read one after another, often while the session grows.
func (s *Store) turnsOf(id string) ([]*entry, error) {
	f, err := s.fileOf(id)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(f.path)
	if err != nil {
		return nil, store.Errorf(f.path, store.ErrIO, err, "")
	}
	ino := store.Inode(fi)
	s.mu.Lock()
	ix := s.whole
	if ix == nil || ix.path != f.path || ix.ino != ino || fi.Size() < ix.upto {
		ix = &fileIndex{path: f.path, ino: ino, conv: newConv(false)}
		s.whole = ix
	}
	s.mu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, store.Errorf(f.path, store.ErrIO, err, "")
	}
	defer fh.Close()
	if _, err := eachLine(fh, ix.upto, -1, func(l rawLine) error { ix.take(s, f.path, l); return nil }); err != nil {
		return nil, store.Errorf(f.path, store.ErrIO, err, "")
	}
	return ix.conv.entries(), nil
}

// Steps are the run's model turns, each with its tool calls and results.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	c, err := s.turnsOf(runID)
	if err != nil {
		return nil, err
	}
	var out []store.Step
	for _, e := range c {
		if e.num > 0 {
			r := e.stepOf(runID)
			out = append(out, store.Step{RowID: r.RowID, RunID: runID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
				ToolCall: r.ToolCall, ResultHead: r.ResultHead, Tokens: r.Tokens, At: parseTime(e.msg.Timestamp)})
		}
	}
	return out, nil
}

// stepRow is a model turn as a timeline row.
func stepRow(runID string, e *entry) store.StepRow {
	r := store.StepRow{RowID: e.row, RunID: runID, Number: e.num, Kind: store.StepTurn, Decision: "answer"}
	if e.msg.Tokens != nil {
		r.Tokens = e.msg.Tokens.Total
	}
	if len(e.msg.ToolCalls) == 0 {
		r.ResultHead = head(partsText(e.msg.Content, false))
		return r
	}
	r.Decision = "tool call"
	var names, results []string
	for _, tc := range e.msg.ToolCalls {
		names = append(names, tc.Name+" "+string(tc.Args))
		if tc.done() {
			results = append(results, resultHead(tc.resultText()))
		} else {
			results = append(results, "(running)")
		}
	}
	r.ToolCall = cut(strings.Join(names, "; "), 200)
	r.ResultHead = cut(strings.Join(results, "; "), 200)
	return r
}

// resultHead is a result's first line of its own: the CLI wraps a shell's
// output in a tag line (<untrusted_context>), which says nothing in a head.
func resultHead(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !(strings.HasPrefix(l, "<") && strings.HasSuffix(l, ">") && !strings.Contains(l[1:], "<")) {
			return cut(l, 200)
		}
	}
	return ""
}

func head(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return cut(s, 200)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// StepDetail is one turn whole: the prompt that led to it, its text, its
// calls and their results, and its provider call.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	c, err := s.turnsOf(runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	var prompt []string
	for _, e := range c {
		if e.num == 0 {
			if t := partsText(e.msg.Content, true); t != "" {
				prompt = append(prompt, t)
			}
			continue
		}
		if e.row != rowID {
			prompt = prompt[:0]
			continue
		}
		r := e.stepOf(runID)
		d := store.StepDetail{Step: store.Step{RowID: r.RowID, RunID: runID, Number: r.Number, Kind: r.Kind, Decision: r.Decision,
			ToolCall: r.ToolCall, ResultHead: r.ResultHead, Tokens: r.Tokens, At: parseTime(e.msg.Timestamp)}}
		d.Prompt = strings.Join(prompt, "\n\n")
		d.TurnText = partsText(e.msg.Content, false)
		d.HasTurnText = d.TurnText != ""
		var calls, results []string
		for _, tc := range e.msg.ToolCalls {
			d.Tools = append(d.Tools, store.ToolCall{ID: tc.wireID(), Name: tc.Name, Arguments: string(tc.Args)})
			calls = append(calls, tc.Name+" "+string(tc.Args))
			res := "(running)"
			if tc.done() {
				res = tc.resultText()
			}
			results = append(results, fmt.Sprintf("[%s %s] %s", tc.Name, tc.Status, res))
		}
		d.ToolCallFull = strings.Join(calls, "\n")
		d.Result = strings.Join(results, "\n")
		d.ProviderCalls = []store.ProviderCall{providerCall(runID, e)}
		for _, f := range []struct {
			name string
			v    *string
		}{{"prompt", &d.Prompt}, {"result", &d.Result}, {"tool call", &d.ToolCallFull}, {"turn", &d.TurnText}} {
			if len(*f.v) > store.MaxDetailBytes {
				*f.v = (*f.v)[:store.MaxDetailBytes]
				d.Truncated = append(d.Truncated, f.name)
			}
		}
		return d, nil
	}
	return store.StepDetail{}, store.Errorf(s.root, store.ErrNotFound, nil, "run %s has no step at row %d", runID, rowID)
}

// providerCall is a turn's model call: the tokens the turn reports, nil
// where it reports none. Gemini reports no cache write.
func providerCall(runID string, e *entry) store.ProviderCall {
	pc := store.ProviderCall{RowID: e.row, RunID: runID, Step: e.num, Attempt: 1, Provider: "gemini", Model: e.msg.Model,
		At: parseTime(e.msg.Timestamp)}
	if t := e.msg.Tokens; t != nil {
		pc.PromptTokens, pc.CompletionTokens, pc.TotalTokens = &t.Input, &t.Output, &t.Total
		pc.CacheReadTokens, pc.ReasoningTokens = &t.Cached, t.Thoughts
	}
	return pc
}

// contextSample is a turn's prompt size as the provider reported it.
func contextSample(runID string, e *entry) (store.ContextSample, bool) {
	if e.msg.Tokens == nil {
		return store.ContextSample{}, false
	}
	in := e.msg.Tokens.Input
	return store.ContextSample{RowID: e.row, RunID: runID, Step: e.num, NoEstimate: true, Reported: &in}, true
}

// ContextSamples are the prompt sizes the turns report.
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	c, err := s.turnsOf(runID)
	if err != nil {
		return nil, err
	}
	var out []store.ContextSample
	for _, e := range c {
		if cs, ok := contextSample(runID, e); ok && e.num > 0 {
			out = append(out, cs)
		}
	}
	return out, nil
}

// ProviderCalls are the turns' model calls.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	c, err := s.turnsOf(runID)
	if err != nil {
		return nil, err
	}
	var out []store.ProviderCall
	for _, e := range c {
		if e.num > 0 {
			out = append(out, providerCall(runID, e))
		}
	}
	return out, nil
}

// Requests: a call parked on a permission is not in the chat file.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	return nil, nil
}

// AgentEvents: the tree is the sub-agents' ParentID; nothing more is kept.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	return nil, nil
}

// Classify: nothing vigil writes reaches a Gemini CLI session.
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved || run.Status.Ended() {
		return store.Closed, "no longer waiting"
	}
	return store.Deferred, NotDecided
}

// Decide is refused: the chat files are the CLI's own.
func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	return store.DecideResult{}, store.Errorf(s.root, store.ErrReadOnly, nil, "%s", store.Because(store.ErrReadOnly, NotDecided))
}
