package store

// The vocabulary every format is mapped onto. Each word is a named type
// with constants, in the manner of http.MethodGet: views, the TUI and the
// CLI compare and assign only these constants, and each adapter is the one
// place where its own format's words are read and translated.

// Status is a run's durable status as the shared state logic (StateOf)
// reads it. The words are io-harness's, since its store is the model the
// others are mapped onto; an adapter carries a status it does not know
// through unchanged (Status(s)), and StateOf reads such a run as unfinished.
type Status string

const (
	StatusRunning   Status = "running"   // driven, or crashed: only the lease tells which
	StatusPaused    Status = "paused"    // deferred: waits for its host to resume it with a decision
	StatusCompleted Status = "completed" // ended (an outcome says how)
	StatusFailed    Status = "failed"    // ended by an error
)

// Ended reports a status that no step will follow.
func (s Status) Ended() bool { return s == StatusCompleted || s == StatusFailed }

// Outcome is how a run ended, or why it stopped, in its format's words: the
// set is open, and an adapter passes a word it does not map through as
// Outcome(word). The constants are the words vigil's shared code reasons
// about (colours, parking, summaries), grouped by the format that writes
// them.
type Outcome string

const (
	// io-harness (RunOutcome variants, snake_case as its store writes them).
	OutcomeSuccess              Outcome = "success"
	OutcomeAwaitingAnswer       Outcome = "awaiting_answer" // parked on a question: the status is completed
	OutcomeAwaitingApproval     Outcome = "awaiting_approval"
	OutcomeAwaitingPlan         Outcome = "awaiting_plan"
	OutcomeStepCapReached       Outcome = "step_cap_reached"
	OutcomeTimeBudgetExceeded   Outcome = "time_budget_exceeded"
	OutcomeCostBudgetExceeded   Outcome = "cost_budget_exceeded"
	OutcomeBudgetCeilingReached Outcome = "budget_ceiling_reached"
	OutcomeStalled              Outcome = "stalled"
	OutcomeDenied               Outcome = "denied"
	OutcomePlanRejected         Outcome = "plan_rejected"

	// Starweaver (its run statuses, as the adapter maps them).
	OutcomeFinished  Outcome = "finished"  // status completed
	OutcomeFailed    Outcome = "failed"    // status failed
	OutcomeContinued Outcome = "continued" // a waiting run a continuation has taken over

	// Leviath (its terminal RunStatus words).
	OutcomeComplete            Outcome = "complete"
	OutcomeCompleteInteractive Outcome = "complete_interactive" // complete, still taking follow-ups
	OutcomeError               Outcome = "error"
	OutcomeUnreadable          Outcome = "unreadable" // vigil's: a run whose files cannot be read

	// More than one format.
	OutcomeCancelled Outcome = "cancelled"
)

// Succeeded reports an outcome that means the run did its job.
func (o Outcome) Succeeded() bool {
	switch o {
	case OutcomeSuccess, OutcomeFinished, OutcomeComplete, OutcomeCompleteInteractive:
		return true
	}
	return false
}

// Stopped reports an outcome that ended the run short of its goal without
// an error: a limit ran out, or a person or the harness stopped it.
func (o Outcome) Stopped() bool {
	switch o {
	case OutcomeStepCapReached, OutcomeTimeBudgetExceeded, OutcomeCostBudgetExceeded, OutcomeBudgetCeilingReached,
		OutcomeStalled, OutcomeCancelled:
		return true
	}
	return false
}

// Verdict is what a person decides about an approval or a plan. A question
// is answered in words instead (Decision.Text) and has no verdict.
type Verdict string

const (
	VerdictApprove Verdict = "approve" // an approval or a plan
	VerdictDeny    Verdict = "deny"    // an approval
	VerdictRevise  Verdict = "revise"  // a plan, with a correction
	VerdictCancel  Verdict = "cancel"  // a plan
)

// Allows reports whether v is a verdict a request of kind k can be decided
// with.
func (v Verdict) Allows(k RequestKind) bool {
	switch k {
	case Approval:
		return v == VerdictApprove || v == VerdictDeny
	case Plan:
		return v == VerdictApprove || v == VerdictRevise || v == VerdictCancel
	}
	return false
}

// RequestKind says what a human is asked for.
type RequestKind int

const (
	Approval RequestKind = iota // approve or deny an action
	Question                    // answer in words
	Plan                        // approve, revise or cancel a plan
)

func (k RequestKind) String() string {
	switch k {
	case Approval:
		return "approval"
	case Question:
		return "question"
	case Plan:
		return "plan"
	}
	return "request"
}

// AgentEventKind says what happened in a run tree. The words are
// io-harness's agent_events kinds; other formats map what they record onto
// them (a Starweaver subagent is a spawn).
type AgentEventKind string

