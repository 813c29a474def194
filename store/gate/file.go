package gate

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// FileName is the gate store's file name.
const FileName = "gate.db"

// table is the table that makes a SQLite file a gate store.
const table = "gate_requests"

// States a request moves through; only waiting ever changes.
const (
	StateWaiting   = "waiting"
	StateApproved  = "approved"
	StateDenied    = "denied"
	StateWithdrawn = "withdrawn"
	StateExpired   = "expired"
)

const schema = `CREATE TABLE IF NOT EXISTS gate_requests (
	id INTEGER PRIMARY KEY,
	agent TEXT NOT NULL,
	event TEXT NOT NULL,
	session_id TEXT NOT NULL DEFAULT '',
	agent_id TEXT NOT NULL DEFAULT '',
	cwd TEXT NOT NULL DEFAULT '',
	tool TEXT NOT NULL DEFAULT '',
	input TEXT NOT NULL DEFAULT '{}',
	tool_use_id TEXT NOT NULL DEFAULT '',
	asked_at INTEGER NOT NULL,
	pid INTEGER NOT NULL,
	pid_start TEXT NOT NULL DEFAULT '',
	agent_pid INTEGER NOT NULL DEFAULT 0,
	agent_start TEXT NOT NULL DEFAULT '',
	state TEXT NOT NULL DEFAULT 'waiting',
	reason TEXT NOT NULL DEFAULT '',
	decided_by TEXT NOT NULL DEFAULT '',
	decided_at INTEGER NOT NULL DEFAULT 0,
	suggestions TEXT NOT NULL DEFAULT '',
	always INTEGER NOT NULL DEFAULT 0
)`

// added are the columns a gate store made by an earlier vigil lacks: the
// hook adds them, a reader reads such a file without them.
var added = []struct{ name, def string }{
	{"suggestions", "TEXT NOT NULL DEFAULT ''"},
	{"always", "INTEGER NOT NULL DEFAULT 0"},
}

// Path is where the gate store lives for the environment getenv reads:
// $XDG_STATE_HOME/vigil/gate.db, else ~/.local/state/vigil/gate.db.
func Path(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		dir = filepath.Join(getenv("HOME"), ".local", "state")
	}
	return filepath.Join(dir, "vigil", FileName)
}

// Request is what a hook asks, as the hook records it.
type Request struct {
	Agent     string // "claude-code"
	Event     string // the hook event ("PreToolUse", "PermissionRequest")
	SessionID string
	AgentID   string // the sub-agent's id; "" for the session's main agent
	Cwd       string
	Tool      string
	Input     string // the tool's input, JSON, whole
	ToolUseID string
	// Suggestions is what the agent offers to allow from now on if the
	// person says so (Claude Code's permission_suggestions, JSON), or "".
	Suggestions string
	// AgentPID and AgentStart name the agent CLI's process (0: unknown):
	// a request whose agent is gone is withdrawn, whatever its hook does.
	AgentPID   int
	AgentStart string
}

// Row is one request as stored.
type Row struct {
	ID int64
	Request
	AskedAt   time.Time
	PID       int
	PIDStart  string
	State     string
	Reason    string
	DecidedBy string
	DecidedAt time.Time
	Always    bool // approved with the request's suggestions
}

// Gone reports whether a waiting row's hook process has gone away.
func (r Row) Gone() bool {
	return r.State == StateWaiting && (!alive(r.PID, r.PIDStart) || r.AgentPID > 0 && !alive(r.AgentPID, r.AgentStart))
}

// Effective is the row's state as a reader must take it: a waiting row
// whose hook is gone is withdrawn.
func (r Row) Effective() (state, reason string) {
	if r.Gone() {
		if !alive(r.PID, r.PIDStart) {
			return StateWithdrawn, fmt.Sprintf("the agent stopped waiting (its hook process %d is gone)", r.PID)
		}
		return StateWithdrawn, fmt.Sprintf("the agent stopped waiting (its process %d is gone)", r.AgentPID)
	}
	return r.State, r.Reason
}

const columns = `id, agent, event, session_id, agent_id, cwd, tool, input, tool_use_id, asked_at, pid, pid_start, agent_pid, agent_start, state, reason, decided_by, decided_at, suggestions, always`

// columnsBefore reads a file made before suggestions and always were.
const columnsBefore = `id, agent, event, session_id, agent_id, cwd, tool, input, tool_use_id, asked_at, pid, pid_start, agent_pid, agent_start, state, reason, decided_by, decided_at, '', 0`

// hasAdded reports whether the file has the columns added since the first
// gate stores were made.
func hasAdded(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('gate_requests') WHERE name = 'always'").Scan(&n)
	return n > 0, err
}

