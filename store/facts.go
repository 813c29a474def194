package store

import "time"

// The facts below are what a store records about a run beyond its steps,
// requests and context samples: where its tokens went, what the provider
// ran and cited, its checkpoints and resumes, its gates, its memory, the
// audit events of its sandbox and MCP servers, and — while it runs — what
// it is doing inside the step it has not committed yet (the live stream),
// its plan, the children queued for a slot, the messages waiting for it and
// the processes it left running.
//
// Not every format records every fact, and an old store of a format that
// does may predate the table a fact lives in. A source says which facts it
// read in a FactSet; a fact it does not name is "not recorded by this
// store", never an error and never an empty list passed off as nothing
// having happened.

// Fact names one kind of fact a source may or may not record.
type Fact string

const (
	FactUsage         Fact = "usage"          // the token breakdown of provider calls (cache, reasoning, server tools)
	FactCitations     Fact = "citations"      // sources a provider said it drew on
	FactServerTools   Fact = "server_tools"   // tools the provider ran for the model (web search, fetch)
	FactCheckpoints   Fact = "checkpoints"    // checkpoints taken, resumes, skipped steps
	FactGates         Fact = "gates"          // verification-gate failures by phase
	FactGateAttempts  Fact = "gate_attempts"  // each gate evaluation and how it ended
	FactMemory        Fact = "memory"         // durable cross-run memory the run wrote
	FactContextEvents Fact = "context_events" // the context assembler's other events (served, replan, memory, …)
	FactSandbox       Fact = "sandbox"        // sandbox lifecycle events
	FactMCP           Fact = "mcp"            // MCP connects, discoveries and calls
	FactFolds         Fact = "folds"          // compaction summaries that fold older history
	FactRunEvents     Fact = "run_events"     // the live event stream (what happens inside a step)
	FactTodos         Fact = "todos"          // the agent's own plan
	FactQueue         Fact = "queue"          // children queued for a concurrency slot (no run yet)
	FactMessages      Fact = "messages"       // messages between agents of a tree
	FactProcesses     Fact = "processes"      // long-running processes a run started
)

// FactSet is the facts a source read. The zero value records nothing.
type FactSet map[Fact]bool

// Has reports whether the source records f.
func (s FactSet) Has(f Fact) bool { return s[f] }

// Add marks f recorded (s must not be nil).
func (s FactSet) Add(fs ...Fact) {
	for _, f := range fs {
		s[f] = true
	}
}

// NotRecorded is how every view and command says a fact is absent.
const NotRecorded = "not recorded by this store"

// Usage is a token breakdown summed over provider attempts. A count is nil
// when no attempt reported it (a format that has no such count, or calls
// that reported no usage), never 0 in its place.
type Usage struct {
	Calls    int // provider attempts
	Failed   int // attempts that failed
	Reported int // attempts that reported any usage
	// The provider's counts, summed over the attempts that reported each.
	Prompt, Completion, Total *int64
	CacheRead, CacheWrite     *int64 // prompt tokens read from / written to the provider's cache
	Reasoning                 *int64 // completion tokens spent thinking
	ServerToolRequests        *int64 // tools the provider ran for the model (searches, fetches)
}

// SumUsage adds up provider attempts.
func SumUsage(calls []ProviderCall) Usage {
	var u Usage
	add := func(dst **int64, v *int64) {
		if v == nil {
			return
		}
		if *dst == nil {
			*dst = new(int64)
		}
		**dst += *v
	}
	for _, c := range calls {
		u.Calls++
		if c.Failure != "" {
			u.Failed++
		}
		if c.TotalTokens != nil || c.PromptTokens != nil || c.CompletionTokens != nil {
			u.Reported++
		}
		add(&u.Prompt, c.PromptTokens)
		add(&u.Completion, c.CompletionTokens)
		add(&u.Total, c.TotalTokens)
		add(&u.CacheRead, c.CacheReadTokens)
		add(&u.CacheWrite, c.CacheWriteTokens)
		add(&u.Reasoning, c.ReasoningTokens)
		add(&u.ServerToolRequests, c.ServerToolCalls)
	}
	return u
}

// Citation is a source a provider said a step's answer drew on. It records
// what the provider returned, not that the page says so.
type Citation struct {
	RowID     int64
	RunID     string
	Step      int
	URL       string
	Title     string
	CitedText string
	At        time.Time
}

