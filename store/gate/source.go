package gate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Format names the gate store's format.
const Format = "vigil-gate"

// AgentClaudeCode is the agent name Claude Code's requests carry.
const AgentClaudeCode = "claude-code"

func init() {
	store.Register(store.Format{
		Name:   Format,
		Detect: Detect,
		Open:   func(path string, opts store.Options) (store.Core, error) { return Open(path, opts) },
		Files:  []string{FileName},
		Home: func(getenv func(string) string) []string {
			return []string{Path(getenv)}
		},
	})
}

var preflight = sqlitex.Preflight{
	IsDir: "is a directory, not vigil's gate store (it is usually ~/.local/state/vigil/gate.db)",
	Empty: "not vigil's gate store: the file is empty",
}

// Detect reports whether path is a gate store: a SQLite file holding the
// gate's table.
func Detect(path string) bool {
	seen, err := preflight.Look(path)
	if err != nil {
		return false
	}
	if has, sure := seen.HasTable(table); sure {
		return has
	}
	db, _, err := sqlitex.OpenRead(seen.Abs, seen.Head)
	if err != nil {
		return false
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n)
	return err == nil && n > 0
}

// Store is an open gate store as a store.Core.
type Store struct {
	path     string
	readOnly bool
	why      string
	read     *sql.DB
	reading  *sqlitex.Reading
	write    sqlitex.Writer
	upToDate atomic.Bool // the file has the columns added since the first gate stores
}

// columns is what to select: a file an earlier vigil made lacks the added
// columns until a newer hook adds them, which is then seen for good.
func (s *Store) columns(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (string, error) {
	if s.upToDate.Load() {
		return columns, nil
	}
	ok, err := hasAdded(ctx, q)
	if err != nil {
		return "", sqlitex.MapErr(s.path, err)
	}
	if !ok {
		return columnsBefore, nil
	}
	s.upToDate.Store(true)
	return columns, nil
}

// Open opens the gate store at path for reading (and, unless opts says
// read-only, for decisions).
func Open(path string, opts store.Options) (*Store, error) {
	abs, head, err := preflight.Check(path)
	if err != nil {
		return nil, err
	}
	db, rd, err := sqlitex.OpenRead(abs, head)
	if err != nil {
		return nil, sqlitex.MapErr(abs, err)
	}
	s := &Store{path: abs, read: db, reading: rd}
	ok, why := sqlitex.Writable(abs, opts.ReadOnly)
	s.readOnly, s.why = !ok, why
	return s, nil
}

func (s *Store) Path() string             { return s.path }
func (s *Store) Format() string           { return Format }
func (s *Store) ReadOnly() (bool, string) { return s.readOnly, s.why }
func (s *Store) RecordsLeases() bool      { return false }

// ReadingNote says what the browsing connection reads without.
func (s *Store) ReadingNote() string { return s.reading.Short() }

// CarriesReason: a deny's reason reaches the agent (Claude Code shows it
// as the tool's result).
func (s *Store) CarriesReason(kind store.RequestKind, v store.Verdict) bool {
	return kind == store.Approval && v == store.VerdictDeny
}

// rows reads the requests matching where (a short read).
func (s *Store) rows(ctx context.Context, where string, args ...any) ([]Row, error) {
	cols, err := s.columns(ctx, s.read)
	if err != nil {
		return nil, err
	}
	q := "SELECT " + cols + " FROM gate_requests"
	if where != "" {
		q += " WHERE " + where
	}
	rs, err := s.read.QueryContext(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return nil, sqlitex.MapErr(s.path, err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		r, err := scanRow(rs)
		if err != nil {
			return nil, sqlitex.MapErr(s.path, err)
		}
		out = append(out, r)
	}
	return out, sqlitex.MapErr(s.path, rs.Err())
}

// runID is the run a request belongs to: its sub-agent's, else its session's.
func runID(r Row) string {
	if r.AgentID != "" {
		return r.AgentID
	}
	return r.SessionID
}

// agentRun is the id the agent's own store gives the run a request acts
// for (agent names are the formats' names).
func agentRun(r Row) string {
	if r.AgentID != "" && r.Agent == AgentClaudeCode {
		return "agent-" + r.AgentID // its transcript is subagents/agent-<id>.jsonl
	}
	return runID(r)
}

// runsOf groups rows into runs: one per session, one per sub-agent under it.
func runsOf(rows []Row) []sessionRun {
	byID := map[string]*sessionRun{}
	var order []string
	add := func(id, parent string, r Row) {
		run, ok := byID[id]
		if !ok {
			run = &sessionRun{Run: store.Run{ID: id, ParentID: parent, Workspace: r.Cwd, Provider: r.Agent,
				Goal: fmt.Sprintf("%s session %s (gate requests)", r.Agent, r.SessionID), StartedAt: r.AskedAt, StatsKnown: true}}
			if parent != "" {
				run.Depth = 1
				run.Goal = fmt.Sprintf("%s sub-agent %s (gate requests)", r.Agent, id)
			}
			byID[id] = run
			order = append(order, id)
		}
		if st, _ := r.Effective(); st == StateWaiting {
			run.waiting = true
		}
	}
	for _, r := range rows {
		add(r.SessionID, "", r)
		if r.AgentID != "" {
			add(r.AgentID, r.SessionID, r)
		}
	}
	out := make([]sessionRun, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

// sessionRun is a run with what the gate knows of it.
type sessionRun struct {
	store.Run
	waiting bool
}

func (r sessionRun) dressed() store.Run {
	run := r.Run
	if r.waiting {
		run.Status = store.StatusRunning
	} else {
		run.Status, run.Outcome = store.StatusCompleted, "answered"
	}
	return run
}

func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	rows, err := s.rows(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []store.Run
	for _, r := range runsOf(rows) {
		out = append(out, r.dressed())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.After(out[j].StartedAt) })
	return out, nil
}

func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	out := make(map[string]store.RunStats, len(ids))
	for _, id := range ids {
		out[id] = store.RunStats{}
	}
	return out, nil
}

// The gate records requests, not timelines: a request is linked to its
// tool call by its tool_use_id, which the agent's own store shows.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) { return nil, nil }
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	return store.StepDetail{}, store.Errorf(s.path, store.ErrNotFound, nil, "the gate store keeps no steps")
}
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	return nil, nil
}
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	return nil, nil
}
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	return nil, nil
}

