package store

import (
	"fmt"
	"time"
)

// MaxDetailBytes caps each text field of a step detail; a field cut there is
// named in StepDetail.Truncated so the view can say so.
const MaxDetailBytes = 256 << 10

// MaxContentBytes caps the text a request carries into memory (a write's
// payload can be megabytes); Request.ContentBytes tells the whole size.
const MaxContentBytes = 1 << 20

// MaxEventDetailBytes caps the detail of a context event or sample, a
// one-line fact (ContextEvent.DetailBytes, ContextSample.DetailBytes say
// the whole size of one cut there).
const MaxEventDetailBytes = 4 << 10

// The domain types below are what every view and CLI command sees. They are
// format-neutral: a run id is the format's own id as a string (an io-harness
// integer, a Starweaver run_<uuid>, a Leviath run directory name), and
// nothing here mirrors a SQL row.

// Run is one agent run; a sub-agent in a tree is a run of its own.
type Run struct {
	ID        string
	ParentID  string // "" for a root
	Depth     int
	Goal      string
	Workspace string
	Provider  string
	Status    Status  // the durable status, mapped onto the shared vocabulary
	Outcome   Outcome // "" while the run has not finished (or parked on a human)
	TurnKind  string
	StartedAt time.Time // zero when the store did not record it

	// Summary is present only for a run that has really finished; it is
	// absent, never zeroed, for a running or paused run.
	Summary *Summary

	// Steps and Tokens are what the run has done so far. StatsKnown is false
	// until they have been counted (a large store counts unfinished runs in
	// the background).
	Steps      int
	Tokens     int64
	StatsKnown bool
	// Unreported is how many of the steps counted into Tokens had no
	// reported count (StepRow.TokensUnknown): Tokens is then the sum of the
	// known ones, not the run's spend. A count taken from a finished run's
	// summary counts no steps, so it is 0 there.
	Unreported int
	// CountsWhole says Steps and Tokens of this open run are its whole
	// count as the format reads it now (Starweaver counts a live run from
	// its checkpoints): a reader takes them in place of its own and adds
	// no timeline rows to them.
	CountsWhole bool

	// Lease is who drives the run now, when the store records leases.
	Lease *Lease

	// Resumable says the run's outcome is not final in its format: its
	// status says it ended, but a resume continues it (io-harness's
	// terminal_outcome treats step_cap_reached, time_budget_exceeded and
	// cost_budget_exceeded as limits, not endings, and resume drives such a
	// run again under a lease while its status stays completed). A resumable
	// run that holds a lease of its own again is not finished (Reopened).
	Resumable bool

	// LeaselessDriver says the store shows the run being driven again by a
	// resume that takes no lease (io-harness's resume_with_decision: a
	// resumed:<id> decision, the deferred request resolved, work after it),
	// while its status still says paused. Nothing records whether that
	// driver is alive: the run's liveness is unknown, not paused.
	LeaselessDriver bool

	// Recovery is a tool call the run's driver started and never finished,
	// whose effect the store cannot tell (io-harness: an open tool_attempts
	// row). Without a live driver the run waits on a person's recovery
	// decision (StateRecovery); nil when there is none.
	Recovery *Recovery
}

// IsRoot reports whether the run has no parent.
func (r Run) IsRoot() bool { return r.ParentID == "" }

// Reopened reports a run whose status says it ended but which a resume
// drives again: its outcome is not final (Resumable) and it holds a lease of
// its own. Its summary, if the source still gives one, is of the earlier
// ending, and its counts come from its steps.
func (r Run) Reopened() bool { return r.Resumable && r.Lease != nil }

// Ended reports a run no step will follow: an ended status, unless a
// resume has reopened it.
func (r Run) Ended() bool { return r.Status.Ended() && !r.Reopened() }

// Recovery is a tool call a driver died in the middle of (io-harness's
// tool_attempts): a resume will not replay it until a person says what
// became of it.
type Recovery struct {
	AttemptID string
	Step      int
	Tool      string
	StartedAt time.Time
}

// Summary is the record a finished run leaves behind.
type Summary struct {
	Outcome     Outcome
	Success     bool
	Steps       int
	Tokens      int64
	Duration    time.Duration
	HasDuration bool
	FinishedAt  time.Time
}

// Lease says which process drives a run and until when.
type Lease struct {
	Owner      string
	Generation int64
	AcquiredAt time.Time
	RenewedAt  time.Time
	TTL        time.Duration
}

