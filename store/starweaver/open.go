package starweaver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-run/vigil/store"
)

// Format names the Starweaver session database format.
const Format = "starweaver"

// Error is a refusal or failure with the path it concerns, in one line. It
// matches its Kind (one of the store.Err* sentinels) with errors.Is.
type Error struct {
	Path string
	Kind error
	Msg  string // the whole reason, worded for Starweaver
	Err  error  // the driver's error, if any
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

// errf builds an Error; with no message the sentinel's own text is used.
func errf(path string, kind error, cause error, format string, args ...any) *Error {
	msg := kind.Error()
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Path: path, Kind: kind, Msg: msg, Err: cause}
}

// Migrations vigil knows (fact sheet S1): 1–4 are Starweaver 0.7.0, and
// 0.15.0 has 19 with 1–4 unchanged. Only the ids of 1–5 and 19 are pinned;
// 6–18 are recognised by their number.
const maxMigration = 19

var knownMigrations = map[int]string{
	1:  "20260605_000001_session_stream_store",
	2:  "20260711_000002_namespaced_evidence_tables",
	3:  "20260711_000003_split_display_and_replay_families",
	4:  "20260712_000004_evidence_outbox_and_resume_claims",
	5:  "20260714_000005_agent_session_management",
	19: "20260725_000019_transcript_host_events",
}

var migrationID = regexp.MustCompile(`^(\d{8})_(\d{6})_[a-z0-9_]+$`)

// Tables every view reads: migrations 1–4 made them all.
var requiredTables = []string{
	"session_records", "run_records", "stream_records", "checkpoint_records",
	"approval_records", "deferred_tool_records", "display_message_records", "hitl_resume_claims",
}

// tailed are the tables Changes follows by rowid.
var tailed = []string{"run_records", "stream_records", "checkpoint_records", "approval_records", "deferred_tool_records"}

// Store is a Starweaver session database read through vigil's domain
// types. Browsing goes through one pinned read-only connection that never
// writes a byte to the file; a decision opens a second, read-write
// connection on first use.
type Store struct {
	path      string
	readOnly  bool
	roReason  string
	immutable bool
	migration int // the highest migration applied (4 for 0.7.0, 19 for 0.15.0)

	read    *sql.DB
	writeMu sync.Mutex
	write   *sql.DB

	stmts store.Stmts // prepared reads on the read connection

	// What the last reads learned about the runs: where each lives and its
	// place in the tree, and which runs a resume claim holds (Classify
	// answers from it without IO).
	mu     sync.Mutex
	meta   map[string]runMeta
	claims map[string]claimRec
}

// runMeta is where a run lives and its place in the tree.
type runMeta struct {
	session string
	parent  string
}

var _ store.Source = (*Store)(nil)