func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	where := ""
	if unresolvedOnly {
		where = "state = 'waiting'"
	}
	rows, err := s.rows(ctx, where)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range runIDs {
		want[id] = true
	}
	var out []store.Request
	for _, r := range rows {
		q := requestOf(r)
		if len(want) > 0 && !want[q.RunID] {
			continue
		}
		if unresolvedOnly && q.Resolved {
			continue
		}
		out = append(out, q)
	}
	return out, nil
}

// Request reads one request by its key.
func (s *Store) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	id, err := strconv.ParseInt(key.ID, 10, 64)
	if key.Kind != store.Approval || err != nil {
		return store.Request{}, store.Errorf(s.path, store.ErrNoSuchReq, nil, "%s: the gate store holds approvals with numeric ids", key)
	}
	rows, err := s.rows(ctx, "id = ?", id)
	if err != nil {
		return store.Request{}, err
	}
	if len(rows) == 0 {
		return store.Request{}, store.Errorf(s.path, store.ErrNoSuchReq, nil, "no %s in the gate store", key)
	}
	return requestOf(rows[0]), nil
}

// requestOf is a row as an approval.
func requestOf(r Row) store.Request {
	q := store.Request{Kind: store.Approval, ID: strconv.FormatInt(r.ID, 10), RunID: runID(r),
		Act: actOf(r.Tool), Target: targetOf(r.Tool, r.Input), AskedAt: r.AskedAt,
		Content: r.Input, HasContent: true, ContentBytes: int64(len(r.Input)), AlwaysAllow: alwaysAllow(r.Suggestions),
		For: store.RunLink{Format: r.Agent, RunID: agentRun(r), CallID: r.ToolUseID}}
	if len(q.Content) > store.MaxContentBytes {
		q.Content = q.Content[:store.MaxContentBytes]
	}
	if r.AgentID != "" {
		q.Ancestry = []string{r.SessionID, r.AgentID}
	} else {
		q.Ancestry = []string{r.SessionID}
	}
	state, reason := r.Effective()
	switch state {
	case StateWaiting:
		return q
	case StateApproved:
		q.Decision = string(store.VerdictApprove)
	case StateDenied:
		q.Decision = string(store.VerdictDeny)
	default:
		q.Decision = state
		q.StandingReason = reason
	}
	q.Resolved, q.Reason, q.DecidedBy, q.DecidedAt = true, reason, r.DecidedBy, r.DecidedAt
	return q
}