func scanRow(sc interface{ Scan(...any) error }) (Row, error) {
	var r Row
	var asked, decided int64
	err := sc.Scan(&r.ID, &r.Agent, &r.Event, &r.SessionID, &r.AgentID, &r.Cwd, &r.Tool, &r.Input, &r.ToolUseID,
		&asked, &r.PID, &r.PIDStart, &r.AgentPID, &r.AgentStart, &r.State, &r.Reason, &r.DecidedBy, &decided, &r.Suggestions, &r.Always)
	r.AskedAt = time.UnixMilli(asked)
	if decided != 0 {
		r.DecidedAt = time.UnixMilli(decided)
	}
	return r, err
}

// Hook is the hook process's handle on the gate store: it records its one
// request, reads its state and moves it to withdrawn or expired.
type Hook struct {
	abs string
	db  *sql.DB
}

// OpenHook opens the gate store at path for a hook, creating the file (in
// WAL mode, vigil's own) and its directory on first use.
func OpenHook(path string) (*Hook, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("the gate store's directory: %w", err)
	}
	fresh := !sqlitex.Exists(abs)
	db, err := sqlitex.OpenWrite(abs)
	if err != nil {
		return nil, sqlitex.MapErr(abs, err)
	}
	if fresh {
		// The file is vigil's own: WAL is set once, when it is made.
		if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
			db.Close()
			return nil, sqlitex.MapErr(abs, err)
		}
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, sqlitex.MapErr(abs, err)
	}
	if err := addColumns(db); err != nil {
		db.Close()
		return nil, sqlitex.MapErr(abs, err)
	}
	return &Hook{abs: abs, db: db}, nil
}

// addColumns brings a gate store made by an earlier vigil up to date.
func addColumns(db *sql.DB) error {
	ok, err := hasAdded(context.Background(), db)
	if err != nil || ok {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, c := range added {
		var n int
		if err := tx.QueryRow("SELECT count(*) FROM pragma_table_info('gate_requests') WHERE name = ?", c.name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := tx.Exec("ALTER TABLE gate_requests ADD COLUMN " + c.name + " " + c.def); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// Path is the store's absolute path.
func (h *Hook) Path() string { return h.abs }

// Ask records r as waiting, asked by this process, and returns its id.
func (h *Hook) Ask(ctx context.Context, r Request) (int64, error) {
	pid := os.Getpid()
	res, err := h.db.ExecContext(ctx, `INSERT INTO gate_requests
		(agent, event, session_id, agent_id, cwd, tool, input, tool_use_id, asked_at, pid, pid_start, agent_pid, agent_start, suggestions)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Agent, r.Event, r.SessionID, r.AgentID, r.Cwd, r.Tool, r.Input, r.ToolUseID,
		time.Now().UnixMilli(), pid, procStart(pid), r.AgentPID, r.AgentStart, r.Suggestions)
	if err != nil {
		return 0, sqlitex.MapErr(h.abs, err)
	}
	return res.LastInsertId()
}

// Get reads request id.
func (h *Hook) Get(ctx context.Context, id int64) (Row, error) {
	r, err := scanRow(h.db.QueryRowContext(ctx, "SELECT "+columns+" FROM gate_requests WHERE id = ?", id))
	if err != nil {
		return Row{}, sqlitex.MapErr(h.abs, err)
	}
	return r, nil
}

// End moves a still-waiting request to state (withdrawn or expired) with
// reason; false when a decision came first.
func (h *Hook) End(ctx context.Context, id int64, state, reason string) (bool, error) {
	res, err := h.db.ExecContext(ctx, `UPDATE gate_requests SET state = ?, reason = ?, decided_by = 'vigil gate', decided_at = ?
		WHERE id = ? AND state = 'waiting'`, state, reason, time.Now().UnixMilli(), id)
	if err != nil {
		return false, sqlitex.MapErr(h.abs, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Version moves whenever the store commits (the watcher's probe).
func (h *Hook) Version() (uint64, error) { return sqlitex.DataVersion(h.db) }

// Close closes the hook's connection.
func (h *Hook) Close() error { return h.db.Close() }

// alive reports whether pid is the process that started at start (its
// /proc start time); true where that cannot be told but the pid lives.
func alive(pid int, start string) bool {
	if pid <= 0 || !store.PIDAlive(pid) {
		return false
	}
	now, zombie := procStat(pid)
	return !zombie && (start == "" || now == "" || now == start)
}

// procStart is pid's start time in clock ticks (/proc/<pid>/stat field
// 22), "" where /proc cannot tell.
func procStart(pid int) string {
	s, _ := procStat(pid)
	return s
}

// procStat reads pid's start time and whether it is a zombie (exited,
// not yet reaped: kill(pid, 0) still succeeds on it).
func procStat(pid int) (start string, zombie bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", false
	}
	return f[19], f[0] == "Z"
}