// OwnerPID is the process id at the start of an owner string
// ("<pid>-<nanos>-<seq>"), or 0 when the owner does not start with one.
func (l Lease) OwnerPID() int {
	pid := 0
	for i := 0; i < len(l.Owner); i++ {
		c := l.Owner[i]
		if c == '-' {
			break
		}
		if c < '0' || c > '9' || pid > 1<<22 {
			return 0
		}
		pid = pid*10 + int(c-'0')
	}
	return pid
}

// Expired reports whether the lease was not renewed within its ttl. Like
// io-harness, it compares whole seconds.
func (l Lease) Expired(now time.Time) bool {
	return now.Unix()-l.RenewedAt.Unix() >= int64(l.TTL/time.Second)
}

// Step is one step of a run as the timeline shows it. Rows the adapter
// marks as folding (provider retries, escalations, compactions) recorded
// under the same step number are folded into Retries.
type Step struct {
	RowID    int64 // the store's row id of the step's main row: stable, the selection key
	RunID    string
	Number   int
	Kind     StepKind // StepTurn, or while Pending the kind of the last folded row
	Decision string
	ToolCall string // a summary: long calls are cut (the detail has the whole text)
	// ResultHead is the first line of the step's result, cut short (the
	// detail has the whole result): enough for a one-line log.
	ResultHead string
	Tokens     int64
	// TokensUnknown: no count was recorded (Tokens is 0 then, not a count).
	TokensUnknown bool
	Retries       []Retry
	// Pending is true while only folded rows exist for the step: the step
	// itself has not been committed yet.
	Pending bool
	// At and Latency come from the step's provider calls (the steps table
	// has no time of its own): when the last call was made, and how long
	// all its attempts took. Zero when none was recorded.
	At      time.Time
	Latency time.Duration
}

// Retry is a row folded under a step: a provider retry, an escalation or
// a compaction (Kind says which).
type Retry struct {
	RowID    int64
	Kind     StepKind
	Decision string
}

// StepDetail is everything recorded about one step.
type StepDetail struct {
	Step
	Prompt        string
	Result        string
	ToolCallFull  string
	TurnText      string // what the model wrote that turn ("" when nothing)
	HasTurnText   bool
	Observations  []Observation
	Edits         []Edit
	ProviderCalls []ProviderCall
	Policy        []PolicyEvent
	Truncated     []string // names of fields cut to MaxDetailBytes
	// FieldBytes is the whole length in bytes of each field named in
	// Truncated that the store can write whole (FieldWriter); a field
	// missing here is cut for good.
	FieldBytes map[string]int64

	// Citations and ServerTools are what the provider cited and ran for the
	// model at this step; nil where the format records none (facts.go).
	Citations   []Citation
	ServerTools []ServerToolCall
	// Tools are the tool calls the row's model turn made, in the order it
	// made them; nil on a row that is not a model turn (a tool's result, a
	// status note) and where the format records no calls.
	Tools []ToolCall
}

// ToolCall is one call to a tool that a model turn made, as its format
// recorded it.
type ToolCall struct {
	ID        string // the call's id; "" where the format records none (io-harness)
	Name      string
	Arguments string // as recorded (JSON, usually), capped at MaxDetailBytes
}

// Observation is one ledger entry a step produced.
type Observation struct {
	// RowID is the entry's row in its store (0 where the format has none);
	// a Text cut to its head is named ObservationField(RowID) in
	// StepDetail.Truncated and FieldBytes.
	RowID int64
	// Step is the step the observation belongs to: its own, which is not
	// always the step whose commit wrote it (io-harness writes everything
	// observed since the last commit, each entry under its own step).
	Step   int
	Kind   string
	Target string
	Text   string
}

// ObservationField is the StepDetail field name of an observation's text.
func ObservationField(rowID int64) string { return fmt.Sprintf("observation %d", rowID) }

// EditField is the StepDetail field name of an edit's hunk.
func EditField(rowID int64) string { return fmt.Sprintf("edit %d", rowID) }

// Edit is one file change a step made.
type Edit struct {
	RowID        int64 // its row (0: none); a cut Hunk is named EditField(RowID)
	Tool         string
	Path         string
	LinesAdded   int
	LinesRemoved int
	Hunk         string
}

