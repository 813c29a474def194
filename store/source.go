package store

import (
	"context"
	"strings"
	"time"
)

// Options tune how a source is opened.
type Options struct {
	// ReadOnly opens the source for browsing only: no decision can be
	// written through it, and it opens nothing that could write.
	ReadOnly bool
	// Seen is what a format's Look read of the path during this Open (set
	// by Open; nil otherwise). The format opened may take it in place of
	// reading the file again, once it has checked it still fits the file.
	Seen any
}

// Core is what a format must implement: a run store's runs, steps,
// requests and tail, and its one write. Every method returns domain
// types; none hands out rows, connections or open cursors. Methods may be
// called from several goroutines at once. A source never writes to the
// store except in Decide, and never changes the store's journal mode or
// schema. What else a format can answer it says by implementing the
// optional interfaces in capabilities.go; Complete makes a Core a Source.
type Core interface {
	Path() string
	// Format names the format ("io-harness", "starweaver", "leviath"): the
	// name it registered under.
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

	// Head is a cursor at the source's end. Take it before loading what the
	// screen needs: rows that land in between come again from Changes, and
	// readers key them by row id.
	Head(ctx context.Context) (Cursor, error)
	// Changes returns what came after cur and the cursor to pass next
	// time. It never modifies cur, so a cursor held elsewhere stays valid;
	// its cost is O(new rows + rows that can still change), never O(store).
	Changes(ctx context.Context, cur Cursor) (*Changes, Cursor, error)

	// Classify says whether a decision on req, written now, reaches the run
	// (run is the asking run, lease its effective lease), and if not, why.
	Classify(req Request, run Run, lease *Lease, now time.Time) (Delivery, string)
	// Decide writes a decision as a compare-and-set on the undecided
	// request: Won false (with what won) when someone decided first, a
	// *RefusedError when the run cannot receive it, ErrReadOnly when the
	// source cannot write.
	Decide(ctx context.Context, d Decision) (DecideResult, error)

	// Watch says what a file watcher should watch for this source's changes.
	Watch() WatchSpec

	Close() error
}

// Source is a run store as the explorer and the CLI read it, whatever its
// format: the Core and every capability a reader uses, as methods. Where
// the format cannot answer one natively the answer is the fallback written
// once in Complete (each capability's doc in capabilities.go says what it
// is), and Capabilities says which are native, so a caller that would do
// better without a slow fallback (a windowed timeline) or a status line
// that says what is missing can tell. Wrappers (store/union, serve's
// view, remote) forward every method to the source inside them.
type Source interface {
	Core
	// Capabilities is what this source answers natively.
	Capabilities() Capabilities

	RunGetter
	RequestGetter
	RunFinder
	RecentRunner
	QuickHeader
	StepRanger
	DetailReader
	FieldWriter
	FactReader
	ActivityReader
	WriteClock
	PolicyReader
	ReasonCarrier
	ProblemReporter
	ReadingNoter
	CursorCodec
	// WriteCanonicalTrace writes a run's canonical trace (TraceWriter); a
	// format without traces says so in an ErrUnsupported error.
	TraceWriter
}

// WatchSpec is what to watch for a source's changes: a file (its directory
// is watched) or a directory (with its subdirectories to Depth levels, 0
// or 1: the immediate ones), the base names whose events count (nil: all),
// and a cheap probe that changes whenever the data does.
type WatchSpec struct {
	Path    string
	Names   []string
	Version func() (uint64, error)
	// Touched is Version told which paths events named (watch.Options);
	// nil for most formats.
	Touched func(named []string) (uint64, error)
	Depth   int
}

// CanonicalTrace is src's trace of a run as one string (for diffing two
// runs; a trace written out goes through WriteCanonicalTrace instead).
func CanonicalTrace(ctx context.Context, src Source, runID string) (string, error) {
	var b strings.Builder
	err := src.WriteCanonicalTrace(ctx, runID, &b)
	return b.String(), err
}
