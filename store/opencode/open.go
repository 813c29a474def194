package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Format names opencode's session database format.
const Format = "opencode"

// ReadOnlyReason is why a store opened read-only takes no decision.
const ReadOnlyReason = "opened read-only: decisions on opencode's permission requests are refused"

func init() {
	store.Register(store.Format{
		Name:   Format,
		Detect: Detect,
		Look:   look,
		Open:   func(path string, opts store.Options) (store.Core, error) { return Open(path, opts) },
		Files:  []string{"opencode.db"},
		Home:   DefaultPaths,
	})
}

// DefaultPaths is where opencode keeps its database on this machine:
// $XDG_DATA_HOME/opencode/opencode.db, XDG_DATA_HOME defaulting to
// ~/.local/share as opencode's global paths do.
func DefaultPaths(getenv func(string) string) []string {
	data := getenv("XDG_DATA_HOME")
	if data == "" {
		home := getenv("HOME")
		if home == "" {
			return nil
		}
		data = filepath.Join(home, ".local", "share")
	}
	return []string{filepath.Join(data, "opencode", "opencode.db")}
}

// The tables vigil reads, with the columns it needs in each
// (packages/opencode/src/session/session.sql.ts).
var required = map[string][]string{
	"session": {"id", "parent_id", "title", "directory", "model", "time_created", "time_updated",
		"tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read", "tokens_cache_write"},
	"message": {"id", "session_id", "time_created", "time_updated", "data"},
	"part":    {"id", "message_id", "session_id", "time_created", "time_updated", "data"},
}

// tailed are the tables Changes follows by rowid.
var tailed = []string{"session", "message", "part"}

// Store is an opencode database read through vigil's domain types, over
// one pinned read-only connection that never writes a byte to the file.
type Store struct {
	path    string
	reading *sqlitex.Reading
	read    *sql.DB
	stmts   sqlitex.Stmts

	// srv is the opencode server whose permission requests are this
	// database's sessions' approvals (permissions.go).
	srv      *server
	readOnly bool
	follow   sync.Once
	stop     context.CancelFunc

	mu       sync.Mutex
	problems map[string]error         // "table id" → what was wrong with that row
	asked    map[string]store.Request // requests seen waiting in the server
	calls    map[string][2]string     // their tool calls: message id, call id
	done     map[string]store.Request // those since answered, as they were
	// numberedAt is where each session's model calls were last numbered
	// (steps.go, callsBefore).
	numberedAt map[string]numbered
}

var _ store.Core = (*Store)(nil)

