package store

import (
	"context"
	"io"
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

// Source is a run store as the explorer and the CLI read it, whatever its
// format. Every method returns domain types; none hands out rows,
// connections or open cursors. Methods may be called from several
// goroutines at once. A source never writes to the store except in Decide,
// and never changes the store's journal mode or schema.
type Source interface {
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

// WatchSpec is what to watch for a source's changes: a file (its directory
// is watched) or a directory, the base names whose events count (nil: all),
// and a cheap probe that changes whenever the data does.
type WatchSpec struct {
	Path    string
	Names   []string
	Version func() (uint64, error)
}

// Optional capabilities. A Source may also implement any of the interfaces
// below, in the manner of database/sql/driver: callers check with a type
// assertion, and each says what a caller does without it. They are not in
// Source because not every format can answer them, or answer them cheaply.

// Tracer is a source with a canonical, comparable text form of a run: one
// line per step and context event, with no ids or times, so two runs of
// the same task can be diffed. Without it, trace and diff are not
// available for the format.
type Tracer interface {
	CanonicalTrace(ctx context.Context, runID string) (string, error)
}

// TraceWriter is a Tracer that writes the trace as it builds it, holding no
// more of it than one row: a trace with a 200 MB tool result is not built
// as one string. Without it, a caller writes CanonicalTrace's string.
type TraceWriter interface {
	WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error
}

// FieldWriter is a source that writes one text field of a step row whole,
// a piece at a time, however large: the fields StepDetail names in
// FieldBytes ("result", "prompt", "tool call", "turn", an observation's
// text as ObservationField names it, an edit's hunk as EditField). The bytes are the
// store's, not made safe. Without it, a cut field stays cut.
type FieldWriter interface {
	WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error
}

// RequestGetter is a source that reads one request by its key. Without it,
// a caller looks the key up in Requests(ctx, false).
type RequestGetter interface {
	Request(ctx context.Context, key RequestKey) (Request, error)
}

// RunGetter is a source that reads one run by id, its goal whole (Runs may
// cut long goals) and its counts known. Without it, a caller finds the run
// in Runs and counts it with RunStats.
type RunGetter interface {
	Run(ctx context.Context, id string) (Run, error)
}

// QuickHeader is a source whose cursor can be taken first for a frame
// drawn from the newest runs (RecentRunner): HeadNewest's cursor follows in
// place only the runs among the newest limit, which is cheap where finding
// every run that can still change is a scan (whole says it already
// follows every run: there are no more than limit); WholeHead returns it
// following every run, the others read as they are when it is called.
// Call it before reading the runs the first cursor did not follow; Changes
// refuses a cursor from HeadNewest that was not made whole (which of the
// other runs changed meanwhile cannot be told). Without it, a caller takes
// Head.
type QuickHeader interface {
	HeadNewest(ctx context.Context, limit int) (cur Cursor, whole bool, err error)
	WholeHead(ctx context.Context, cur Cursor) (Cursor, error)
}

// RecentRunner is a source that reads its newest runs cheaply: at most
// limit runs, newest first, each root with its whole tree (a child whose
// root is older than the page is left for Runs), dressed as Runs dresses
// them. all says the page is every run. The explorer draws the page first
// and fills in the rest from Runs. Without it, a caller reads Runs.
type RecentRunner interface {
	RecentRuns(ctx context.Context, limit int) (runs []Run, all bool, err error)
}

// RunFinder is a source that says whether it holds a run without reading
// the others. Without it, a caller looks for the run in Runs.
type RunFinder interface {
	HasRun(ctx context.Context, id string) (bool, error)
}

// ProblemReporter is a source that opened despite parts it could not read
// (a Leviath runs directory with a damaged run). Problems lists them, one
// error each, for the caller to say once; the damaged parts' own reads
// return those errors. Without it, a source that opened has no such parts.
type ProblemReporter interface {
	Problems() []error
}

// StepRanger is a source that reads a stretch of a run's timeline without
// the rest, so a reader can hold a window of a run's steps instead of all of
// them. EachStepRow hands fn the run's timeline rows with from <= RowID <=
// to (to 0: to the run's newest row), in row order, a page at a time (each
// page its own short read; fn's error stops the read). Rows from a step's
// first row up to the row before the next step's first fold
// (AppendStepRows) into exactly those steps, as Steps folds them.
// ProviderCallsFor reads the run's provider attempts under the step numbers
// lo..hi, to time such a stretch (StampSteps). Without it, a caller reads
// the run whole with Steps.
type StepRanger interface {
	EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]StepRow) error) error
	ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]ProviderCall, error)
}

// CursorCodec is a source whose cursors can be written down and read back
// by another process that opens the same store: vigil agent hands a remote
// reader its cursor that way, so a reader whose link dropped resumes where
// it was on the agent started for the new link. A decoded cursor is
// checked like any other: Changes says Reset when the store at the path is
// not the one it was made on. Without it, a reader that changes process
// loads the store again.
type CursorCodec interface {
	EncodeCursor(Cursor) ([]byte, error)
	DecodeCursor([]byte) (Cursor, error)
}

// ResetReason is a cursor Changes returned with Reset that says, in a
// line, why the cursor before it could not be followed ("the journal of
// run X was written over"). Without it, a reader says the store is not
// the one the cursor was made on.
type ResetReason interface {
	ResetReason() string
}