// ServerToolCall is a tool the provider ran on the model's behalf (a web
// search or fetch): nothing in the harness dialled it. Error is the
// provider's error for a call that failed inside an otherwise good
// response; "" for one that worked.
type ServerToolCall struct {
	RowID    int64
	RunID    string
	Step     int
	Provider string
	Tool     string
	Error    string
	At       time.Time
}

// ContextEvent is one of the context assembler's events other than the
// per-turn size (which is a ContextSample): a fallback provider serving the
// step, a replan, a re-read, a memory write or recall, a compaction, ….
// Kind is the format's own word.
type ContextEvent struct {
	RowID  int64
	RunID  string
	Step   int
	Kind   string
	Detail string
	// DetailBytes is the whole detail's length in bytes when Detail is cut
	// to its head (MaxEventDetailBytes), else 0.
	DetailBytes int64
}

// Marker is a checkpoint-lifecycle event other than a plain checkpoint: a
// resume (Detail says after what) or a step a resume skipped.
type Marker struct {
	Step   int
	Kind   string // the format's own word: resume, skipped
	Detail string
}

// Tally is a count under a name (gate failures by phase).
type Tally struct {
	Key   string
	Count int
}

// GateOutcome is how one gate evaluation ended.
type GateOutcome string

const (
	GatePassed  GateOutcome = "passed"
	GateFailed  GateOutcome = "failed"  // the criterion ran and said no
	GateErrored GateOutcome = "errored" // the criterion never ran (a transport failure, an unreadable verdict)
)

// GateAttempt is one evaluation of a run's verification gate.
type GateAttempt struct {
	RowID   int64
	Step    int
	Phase   string // what was evaluated, in the format's words (command, review, …)
	Outcome GateOutcome
	Detail  string
	At      time.Time
}

// MemoryEntry is one durable cross-run memory fact, keyed to a workspace;
// RunID and Step are where it was written.
type MemoryEntry struct {
	Workspace string
	Key       string
	Value     string
	RunID     string
	Step      int
	CreatedAt time.Time
	Kind      string // fact or decision
	Pinned    bool
}

// AuditEvent is a sandbox or MCP event of a run.
type AuditEvent struct {
	RowID  int64
	RunID  string
	Step   int
	Source string // sandbox, mcp, checkpoint
	Kind   string
	Detail string

	Backend string         // sandbox: the execution backend
	Server  string         // mcp: the server
	Tool    string         // mcp: the tool
	OK      *bool          // mcp: whether a call succeeded
	Millis  *time.Duration // mcp: how long a connect or call took; nil when not recorded
}

// Fold is a compaction summary: the text that stands in for a run's older
// history from some step on.
type Fold struct {
	Step      int // the step whose assembly triggered it
	Folded    int // how many earlier observations it folds
	Text      string
	EstTokens int64
	At        time.Time
}

// TodoState is where one item of an agent's plan stands, by the agent's
// own account (nothing verifies it).
type TodoState string

const (
	TodoPending TodoState = "pending"
	TodoActive  TodoState = "active"
	TodoDone    TodoState = "done"
)

// Todo is one item of the plan an agent wrote for itself.
type Todo struct {
	Position  int
	Text      string
	State     TodoState
	WrittenAt time.Time
}

// QueuedAgent is a child waiting for a concurrency slot. It has no run yet:
// nothing about it has started or been charged.
type QueuedAgent struct {
	ParentID string
	Step     int // the parent's step that asked for it
	Goal     string
	Depth    int
	QueuedAt time.Time
}

// AgentMessage is a message one agent of a tree sent another.
type AgentMessage struct {
	ID       string
	FromID   string
	ToID     string
	FromName string
	Step     int
	Body     string
	SentAt   time.Time
	ReadAt   time.Time // zero while unread
}

// Read reports whether the recipient has been handed the message.
func (m AgentMessage) Read() bool { return !m.ReadAt.IsZero() }

// ProcessState is what a run last knew of a process it started: a record,
// never a claim about the machine now.
type ProcessState string

const (
	ProcessRunning  ProcessState = "running"
	ProcessExited   ProcessState = "exited"
	ProcessKilled   ProcessState = "killed"
	ProcessOrphaned ProcessState = "orphaned" // started by a process now gone; left alone, never signalled
)

