package store

import (
	"context"
	"time"
)

// Format names the io-harness SQLite store format.
const Format = "io-harness"

// Source is a run store as the explorer and the CLI read it, whatever its
// format: io-harness SQLite here, Starweaver and Leviath adapters beside it.
// Every method returns domain types; none hands out rows, connections or
// open cursors.
type Source interface {
	Path() string
	Format() string
	// ReadOnly reports whether decisions are disabled, and why (one line).
	ReadOnly() (bool, string)
	// RecordsLeases reports whether liveness can be told at all.
	RecordsLeases() bool

	Runs(ctx context.Context) ([]Run, error)
	RunStats(ctx context.Context, ids []string) (map[string]RunStats, error)
	Steps(ctx context.Context, runID string) ([]Step, error)
	StepDetail(ctx context.Context, runID string, rowID int64) (StepDetail, error)
	ContextSamples(ctx context.Context, runID string) ([]ContextSample, error)
	Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]Request, error)
	AgentEvents(ctx context.Context, runIDs ...string) ([]AgentEvent, error)
	ProviderCalls(ctx context.Context, runID string) ([]ProviderCall, error)

	// Head is a cursor at the source's end; Changes returns what came after
	// it and advances it.
	Head(ctx context.Context) (Cursor, error)
	Changes(ctx context.Context, c Cursor) (*Changes, error)

	// Classify says whether a decision on req, written now, reaches the run
	// (run is the asking run, lease its effective lease).
	Classify(req Request, run Run, lease *Lease, now time.Time) (Delivery, string)
	Decide(ctx context.Context, d Decision) (DecideResult, error)

	// Watch says what a file watcher should watch: a file (its directory is
	// watched) or a directory, the base names whose events count (nil: all),
	// and a cheap probe that changes whenever the data does.
	Watch() WatchSpec

	Close() error
}

// WatchSpec is what to watch for a source's changes.
type WatchSpec struct {
	Path    string
	Names   []string
	Version func() (uint64, error)
}

var _ Source = (*Store)(nil)

// Format names this store's format.
func (s *Store) Format() string { return Format }

// Classify applies io-harness's delivery rules (see ClassifyDelivery).
func (s *Store) Classify(req Request, run Run, lease *Lease, now time.Time) (Delivery, string) {
	if req.Resolved {
		return Closed, "already decided (" + req.Decision + ")"
	}
	return ClassifyDelivery(run, lease, s.RecordsLeases(), now)
}

// Watch is the store file, its WAL and rollback journal, and PRAGMA
// data_version on the read connection.
func (s *Store) Watch() WatchSpec { return SQLiteWatchSpec(s.path, s.DataVersion) }
