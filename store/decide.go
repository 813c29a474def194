package store

// Decision is what a person decides about a request.
type Decision struct {
	Key     RequestKey
	Verdict Verdict // approval: approve | deny; plan: approve | revise | cancel; question: none
	Text    string  // a question's answer; a revise verdict's correction
	// By names who decides and how, for a store that keeps its decider
	// (vigil's gate store); internal/decision fills it from its Maker.
	By string `json:",omitempty"`
	// Always approves and lets the agent keep allowing what the request
	// offers to (Request.AlwaysAllow); refused where nothing is offered.
	Always bool `json:",omitempty"`
}

// DecideResult says whether this decider's write landed. When it did not,
// the request was already decided and Decision/DecidedBy say how.
type DecideResult struct {
	Won       bool
	Decision  string
	DecidedBy string
}

// Delivery says what writing a decision now would do.
type Delivery int

const (
	Deliverable     Delivery = iota // the run is live and parked: it reads the decision within moments
	DeliveryUnknown                 // the store records no leases: the run reads it if it still waits
	Deferred                        // the run is paused: its host must resume it with the decision
	NotLive                         // the driver is gone: nobody would read it, a resume asks again
	Closed                          // the run has ended
	// Orphaned: nobody will ever read a decision on this request. Its run
	// asked again in a newer request (a crash resume replays the step that
	// asked), or has moved past the step that asked: no driver polls it and
	// no resume consumes it. Request.Standing says so, with the reason.
	Orphaned
)

// Writable reports whether a decision may be written in this case.
func (d Delivery) Writable() bool { return d == Deliverable || d == DeliveryUnknown }