const (
	AgentSpawn        AgentEventKind = "spawn"         // a child run was started (ChildRunID)
	AgentSpawnRefused AgentEventKind = "spawn_refused" // a spawn was refused (Detail: the limit)
	AgentSpawnArgs    AgentEventKind = "spawn_args"    // the arguments a child was spawned with
	AgentBudgetDraw   AgentEventKind = "budget_draw"   // tokens drawn from the shared budget (Tokens, Remaining)
	AgentSaid         AgentEventKind = "said"          // the agent told its parent something
	AgentMessageSent  AgentEventKind = "message_sent"
	AgentMessageRead  AgentEventKind = "message_read"
	AgentCheckpoint   AgentEventKind = "checkpoint" // a checkpoint the run took (Starweaver)
)

// PolicyKind says what a permission-policy event records.
type PolicyKind string

const (
	PolicyRefusal  PolicyKind = "refusal"  // an action the policy refused outright
	PolicyDecision PolicyKind = "decision" // the policy's decision on an action
)

// PolicyVerdict is what a policy decision event records was decided about
// an action: by a rule of the policy (allow, deny), or by the approver it
// asked (approve, deny, defer).
type PolicyVerdict string

const (
	PolicyAllow   PolicyVerdict = "allow"   // a rule allowed it
	PolicyApprove PolicyVerdict = "approve" // the approver approved it
	PolicyDeny    PolicyVerdict = "deny"
	PolicyDefer   PolicyVerdict = "defer" // left to a human: the run parks on an approval
)

// StepKind says what a timeline row is. Each adapter sets it from its own
// format's facts; nothing decides it from display text. The zero value is
// an ordinary step, so a format whose rows are all steps sets nothing.
type StepKind int

const (
	StepTurn       StepKind = iota // a step: the model's turn and what came of it
	StepRetry                      // a provider attempt that failed and was retried
	StepEscalation                 // the harness moved to another model after failures
	StepCompaction                 // the context was compacted before the step
)

func (k StepKind) String() string {
	switch k {
	case StepTurn:
		return "turn"
	case StepRetry:
		return "retry"
	case StepEscalation:
		return "escalation"
	case StepCompaction:
		return "compaction"
	}
	return "step"
}

// Folds reports a row that belongs under its step rather than being one:
// the timeline folds it into the step with the same number.
func (k StepKind) Folds() bool { return k != StepTurn }

// State is how a run reads to a person watching it (see StateOf).
type State int

const (
	StateRunning  State = iota // driven by a live process
	StateWaiting               // live, and parked on a human
	StatePaused                // deferred: waits for its host to resume it with a decision
	StateStale                 // lease lapsed and nothing waiting: the driver may be hung
	StateCrashed               // the driver is gone; a resume would continue it
	StateFinished              // ended with an outcome
	StateUnknown               // running by its status; the store cannot say more
	// StateRecovery: the driver died in the middle of a tool call whose effect
	// cannot be replayed safely (Run.Recovery), and a resume stops until a
	// person says what became of it: retry it, take it as completed, or abort.
	StateRecovery
)

func (s State) String() string {
	return [...]string{"running", "waiting", "paused", "stale", "crashed", "finished", "running?", "recovery"}[s]
}

// Standing is where an undecided request stands in its run's life, as the
// adapter reads it from its own format's records (io-harness: the run's
// steps, its policy events and its newer requests). It is apart from
// liveness: Classify combines the two. The zero value, StandingOpen, is
// what a format that cannot say more reports.
type Standing int

const (
	StandingOpen     Standing = iota // asked, and the run has not moved on: whoever drives the run reads a decision
	StandingParked                   // the run stopped on it: its host resumes it with the decision (deferred)
	StandingOrphaned                 // nobody reads it any more: a later life of the run asked again, or moved past it
)

func (s Standing) String() string {
	return [...]string{"open", "parked", "orphaned"}[s]
}

// Liveness is what the lease table says about who drives a run. A status of
// running is also what a crashed run looks like; only the lease tells.
type Liveness int

const (
	LivenessUnknown Liveness = iota // the store records no leases (before io-harness 0.62)
	Live                            // lease within its ttl, owner process alive
	Lapsed                          // lease past its ttl, owner process still alive
	Dead                            // owner process gone
	Unleased                        // no lease: nobody drives the run
	// Foreign: the owner is not a process vigil can check. A pid is only
	// meaningful in the pid namespace (and on the host) that minted it, and
	// the lease records neither: when the owner's pid cannot be one of this
	// namespace's, or names a process started after the owner was minted,
	// liveness by pid does not hold. OwnerCheck says why.
	Foreign
)

func (l Liveness) String() string {
	return [...]string{"unknown", "live", "lapsed", "dead", "unleased", "foreign"}[l]
}