// ProviderCall is one attempt at a provider call; failed attempts are kept.
type ProviderCall struct {
	RowID            int64
	RunID            string
	Step             int
	Attempt          int
	Provider         string
	Model            string
	PromptTokens     *int64
	CompletionTokens *int64
	TotalTokens      *int64 // nil: the provider reported no usage at all
	CacheReadTokens  *int64
	CacheWriteTokens *int64
	ReasoningTokens  *int64
	ServerToolCalls  *int64 // server-tool requests the provider counted (searches, fetches it ran)
	LatencyMS        int64
	TTFTMS           *int64
	FinishReason     string
	Failure          string
	At               time.Time
}

// ContextSample is one turn's context-window size: the assembler's estimate
// beside what the provider reported. Reported is nil when the provider
// reported nothing; it is never replaced by the estimate.
type ContextSample struct {
	RowID     int64
	RunID     string
	Step      int
	Estimated int64
	// NoEstimate says the store recorded no estimate for the turn (a NULL
	// est_tokens; a format that keeps only the provider's count).
	NoEstimate bool
	Reported   *int64
	Detail     string
	// DetailBytes is the whole detail's length in bytes when Detail is cut
	// to its head (MaxEventDetailBytes), else 0.
	DetailBytes int64
}

// Request is something a run waits on a human for.
// RunLink names a run of another store and a tool call in its timeline.
type RunLink struct {
	Format string // the format of the store that holds the run
	RunID  string // the run's id in that store; in a set that holds it, the set's id
	CallID string // the tool call's id, "" when the request names none
	// InSet: RunID is a run of the source being read (a set holding that
	// store); otherwise it is only that store's own id.
	InSet bool
}

type Request struct {
	Kind  RequestKind
	ID    string // the format's own id, unique within its kind
	RunID string
	Step  int

	// Approval
	Act          string // read, write, exec, net
	Target       string
	Content      string // capped at MaxContentBytes
	HasContent   bool
	ContentBytes int64 // the payload's whole size
	// AlwaysAllow says, in words, what approving with Decision.Always
	// also lets the agent do from then on without asking (Claude Code's
	// permission suggestions); empty when the request offers nothing.
	AlwaysAllow string

	// Question
	Question string
	Context  string
	Choices  []string

	// Plan
	PlanSteps  []PlanStep
	Correction string // the text of a revise verdict

	Resolved bool
	// Standing is where the request stands in its run's life (the adapter's
	// reading); StandingReason says why in one line when it is not open.
	Standing       Standing
	StandingReason string
	// Decision is what was decided, in words: an approval's or a plan's
	// verdict (a Verdict's text), a question's answer, or what the format
	// says ended the wait.
	Decision  string
	DecidedBy string
	// DecidedAt is when the format says the decision was made (zero when it
	// records no time: io-harness keeps none).
	DecidedAt time.Time
	// Reason is the text a decider gave with a deny, where the format keeps
	// one (Starweaver's approval record); a plan's correction is Correction.
	Reason  string
	AskedAt time.Time

	// For is the agent's run and tool call the request acts on, for a
	// store that keeps requests apart from the runs (vigil's gate store).
	For RunLink

	// Ancestry is the chain of run ids from the root down to RunID.
	Ancestry []string
}

// Waits reports whether the request waits on a human: undecided, and not an
// orphan no driver reads. Only such requests count as waiting.
func (r Request) Waits() bool { return !r.Resolved && r.Standing != StandingOrphaned }

// Key identifies a request across kinds ("approval 3", "question 3").
func (r Request) Key() RequestKey { return RequestKey{Kind: r.Kind, ID: r.ID} }

// RequestKey identifies a request: ids are unique only within a kind.
type RequestKey struct {
	Kind RequestKind
	ID   string
}

func (k RequestKey) String() string { return k.Kind.String() + " " + k.ID }

// PlanStep is one intended step of a proposed plan.
type PlanStep struct {
	Intent string
	Agent  string
}

// PolicyEvent is a refusal or a decision of the permission policy.
type PolicyEvent struct {
	RowID     int64
	RunID     string
	Step      int
	Kind      PolicyKind
	Act       string
	Target    string
	Rule      string
	Layer     string
	Decision  PolicyVerdict // for a decision: what the approver decided
	Source    string
	Performed string
}

// AgentEvent is a tree event: spawn, spawn refusal, budget draw, message, ….
type AgentEvent struct {
	RowID      int64
	RunID      string
	Step       int
	Kind       AgentEventKind
	ChildRunID string
	Detail     string
	Tokens     *int64
	Remaining  *int64
}
