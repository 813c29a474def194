package store

import (
	"context"
	"io"
	"strings"
	"time"
)

// The optional interfaces below are what a format MAY implement beside
// Core, in the manner of database/sql/driver. Complete looks for each
// once, when the source is opened, and supplies the fallback for the ones
// a format lacks (each interface says what it is), so that every opened
// Source answers them all and callers never assert them. Capabilities
// says which a source answers natively.

// Capabilities is a set of the answers a source gives natively rather
// than through Complete's fallback.
type Capabilities uint32

const (
	CapRun         Capabilities = 1 << iota // Run: one run, goal whole, counts known
	CapRequest                              // Request: one request by key
	CapHasRun                               // HasRun without reading the other runs
	CapFirstPage                            // RecentRuns: the newest page alone
	CapQuickHead                            // HeadNewest: a first cursor following the newest page only
	CapWindow                               // EachStepRow: a stretch of a timeline (a windowed timeline)
	CapDetails                              // StepDetails: every step's detail in one pass
	CapFields                               // WriteStepField: a cut field streamed whole
	CapFacts                                // RunFacts
	CapActivity                             // Activity: a tree's live strip
	CapWriteClock                           // LastWrite from the store's own rows
	CapPolicy                               // PolicyEvents: who decided an approval
	CapReason                               // CarriesReason: the format takes a reason with some verdicts
	CapProblems                             // Problems: parts it opened without
	CapCursorCodec                          // EncodeCursor: cursors another process resumes
	CapTrace                                // WriteCanonicalTrace
	CapReadingNote                          // ReadingNote: what the browsing connection reads without, in short

	capEnd
)

// AllCapabilities is every capability there is.
const AllCapabilities = capEnd - 1

var capNames = []string{"run", "request", "has-run", "first-page", "quick-head", "window", "details", "fields",
	"facts", "activity", "write-clock", "policy", "reason", "problems", "cursor-codec", "trace",
	"reading-note"}

// Has reports whether every capability of x is in c.
func (c Capabilities) Has(x Capabilities) bool { return c&x == x }

// Names lists c's capabilities by name, in a fixed order.
func (c Capabilities) Names() []string {
	var out []string
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// String is c's names, comma-separated ("none" when empty).
func (c Capabilities) String() string {
	if c == 0 {
		return "none"
	}
	return strings.Join(c.Names(), ",")
}

// CapabilitiesNamed is the set of the names given; names it does not know
// (a newer vigil's) are left out.
func CapabilitiesNamed(names []string) Capabilities {
	var c Capabilities
	for _, n := range names {
		for i, k := range capNames {
			if n == k {
				c |= 1 << i
			}
		}
	}
	return c
}

// RunGetter reads one run by id, its goal whole (Runs may cut long goals)
// and its counts known. Fallback: the run found in Runs, counted with
// RunStats; ErrNoSuchRun when it is not there.
type RunGetter interface {
	Run(ctx context.Context, id string) (Run, error)
}

// RequestGetter reads one request by its key. Fallback: the key looked up
// in Requests(ctx, false); ErrNoSuchReq when it is not there.
type RequestGetter interface {
	Request(ctx context.Context, key RequestKey) (Request, error)
}

// RunFinder says whether the store holds a run without reading the others.
// Fallback: the run looked for in Runs.
type RunFinder interface {
	HasRun(ctx context.Context, id string) (bool, error)
}

// RecentRunner reads the newest runs cheaply: at most limit runs, newest
// first, each root with its whole tree (a child whose root is older than
// the page is left for Runs), dressed as Runs dresses them. all says the
// page is every run. The explorer draws the page first and fills in the
// rest from Runs. Fallback: every run (Runs), all true.
type RecentRunner interface {
	RecentRuns(ctx context.Context, limit int) (runs []Run, all bool, err error)
}

// QuickHeader takes a cursor first for a frame drawn from the newest runs
// (RecentRunner): HeadNewest's cursor follows in place only the runs among
// the newest limit, which is cheap where finding every run that can still
// change is a scan (whole says it already follows every run: there are no
// more than limit); WholeHead returns it following every run, the others
// read as they are when it is called. Call it before reading the runs the
// first cursor did not follow; Changes refuses a cursor from HeadNewest
// that was not made whole (which of the other runs changed meanwhile
// cannot be told). Fallback: Head, whole; WholeHead returns the cursor it
// is given.
type QuickHeader interface {
	HeadNewest(ctx context.Context, limit int) (cur Cursor, whole bool, err error)
	WholeHead(ctx context.Context, cur Cursor) (Cursor, error)
}

// StepRanger reads a stretch of a run's timeline without the rest, so a
// reader can hold a window of a run's steps instead of all of them.
// EachStepRow hands fn the run's timeline rows with from <= RowID <= to
// (to 0: to the run's newest row), in row order, a page at a time (each
// page its own short read; fn's error stops the read). Rows from a step's
// first row up to the row before the next step's first fold
// (AppendStepRows) into exactly those steps, as Steps folds them.
// ProviderCallsFor reads the run's provider attempts under the step
// numbers lo..hi, to time such a stretch (StampSteps). Fallback: the run
// read whole with Steps and unfolded into its rows, and ProviderCalls
// filtered by step; a reader that can hold the whole run reads Steps
// instead (CapWindow says which is cheaper).
type StepRanger interface {
	EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]StepRow) error) error
	ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]ProviderCall, error)
}