// actOf maps the agents' tool names (Claude Code's, Gemini CLI's, Codex's,
// opencode's) onto the approval acts.
func actOf(tool string) string {
	switch t := strings.ToLower(tool); t {
	case "bash", "bashoutput", "killshell", "run_shell_command", "shell", "exec_command", "local_shell":
		return "exec"
	case "write", "edit", "multiedit", "notebookedit", "write_file", "replace", "apply_patch", "patch":
		return "write"
	case "read", "glob", "grep", "ls", "list", "read_file", "read_many_files", "list_directory", "search_file_content":
		return "read"
	case "webfetch", "websearch", "web_fetch", "google_web_search":
		return "net"
	default:
		return t
	}
}

// targetOf is what a request acts on: a command, a file, else the input.
func targetOf(tool, input string) string {
	var in map[string]any
	if json.Unmarshal([]byte(input), &in) == nil {
		for _, k := range []string{"command", "cmd", "file_path", "filePath", "absolute_path", "notebook_path", "url", "pattern", "path", "dir_path"} {
			if v, ok := in[k].(string); ok && v != "" {
				return tool + ": " + v
			}
		}
	}
	return tool + ": " + input
}

// cursor is how far a reader has read: the highest id seen and the ids
// that were still waiting (the only rows that change in place).
type cursor struct {
	top     int64
	waiting []int64
}

func (cursor) CursorFormat() string { return Format }

func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	rows, err := s.rows(ctx, "state = 'waiting' OR id = (SELECT max(id) FROM gate_requests)")
	if err != nil {
		return nil, err
	}
	return cursorOf(0, rows), nil
}

func cursorOf(top int64, rows []Row) cursor {
	c := cursor{top: top}
	for _, r := range rows {
		c.top = max(c.top, r.ID)
		if st, _ := r.Effective(); st == StateWaiting {
			c.waiting = append(c.waiting, r.ID)
		}
	}
	return c
}

func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(cursor)
	if !ok {
		return nil, nil, fmt.Errorf("gate: a cursor of another format (%s)", cur.CursorFormat())
	}
	var rows []Row
	if len(c.waiting) > 0 {
		ids := strings.TrimSuffix(strings.Repeat("?,", len(c.waiting)), ",")
		args := make([]any, 0, len(c.waiting)+1)
		args = append(args, c.top)
		for _, id := range c.waiting {
			args = append(args, id)
		}
		var err error
		if rows, err = s.rows(ctx, "id > ? OR id IN ("+ids+")", args...); err != nil {
			return nil, nil, err
		}
	} else {
		var err error
		if rows, err = s.rows(ctx, "id > ?", c.top); err != nil {
			return nil, nil, err
		}
	}
	ch := &store.Changes{}
	var fresh []Row
	for _, r := range rows {
		q := requestOf(r)
		if r.ID > c.top || q.Resolved {
			ch.Requests = append(ch.Requests, q)
			fresh = append(fresh, r)
		}
	}
	for _, r := range runsOf(fresh) {
		ch.Runs = append(ch.Runs, r.dressed())
	}
	return ch, cursorOf(c.top, rows), nil
}

// Classify: a request is answerable while it waits and its hook lives;
// Decide checks again inside its transaction.
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved {
		if req.StandingReason != "" {
			return store.NotLive, req.Decision + ": " + req.StandingReason
		}
		return store.Closed, "already decided: " + req.Decision
	}
	return store.Deliverable, ""
}

func (s *Store) Watch() store.WatchSpec {
	return sqlitex.WatchSpec(s.path, func() (uint64, error) { return sqlitex.DataVersion(s.read) })
}

func (s *Store) Close() error {
	s.write.Close(s.read)
	return s.read.Close()
}

// decidedBy names this process's person in the row (the audit log holds
// who decided with the channel; the store contract passes no who).
func decidedBy() string {
	if u := os.Getenv("USER"); u != "" {
		return "vigil (" + u + ")"
	}
	return "vigil"
}