// Open opens a Starweaver session database for browsing and deciding. It
// answers the cheap questions from the file header before SQLite sees the
// file, reads the migration table to learn what the file holds, and never
// changes the journal mode, runs a migration or writes anything until a
// decision is made. A file it refuses is left exactly as it was.
func Open(path string, opts ...store.Options) (*Store, error) {
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	abs, err := checkFile(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: abs, readOnly: o.ReadOnly, meta: map[string]runMeta{}, claims: map[string]claimRec{}}
	// With no -wal beside it the main file holds everything: vet it as
	// immutable first, so a refused file does not get -wal/-shm companions.
	if !exists(abs+"-wal") && !exists(abs+"-journal") {
		db, err := openDB(abs, "mode=ro&immutable=1")
		if err != nil {
			return nil, err
		}
		_, err = s.check(context.Background(), db)
		db.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := s.openRead(); err != nil {
		return nil, err
	}
	s.decideWritable()
	return s, nil
}

// OpenReadOnly opens a database for browsing only.
func OpenReadOnly(path string) (*Store, error) { return Open(path, store.Options{ReadOnly: true}) }

// Detect reports whether path is a Starweaver session database: a SQLite
// file with Starweaver's migration table. It reads the header and, when
// that is SQLite, the schema, read-only.
func Detect(path string) bool {
	abs, err := checkFile(path)
	if err != nil {
		return false
	}
	q := "mode=ro"
	if !exists(abs+"-wal") && !exists(abs+"-journal") {
		q = "mode=ro&immutable=1"
	}
	db, err := openDB(abs, q)
	if err != nil {
		return false
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'starweaver_schema_migrations'").Scan(&n)
	return err == nil && n > 0
}

func openDB(abs, query string) (*sql.DB, error) {
	db, err := store.OpenSQLite(abs, query)
	return db, mapErr(abs, err)
}

// checkFile answers what the file system and the 100-byte header can:
// missing, a directory, empty, not SQLite, truncated.
func checkFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", errf(path, store.ErrNotFound, err, "")
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", errf(abs, store.ErrNotFound, err, "")
	case errors.Is(err, os.ErrPermission):
		return "", errf(abs, store.ErrIO, err, "cannot read store: permission denied")
	case err != nil:
		return "", errf(abs, store.ErrIO, err, "cannot read store: %v", err)
	case fi.IsDir():
		return "", errf(abs, store.ErrIsDirectory, nil, "is a directory, not a Starweaver database (it is usually .starweaver/starweaver.sqlite)")
	case fi.Size() == 0:
		return "", errf(abs, store.ErrNotAStore, nil, "not a Starweaver session database: the file is empty")
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", errf(abs, store.ErrIO, err, "cannot read store: %v", err)
	}
	defer f.Close()
	h := make([]byte, 100)
	n, _ := io.ReadFull(f, h)
	if kind, detail := store.SQLiteHeaderProblem(h[:n], fi.Size()); kind != nil {
		if detail == "" {
			return "", errf(abs, kind, nil, "")
		}
		return "", errf(abs, kind, nil, "damaged store: %s", detail)
	}
	return abs, nil
}

// openRead opens the browsing connection: mode=ro can never write,
// checkpoint or delete the WAL.
func (s *Store) openRead() error {
	db, immutable, err := store.OpenSQLiteRead(s.path)
	if err != nil {
		return mapErr(s.path, err)
	}
	s.immutable = immutable
	m, err := s.check(context.Background(), db)
	if err != nil {
		db.Close()
		return err
	}
	s.read, s.migration = db, m
	return nil
}

// check refuses a file that is not a Starweaver database this vigil can
// read, and returns the highest migration applied.
func (s *Store) check(ctx context.Context, db *sql.DB) (int, error) {
	tables := map[string]bool{}
	rows, err := db.QueryContext(ctx, "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return 0, mapErr(s.path, err)
	}
	withoutRowid := ""
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return 0, mapErr(s.path, err)
		}
		tables[name] = true
		if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") && slices.Contains(tailed, name) {
			withoutRowid = name
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, mapErr(s.path, err)
	}
	if !tables["starweaver_schema_migrations"] {
		return 0, errf(s.path, store.ErrNotAStore, nil, "not a Starweaver session database: SQLite, but without the starweaver_schema_migrations table")
	}
	ids := map[int]bool{}
	highest := 0
	mrows, err := db.QueryContext(ctx, "SELECT id FROM starweaver_schema_migrations")
	if err != nil {
		return 0, mapErr(s.path, err)
	}
	defer mrows.Close()
	for mrows.Next() {
		var id string
		if err := mrows.Scan(&id); err != nil {
			return 0, mapErr(s.path, err)
		}
		m := migrationID.FindStringSubmatch(id)
		if m == nil {
			return 0, errf(s.path, store.ErrNewerFormat, nil, "Starweaver database with an unknown migration %q; vigil reads migrations 1–%d (Starweaver 0.7.0–0.15.0)", id, maxMigration)
		}
		n, _ := strconv.Atoi(m[2])
		if n > maxMigration {
			return 0, errf(s.path, store.ErrNewerFormat, nil, "written by a newer Starweaver: migration %d (%s), vigil reads up to %d (0.15.0); upgrade vigil", n, id, maxMigration)
		}
		if want, ok := knownMigrations[n]; ok && want != id {
			return 0, errf(s.path, store.ErrNewerFormat, nil, "Starweaver database with an unknown migration %q (vigil knows migration %d as %s)", id, n, want)
		}
		ids[n] = true
		highest = max(highest, n)
	}
	if err := mrows.Err(); err != nil {
		return 0, mapErr(s.path, err)
	}
	for n := 1; n <= 4; n++ {
		if !ids[n] {
			return 0, errf(s.path, store.ErrUnsupported, nil, "Starweaver database without migration %d (%s): written before Starweaver 0.7.0, which vigil cannot read; open it once with starweaver 0.7 or later", n, knownMigrations[n])
		}
	}
	for _, t := range requiredTables {
		if !tables[t] {
			return 0, errf(s.path, store.ErrCorrupt, nil, "damaged Starweaver database: migrations 1–4 are recorded but the %s table is missing", t)
		}
	}
	if withoutRowid != "" {
		return 0, errf(s.path, store.ErrUnsupported, nil, "Starweaver table %s is WITHOUT ROWID; vigil tails these tables by rowid", withoutRowid)
	}
	// Corruption shows only when a query touches it: touch the tables
	// every view reads, so a damaged file fails here.
	for _, t := range tailed {
		r, err := db.QueryContext(ctx, "SELECT rowid, record FROM "+t+" ORDER BY rowid DESC LIMIT 1")
		if err != nil {
			return 0, mapErr(s.path, err)
		}
		for r.Next() {
		}
		err = r.Err()
		r.Close()
		if err != nil {
			return 0, mapErr(s.path, err)
		}
	}
	return highest, nil
}