// DetailReader reads every step's detail of a run in one pass (its Prompt
// left empty: StepDetail reads one). Fallback: StepDetail for each step.
type DetailReader interface {
	StepDetails(ctx context.Context, runID string) ([]StepDetail, error)
}

// FieldWriter writes one text field of a step row whole, a piece at a
// time, however large: the fields StepDetail names in FieldBytes
// ("result", "prompt", "tool call", "turn", an observation's text as
// ObservationField names it, an edit's hunk as EditField). The bytes are
// the store's, not made safe. Fallback: a cut field stays cut — the text
// StepDetail has is written when the field is whole there, and a field it
// cut is refused with ErrUnsupported.
type FieldWriter interface {
	WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error
}

// FactReader reads a run's facts (facts.go). Fallback: every fact is not
// recorded by the store.
type FactReader interface {
	RunFacts(ctx context.Context, runID string) (RunFacts, error)
}

// ActivityReader reads what the runs of a tree are doing now. Fallback: no
// activity, nothing recorded (a caller shows no live strip).
type ActivityReader interface {
	Activity(ctx context.Context, q ActivityQuery) (Activity, error)
}

// WriteClock knows when the store was last written, from the store's own
// records (the newest time any row carries), never from file times a
// reader's own open can move. Zero when the store records no times.
// Fallback: zero (a caller knows only when it saw a change itself).
type WriteClock interface {
	LastWrite(ctx context.Context) (time.Time, error)
}

// PolicyReader reads a run's permission-policy events (io-harness's
// policy_events). vigil reads it for who decided an approval: a run
// records decision/<verdict>/<source> when it acts on the row ("attached"
// for another process, "approver" for its own approver). Fallback: no
// events (an approval's channel is not known).
type PolicyReader interface {
	PolicyEvents(ctx context.Context, runID string) ([]PolicyEvent, error)
}

// ReasonCarrier is a format that carries a person's reason for a decision
// to the agent: Starweaver's approval record keeps a deny's reason.
// Fallback: false (a reason typed with a deny reaches nobody, and the
// explorer says so). A plan's revise carries its correction in every
// format that has plans; that is not a reason in this sense.
type ReasonCarrier interface {
	CarriesReason(kind RequestKind, v Verdict) bool
}

// ProblemReporter is a source that opened despite parts it could not read
// (a Leviath runs directory with a damaged run). Problems lists them, one
// error each, for the caller to say once; the damaged parts' own reads
// return those errors. Fallback: none (a source that opened has no such
// parts).
type ProblemReporter interface {
	Problems() []error
}

// ReadingNoter says, in a few words for a status bar, what the store's
// browsing connection reads it without as of its last read (a WAL with no
// -shm beside it: its commits not shown), "" when nothing; Problems has
// the whole line. Fallback: "" (nothing to say).
type ReadingNoter interface {
	ReadingNote() string
}

// CursorCodec writes cursors down and reads them back in another process
// that opens the same store: vigil agent hands a remote reader its cursor
// that way, so a reader whose link dropped resumes where it was on the
// agent started for the new link. A decoded cursor is checked like any
// other: Changes says Reset when the store at the path is not the one it
// was made on. Fallback: an ErrUnsupported error saying the format's
// cursors cannot be resumed (a reader that changes process loads the
// store again).
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

// Tracer is a format with a canonical, comparable text form of a run: one
// line per step and context event, with no ids or times, so two runs of
// the same task can be diffed. A Source writes it with
// WriteCanonicalTrace (CapTrace); without it, trace and diff are not
// available for the format.
type Tracer interface {
	CanonicalTrace(ctx context.Context, runID string) (string, error)
}

// TraceWriter is a Tracer that writes the trace as it builds it, holding
// no more of it than one row: a trace with a 200 MB tool result is not
// built as one string. A Tracer without it has its string written.
type TraceWriter interface {
	WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error
}