// Open opens an opencode database for browsing. Preflight answers what the
// file system and the header can before SQLite opens the file; the
// browsing connection creates nothing beside it.
func Open(path string, opts ...store.Options) (*Store, error) {
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	abs, head, err := checkFileSeen(path, o.Seen)
	if err != nil {
		return nil, err
	}
	db, reading, err := sqlitex.OpenRead(abs, head)
	if err != nil {
		return nil, sqlitex.MapErr(abs, err)
	}
	s := &Store{path: abs, reading: reading, read: db, problems: map[string]error{}, srv: newServer(os.Getenv), readOnly: o.ReadOnly,
		asked: map[string]store.Request{}, calls: map[string][2]string{}, done: map[string]store.Request{}, numberedAt: map[string]numbered{}}
	if err := s.check(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Detect reports whether path is an opencode database: SQLite with
// opencode's session, message and part tables.
func Detect(path string) bool {
	ok, _ := look(path)
	return ok
}

func look(path string) (bool, any) {
	seen, err := preflight.Look(path)
	if err != nil {
		return false, nil
	}
	sure := true
	for t := range required {
		has, s := seen.HasTable(t)
		if s && !has {
			return false, seen
		}
		sure = sure && s
	}
	if !sure {
		db, _, err := sqlitex.OpenRead(seen.Abs, seen.Head)
		if err != nil {
			return false, seen
		}
		defer db.Close()
		var n int
		err = db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')").Scan(&n)
		if err != nil || n != 3 {
			return false, seen
		}
	}
	// io-harness and Starweaver have no table named part: the three
	// names together are opencode's.
	return true, seen
}

var preflight = sqlitex.Preflight{
	IsDir: "is a directory, not an opencode database (it is usually ~/.local/share/opencode/opencode.db)",
	Empty: "not an opencode database: the file is empty",
}

func checkFileSeen(path string, seen any) (string, []byte, error) {
	if s, ok := seen.(*sqlitex.Seen); ok {
		if abs, err := filepath.Abs(path); err == nil && s.Fits(abs) {
			return abs, s.Head, nil
		}
	}
	return preflight.Check(path)
}

// check refuses a file without the columns vigil reads.
func (s *Store) check(ctx context.Context) error {
	for _, t := range tailed {
		cols := map[string]bool{}
		err := s.eachRow(ctx, "SELECT name FROM pragma_table_info(?)", []any{t}, func(r *sql.Rows) error {
			var n string
			err := r.Scan(&n)
			cols[n] = true
			return err
		})
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return store.Errorf(s.path, store.ErrNotAStore, nil, "not an opencode database: SQLite, but without the %s table", t)
		}
		for _, c := range required[t] {
			if !cols[c] {
				return store.Errorf(s.path, store.ErrUnsupported, nil, "opencode table %s has no %s column: a version of opencode vigil does not read", t, c)
			}
		}
	}
	return nil
}

// problem records one row that could not be read; the rest still shows.
func (s *Store) problem(table, id string, rowid int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := table + " " + id
	if _, ok := s.problems[key]; !ok {
		where := fmt.Sprintf("%s row %d (%s)", table, rowid, id)
		if rowid == 0 {
			where = table + " " + id
		}
		s.problems[key] = &store.Error{Path: s.path, Kind: store.ErrCorrupt, Detail: fmt.Sprintf("%s: %v", where, err)}
	}
}

// Problems lists the rows that could not be read, one error each, and
// what the browsing connection reads without (a WAL with no -shm).
func (s *Store) Problems() []error {
	var out []error
	if n := s.reading.Note(); n != "" {
		out = append(out, &store.Error{Path: s.path, Kind: store.ErrIO, Detail: n})
	}
	s.mu.Lock()
	keys := make([]string, 0, len(s.problems))
	for k := range s.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, s.problems[k])
	}
	s.mu.Unlock()
	return out
}

// ReadingNote is what the browsing connection reads the store without.
func (s *Store) ReadingNote() string { return s.reading.Short() }

func (s *Store) Path() string   { return s.path }
func (s *Store) Format() string { return Format }

// ReadOnly is false unless the store was opened read-only: decisions go
// to the opencode server (permissions.go), which says when it is not there.
func (s *Store) ReadOnly() (bool, string) {
	if s.readOnly {
		return true, ReadOnlyReason
	}
	return false, ""
}

// RecordsLeases is false: opencode writes no pid file or heartbeat, so
// whether a process still drives an unfinished session cannot be told.
func (s *Store) RecordsLeases() bool { return false }

// Watch is the database, its WAL and journal, with PRAGMA data_version on
// the read connection as the probe, plus the permission events of the
// opencode server's event stream (followed from the first Watch until
// Close): a request asked or answered there writes nothing to the file.
func (s *Store) Watch() store.WatchSpec {
	s.follow.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stop = cancel
		go s.srv.follow(ctx)
	})
	return sqlitex.WatchSpec(s.path, func() (uint64, error) {
		v, err := sqlitex.DataVersion(s.read)
		return v + s.srv.events.Load(), err
	})
}

// Close releases the browsing connection.
func (s *Store) Close() error {
	s.follow.Do(func() {}) // a Watch after Close follows nothing
	if s.stop != nil {
		s.stop()
	}
	s.stmts.Close()
	return s.read.Close()
}

func (s *Store) eachRow(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	return sqlitex.MapErr(s.path, s.stmts.EachRow(ctx, s.read, q, args, fn))
}

var errNoRun = errors.New("no such session")
