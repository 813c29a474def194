package store

import (
	"errors"
	"syscall"
	"time"
)

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

// Parked reports a run stopped to wait on a human: paused, or (io-harness
// marks that one completed) awaiting an answer.
func (r Run) Parked() bool { return r.Status == StatusPaused || r.Outcome == OutcomeAwaitingAnswer }

// StateOf tells a run's state from its status, its effective lease and
// whether it (or, for a tree, anything under it) waits on a human.
func StateOf(r Run, lease *Lease, recordsLeases, waiting bool, now time.Time) State {
	live := LivenessOf(lease, recordsLeases, now)
	driven := live == Live || live == Lapsed
	switch {
	case r.Parked() && !driven:
		return StatePaused
	case r.Parked():
		// io-harness never sets a resumed run's status back to running: a
		// parked row with a live driver is running again.
	case r.Status.Ended():
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
