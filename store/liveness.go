package store

import (
	"errors"
	"syscall"
	"time"
)

// Liveness is what the lease table says about who drives a run. A status of
// "running" is also what a crashed run looks like; only the lease tells.
type Liveness int

const (
	LivenessUnknown Liveness = iota // the store records no leases (before io-harness 0.62)
	Live                            // lease within its ttl, owner process alive
	Lapsed                          // lease past its ttl, owner process still alive
	Dead                            // owner process gone
	Unleased                        // no lease: nobody drives the run
)

func (l Liveness) String() string {
	return [...]string{"unknown", "live", "lapsed", "dead", "unleased"}[l]
}

// PIDAlive is how liveness checks an owner process; tests replace it.
var PIDAlive = defaultPIDAlive

func defaultPIDAlive(pid int) bool {
	if pid <= 0 {
		return true // unreadable owner: err toward alive, as io-harness does
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LivenessOf judges a lease. A run parked on a human commits no step and so
// renews nothing: past its ttl with the owner alive it is Lapsed, and still
// reads its pending rows.
func LivenessOf(l *Lease, recordsLeases bool, now time.Time) Liveness {
	switch {
	case !recordsLeases:
		return LivenessUnknown
	case l == nil:
		return Unleased
	case !PIDAlive(l.OwnerPID()):
		return Dead
	case l.Expired(now):
		return Lapsed
	}
	return Live
}

// EffectiveLease is the lease that drives a run: its own, or (io-harness
// leases only the root of a tree) the nearest ancestor's.
func EffectiveLease(r Run, byID map[string]Run) *Lease {
	seen := map[string]bool{}
	for {
		if r.Lease != nil {
			return r.Lease
		}
		if r.ParentID == "" || seen[r.ID] {
			return nil
		}
		seen[r.ID] = true
		p, ok := byID[r.ParentID]
		if !ok {
			return nil
		}
		r = p
	}
}

// State is how a run reads to a person watching it.
type State int

const (
	StateRunning  State = iota // driven by a live process
	StateWaiting               // live, and parked on a human
	StatePaused                // deferred: waits for its host to resume it with a decision
	StateStale                 // lease lapsed and nothing waiting: the driver may be hung
	StateCrashed               // the driver is gone; a resume would continue it
	StateFinished              // ended with an outcome
	StateUnknown               // running by its status; the store cannot say more
)

func (s State) String() string {
	return [...]string{"running", "waiting", "paused", "stale", "crashed", "finished", "running?"}[s]
}

// StateOf tells a run's state from its status, its effective lease and
// whether it (or, for a tree, anything under it) waits on a human.
func StateOf(r Run, lease *Lease, recordsLeases, waiting bool, now time.Time) State {
	live := LivenessOf(lease, recordsLeases, now)
	driven := live == Live || live == Lapsed
	parkedByOutcome := r.Status == "paused" || r.Outcome == "awaiting_answer"
	switch {
	case parkedByOutcome && !driven:
		return StatePaused
	case parkedByOutcome:
		// io-harness never sets a resumed run's status back to running: a
		// parked row with a live driver is running again.
	case r.Status == "completed" || r.Status == "failed":
		return StateFinished
	}
	switch live {
	case LivenessUnknown:
		if waiting {
			return StateWaiting
		}
		return StateUnknown
	case Live:
		if waiting {
			return StateWaiting
		}
		return StateRunning
	case Lapsed:
		if waiting {
			return StateWaiting
		}
		return StateStale
	}
	return StateCrashed
}