// decideWritable works out, without writing, whether decisions can be made.
func (s *Store) decideWritable() {
	ok, why := store.SQLiteWritable(s.path, s.readOnly, s.immutable)
	s.readOnly, s.roReason = !ok, why
}

// writer is the connection decisions go through, opened on first use.
// It runs no migration and leaves the journal mode as Starweaver set it.
func (s *Store) writer() (*sql.DB, error) {
	if s.readOnly {
		return nil, errf(s.path, store.ErrReadOnly, nil, "store is read-only: %s", s.roReason)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.write != nil {
		return s.write, nil
	}
	db, err := store.OpenSQLiteWrite(s.path)
	if err != nil {
		return nil, mapErr(s.path, err)
	}
	s.write = db
	return db, nil
}

// Path is the database's absolute path.
func (s *Store) Path() string { return s.path }

// Format is "starweaver".
func (s *Store) Format() string { return Format }

// ReadOnly reports whether decisions are disabled, and why.
func (s *Store) ReadOnly() (bool, string) { return s.readOnly, s.roReason }

// RecordsLeases is false: Starweaver 0.7 records no lease or heartbeat for
// a run (0.15's run_admissions are not read), so whether a process still
// drives a running run cannot be told.
func (s *Store) RecordsLeases() bool { return false }

// Migration is the highest Starweaver migration the file has applied.
func (s *Store) Migration() int { return s.migration }

// Watch is the database file, its WAL and rollback journal, and PRAGMA
// data_version on the read connection.
func (s *Store) Watch() store.WatchSpec { return store.SQLiteWatchSpec(s.path, s.DataVersion) }

// DataVersion is PRAGMA data_version on the pinned read connection: it
// changes whenever another connection commits.
func (s *Store) DataVersion() (uint64, error) {
	var v uint64
	err := s.read.QueryRow("PRAGMA data_version").Scan(&v)
	return v, err
}

// Close releases both connections.
func (s *Store) Close() error {
	s.stmts.Close()
	var errs []error
	s.writeMu.Lock()
	if s.write != nil {
		errs = append(errs, s.write.Close())
		s.write = nil
	}
	s.writeMu.Unlock()
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	return errors.Join(errs...)
}

// eachRow runs a read and hands each row to fn, with no read transaction
// outliving the call.
func (s *Store) eachRow(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	return mapErr(s.path, s.stmts.EachRow(ctx, s.read, q, args, fn))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// mapErr turns a driver error into an *Error of one of the sentinel kinds,
// passing through errors already worded here and cancellation.
func mapErr(path string, err error) error {
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	kind, detail, ok := store.SQLiteErrKind(path, err)
	if !ok {
		return err
	}
	if detail == "" {
		return errf(path, kind, err, "")
	}
	return errf(path, kind, err, "%v: %s", kind, detail)
}
