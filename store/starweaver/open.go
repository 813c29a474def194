package starweaver

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Format names the Starweaver session database format.
const Format = "starweaver"

func init() {
	store.Register(store.Format{
		Name:   Format,
		Detect: Detect,
		Look:   look,
		Open:   func(path string, opts store.Options) (store.Core, error) { return Open(path, opts) },
		Files:  []string{"starweaver.sqlite"},
	})
}

// errf builds a *store.Error in Starweaver's words; with no message the
// sentinel's own text is used.
func errf(path string, kind error, cause error, format string, args ...any) *store.Error {
	return store.Errorf(path, kind, cause, format, args...)
}

// Migrations vigil knows (docs/formats/starweaver.md, "Opening and
// migrations"): 1–4 are Starweaver 0.7.0, and 0.15.0 has 19 with 1–4
// unchanged. Only the ids of 1–5 and 19 are pinned;
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
	reading   *sqlitex.Reading // how the browsing connection reads the file
	migration int              // the highest migration applied (4 for 0.7.0, 19 for 0.15.0)

	read  *sql.DB
	write sqlitex.Writer // opened by the first decision

	stmts sqlitex.Stmts // prepared reads on the read connection

	// What the last reads learned about the runs: where each lives and its
	// place in the tree, and which runs a resume claim holds (Classify
	// answers from it without IO).
	mu     sync.Mutex
	meta   map[string]runMeta
	claims map[string]claimRec
	// claimsLoaded says claims has been read from the database at least once.
	claimsLoaded bool

	// The last records too big to hand to SQL, as the shrinker left them.
	shrunkMu   sync.Mutex
	shrunkRecs map[shrunkKey][]byte
	bigReads   atomic.Int64 // big records read through the shrinker (tests: what a first frame costs)
}

// runMeta is where a run lives and its place in the tree.
type runMeta struct {
	session string
	parent  string
}

var (
	_ store.Core          = (*Store)(nil)
	_ store.RequestGetter = (*Store)(nil)
)

// Open opens a Starweaver session database for browsing and deciding. It
// answers the cheap questions from the file header before a connection
// opens the file, reads the migration table to learn what the file holds,
// and never changes the journal mode, runs a migration or writes anything
// until a decision is made. The browsing connection creates nothing beside
// the file (sqlitex.OpenRead), so a file it refuses is left exactly as it
// was.
func Open(path string, opts ...store.Options) (*Store, error) {
	var o store.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	abs, head, err := checkFileSeen(path, o.Seen)
	if err != nil {
		return nil, err
	}
	s := &Store{path: abs, readOnly: o.ReadOnly, meta: map[string]runMeta{}, claims: map[string]claimRec{}}
	if err := s.openRead(head); err != nil {
		return nil, err
	}
	s.decideWritable()
	return s, nil
}

// OpenReadOnly opens a database for browsing only.
func OpenReadOnly(path string) (*Store, error) { return Open(path, store.Options{ReadOnly: true}) }

// Detect reports whether path is a Starweaver session database: a SQLite
// file with Starweaver's migration table. It reads the header and, when
// that is SQLite, the schema, through a browsing connection that creates
// nothing beside the file.
func Detect(path string) bool {
	ok, _ := look(path)
	return ok
}

// migrationsTable is the table that makes a SQLite file Starweaver's.
const migrationsTable = "starweaver_schema_migrations"

// look is Detect that hands back what it read (store.Format.Look): the
// header and the tables of the file's own pages, read on the one
// connection the header needs. Only when those cannot settle it (the
// table may be in commits a WAL still holds) does a browsing connection
// look at the schema as the store is now.
func look(path string) (bool, any) {
	seen, err := preflight.Look(path)
	if err != nil {
		return false, nil
	}
	if has, sure := seen.HasTable(migrationsTable); sure {
		return has, seen
	}
	db, _, err := sqlitex.OpenRead(seen.Abs, seen.Head)
	if err != nil {
		return false, seen
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", migrationsTable).Scan(&n)
	return err == nil && n > 0, seen
}

// preflight words the file-system refusals that name Starweaver.
var preflight = sqlitex.Preflight{
	IsDir: "is a directory, not a Starweaver database (it is usually .starweaver/starweaver.sqlite)",
	Empty: "not a Starweaver session database: the file is empty",
}

// checkFile answers what the file system and the 100-byte header can:
// missing, a directory, empty, not SQLite, truncated.
func checkFile(path string) (string, []byte, error) {
	return preflight.Check(path)
}

// checkFileSeen is checkFile answered from what a detection just read
// (store.Options.Seen) while that still fits the file.
func checkFileSeen(path string, seen any) (string, []byte, error) {
	if s, ok := seen.(*sqlitex.Seen); ok {
		if abs, err := filepath.Abs(path); err == nil && s.Fits(abs) {
			return abs, s.Head, nil
		}
	}
	return checkFile(path)
}

// openRead opens the browsing connection: read-only, it can never write,
// checkpoint or delete the WAL, and creates nothing beside the file.
func (s *Store) openRead(head []byte) error {
	db, reading, err := sqlitex.OpenRead(s.path, head)
	if err != nil {
		return mapErr(s.path, err)
	}
	s.reading = reading
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
	ok, why := sqlitex.Writable(s.path, s.readOnly)
	s.readOnly, s.roReason = !ok, why
}

// writer is the connection decisions go through, opened on first use.
// It runs no migration and leaves the journal mode as Starweaver set it.
func (s *Store) writer() (*sql.DB, error) {
	if s.readOnly {
		return nil, errf(s.path, store.ErrReadOnly, nil, "store is read-only: %s", s.roReason)
	}
	return s.write.Get(s.path)
}

// ReadingNote is what the browsing connection reads the store without, in
// a few words for a status bar ("" when nothing; Problems has the line).
func (s *Store) ReadingNote() string {
	if s.reading == nil {
		return ""
	}
	return s.reading.Short()
}

// Problems says what the browsing connection reads without, if anything: a
// WAL with no -shm beside it, or a rollback journal a reader cannot roll
// back (store.ProblemReporter).
func (s *Store) Problems() []error {
	if n := s.reading.Note(); n != "" {
		return []error{&store.Error{Path: s.path, Kind: store.ErrIO, Detail: n}}
	}
	return nil
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
func (s *Store) Watch() store.WatchSpec { return sqlitex.WatchSpec(s.path, s.DataVersion) }

// DataVersion is PRAGMA data_version on the pinned read connection: it
// changes whenever another connection commits.
func (s *Store) DataVersion() (uint64, error) { return sqlitex.DataVersion(s.read) }

// Close releases both connections.
func (s *Store) Close() error {
	s.stmts.Close()
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	// The writing connection closes last: when nobody else has the store
	// open it is then SQLite's last connection, which checkpoints the WAL
	// into the file and removes -wal and -shm. Closed first, it left a
	// decision in a -wal beside a store that had none, with the browsing
	// connection (which may not checkpoint) the last to go.
	errs = append(errs, s.write.Close(s.read))
	return errors.Join(errs...)
}

// eachRow runs a read and hands each row to fn, with no read transaction
// outliving the call.
func (s *Store) eachRow(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	return mapErr(s.path, s.stmts.EachRow(ctx, s.read, q, args, fn))
}

// mapErr turns a driver error into a *store.Error of one of the sentinel
// kinds, passing through errors already worded here and cancellation.
func mapErr(path string, err error) error { return sqlitex.MapErr(path, err) }