// Process is a long-running process a run started and registered as a
// handle.
type Process struct {
	RunID     string
	Handle    int64
	Step      int
	Line      string // the command line as the model wrote it
	PIDs      string
	State     ProcessState
	Code      *int // exit code; nil for a death by signal or while running
	Reason    string
	StartedAt time.Time
	EndedAt   time.Time
	Output    string // the end of what it printed, capped at MaxProcessOutput
}

// MaxProcessOutput caps how much of a process's output a Process carries
// (its last bytes).
const MaxProcessOutput = 16 << 10

// RunFacts is everything a source records about one run beyond its steps,
// requests and context samples. Recorded says which facts were read; the
// rest are not recorded by the store.
type RunFacts struct {
	RunID    string
	Recorded FactSet

	// Checkpoints taken; the resumes and skipped steps among the markers.
	Checkpoints int
	Markers     []Marker

	GateFailures []Tally // failures by phase, as the gate recorded them
	GateAttempts []GateAttempt

	Memory        []MemoryEntry // entries this run wrote (as they stand now)
	Recalled      []string      // memory keys the run drew on
	ContextEvents []ContextEvent
	Citations     []Citation
	ServerTools   []ServerToolCall
	Audit         []AuditEvent // sandbox and MCP events, in row order
	Folds         []Fold
	Todos         []Todo
	Queued        []QueuedAgent
	Messages      []AgentMessage // addressed to the run
	Processes     []Process
	// Stream is how many live-stream events the run broadcast; LastEvent
	// the newest (nil when none).
	Stream    int
	LastEvent *RunEvent
}

// Resumes counts the resume markers.
func (f RunFacts) Resumes() int {
	n := 0
	for _, m := range f.Markers {
		if m.Kind == "resume" {
			n++
		}
	}
	return n
}

// Activity is what the runs of a tree are doing now: their plans, the
// children queued under them, the messages waiting for them, the processes
// they started, and the newest events of the live stream.
type Activity struct {
	Recorded  FactSet
	Todos     map[string][]Todo
	Queued    map[string][]QueuedAgent  // by parent
	Unread    map[string][]AgentMessage // by recipient: not yet handed to it
	Processes map[string][]Process
	// Events are the newest events of each run after the query's cursor, at
	// most PerRun of each, oldest first.
	Events []RunEvent
	// Through is the stream's newest event id when the read began: the
	// events read are those up to it, and a caller's next After (0 when the
	// source does not say).
	Through int64
}

// ActivityQuery asks for the activity of some runs.
type ActivityQuery struct {
	RunIDs []string
	After  int64 // stream events after this id only
	PerRun int   // newest events per run (0: a default)
}

// LiveKind says what a live-stream event shows a run doing, mapped by the
// adapter from its format's own event names.
type LiveKind string

const (
	LiveStarted  LiveKind = "started"  // the run began
	LiveModel    LiveKind = "model"    // the model is producing output (streamed text, its reasoning)
	LiveTool     LiveKind = "tool"     // a tool was invoked; its result is not committed yet
	LiveRetry    LiveKind = "retry"    // a provider call failed and will be tried again after a wait
	LiveWaiting  LiveKind = "waiting"  // it asked a human (an approval, a question, a plan)
	LiveDecided  LiveKind = "decided"  // what it asked was answered
	LiveSpawned  LiveKind = "spawned"  // it started or queued a child
	LiveProcess  LiveKind = "process"  // a process it started is running (started, polled)
	LiveGate     LiveKind = "gate"     // its gate or a reviewer returned a verdict
	LiveStep     LiveKind = "step"     // a step committed
	LiveFinished LiveKind = "finished" // the run ended
	LiveOther    LiveKind = "other"    // anything else the stream carries
)

// RunEvent is one event of a run's live stream: what happens inside a
// step before the step commits. The stream is a notification, not the
// record: what is durable is read from the store's other tables.
type RunEvent struct {
	ID    int64 // the stream's cursor: grows across the whole store
	RunID string
	Step  int
	Kind  LiveKind
	Name  string        // the format's own word for the event (io-harness: its wire tag, "tool_call")
	Text  string        // what it was about, in one line (a tool and its target, a retry's failure)
	Size  int           // LiveModel: bytes of the streamed chunk
	Wait  time.Duration // LiveRetry: how long the run waits first
	At    time.Time
}
