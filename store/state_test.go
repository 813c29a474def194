package store

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// withFacts replaces the system facts OwnerCheck reads for one test.
func withFacts(t *testing.T, pidMax int64, started func(int) (time.Time, bool), alive func(int) bool, nested bool) {
	t.Helper()
	oldMax, oldStarted, oldAlive, oldNested := PIDMax, ProcessStarted, PIDAlive, NestedPIDNamespace
	PIDMax = func() (int64, bool) { return pidMax, pidMax > 0 }
	if started != nil {
		ProcessStarted = started
	}
	if alive != nil {
		PIDAlive = alive
	}
	NestedPIDNamespace = func() (bool, bool) { return nested, true }
	ResetOwnerChecks()
	t.Cleanup(func() {
		PIDMax, ProcessStarted, PIDAlive, NestedPIDNamespace = oldMax, oldStarted, oldAlive, oldNested
		ResetOwnerChecks()
	})
}

// io-harness's owner string is "<pid>-<unix-nanos>-<seq>" (new_owner_id,
// src/state.rs): a pid of the process that minted it, and when. Nothing
// names the host or the pid namespace, so a pid is checked here only where
// nothing shows it belongs elsewhere.
func TestOwnerCheck(t *testing.T) {
	now := time.Now()
	minted := now.Add(-time.Hour)
	owner := func(pid int) string { return fmt.Sprintf("%d-%d-0", pid, minted.UnixNano()) }
	mid := Lease{Owner: owner(4242), RenewedAt: now, TTL: time.Hour}

	t.Run("ours", func(t *testing.T) {
		withFacts(t, 32768, func(int) (time.Time, bool) { return minted.Add(-time.Minute), true }, func(int) bool { return true }, false)
		if f, note := OwnerCheck(mid); f || note != "" {
			t.Errorf("foreign %v, note %q", f, note)
		}
		if l := LivenessOf(&mid, true, now); l != Live {
			t.Errorf("liveness %v, want live", l)
		}
	})
	t.Run("beyond pid_max", func(t *testing.T) {
		withFacts(t, 32768, nil, func(int) bool { return true }, false)
		l := Lease{Owner: owner(99999), RenewedAt: now, TTL: time.Hour}
		f, note := OwnerCheck(l)
		if !f || !strings.Contains(note, "pid_max 32768") || !strings.Contains(note, "another host or in another pid namespace") {
			t.Errorf("foreign %v, note %q", f, note)
		}
		if got := LivenessOf(&l, true, now); got != Foreign {
			t.Errorf("liveness %v, want foreign", got)
		}
		// Not paused, not crashed, not running: its liveness is unknown.
		if got := StateOf(Run{Status: StatusRunning}, &l, true, true, now); got != StateWaiting {
			t.Errorf("waiting run: %v", got)
		}
		if got := StateOf(Run{Status: StatusRunning}, &l, true, false, now); got != StateUnknown {
			t.Errorf("run: %v", got)
		}
	})
	t.Run("pid reused or another namespace's", func(t *testing.T) {
		withFacts(t, 4194304, func(int) (time.Time, bool) { return minted.Add(time.Minute), true }, func(int) bool { return true }, false)
		f, note := OwnerCheck(mid)
		if !f || !strings.Contains(note, "started") || !strings.Contains(note, "after the lease's owner was minted") {
			t.Errorf("foreign %v, note %q", f, note)
		}
	})
	t.Run("within the clock's grain", func(t *testing.T) {
		withFacts(t, 4194304, func(int) (time.Time, bool) { return minted.Add(time.Second), true }, func(int) bool { return true }, false)
		if f, note := OwnerCheck(mid); f {
			t.Errorf("a process started a second after the owner was minted is foreign: %q", note)
		}
	})
	t.Run("dead, vigil in a container", func(t *testing.T) {
		withFacts(t, 4194304, nil, func(int) bool { return false }, true)
		f, note := OwnerCheck(mid)
		if f || !strings.Contains(note, "nested pid namespace") {
			t.Errorf("foreign %v, note %q", f, note)
		}
		if l := LivenessOf(&mid, true, now); l != Dead {
			t.Errorf("liveness %v, want dead (with the note)", l)
		}
	})
	t.Run("no pid", func(t *testing.T) {
		withFacts(t, 4194304, nil, nil, false)
		if f, note := OwnerCheck(Lease{Owner: "host-a:worker"}); f || !strings.Contains(note, "names no pid") {
			t.Errorf("foreign %v, note %q", f, note)
		}
	})
}

// The real system facts for this process: its own start time is before now
// and after boot, and its own owner string (minted now) is not foreign.
func TestOwnerCheckThisProcess(t *testing.T) {
	started, ok := procStarted(os.Getpid())
	if !ok {
		t.Skip("no /proc")
	}
	if started.After(time.Now()) || time.Since(started) > 24*time.Hour*365 {
		t.Fatalf("this process started %v?", started)
	}
	ResetOwnerChecks()
	l := Lease{Owner: fmt.Sprintf("%d-%d-0", os.Getpid(), time.Now().UnixNano()), RenewedAt: time.Now(), TTL: time.Hour}
	if f, note := OwnerCheck(l); f {
		t.Errorf("this process's own owner is foreign: %s", note)
	}
	old := Lease{Owner: fmt.Sprintf("%d-%d-0", os.Getpid(), started.Add(-time.Hour).UnixNano()), RenewedAt: time.Now(), TTL: time.Hour}
	if f, _ := OwnerCheck(old); !f {
		t.Error("an owner minted an hour before this process started is not foreign")
	}
}

// StateOf with the adapter's readings: a reopened run is read by its own
// lease, not its ended status; a leaselessly driven parked run is unknown
// (waiting when it waits), not paused; a dead driver mid tool call leaves
// the run waiting on recovery, not crashed.
func TestStateOfReadings(t *testing.T) {
	withFacts(t, 4194304, func(int) (time.Time, bool) { return time.Time{}, false }, func(pid int) bool { return pid == 1 }, false)
	now := time.Now()
	live := &Lease{Owner: "1-0-0", RenewedAt: now, TTL: time.Hour}
	dead := &Lease{Owner: "2-0-0", RenewedAt: now, TTL: time.Hour}
	capped := Run{ID: "1", Status: StatusCompleted, Outcome: OutcomeStepCapReached, Resumable: true}
	if got := StateOf(capped, nil, true, false, now); got != StateFinished {
		t.Errorf("capped, no lease: %v", got)
	}
	reopened := capped
	reopened.Lease = live
	if got := StateOf(reopened, live, true, false, now); got != StateRunning {
		t.Errorf("reopened: %v", got)
	}
	crashedAgain := capped
	crashedAgain.Lease = dead
	if got := StateOf(crashedAgain, dead, true, false, now); got != StateCrashed {
		t.Errorf("reopened, driver dead: %v", got)
	}
	child := Run{ID: "2", ParentID: "1", Status: StatusCompleted, Outcome: OutcomeStepCapReached, Resumable: true}
	if got := StateOf(child, live, true, false, now); got != StateFinished {
		t.Errorf("a finished child under a live root: %v", got)
	}
	success := Run{Status: StatusCompleted, Outcome: OutcomeSuccess, Lease: live}
	if got := StateOf(success, live, true, false, now); got != StateFinished {
		t.Errorf("success with a lease: %v", got)
	}
	parked := Run{Status: StatusPaused, Outcome: OutcomeAwaitingApproval}
	if got := StateOf(parked, nil, true, true, now); got != StatePaused {
		t.Errorf("parked: %v", got)
	}
	parked.LeaselessDriver = true
	if got := StateOf(parked, nil, true, true, now); got != StateWaiting {
		t.Errorf("leaseless, waiting: %v", got)
	}
	if got := StateOf(parked, nil, true, false, now); got != StateUnknown {
		t.Errorf("leaseless: %v", got)
	}
	mid := Run{Status: StatusRunning, Recovery: &Recovery{AttemptID: "1", Step: 2, Tool: "charge_card"}}
	if got := StateOf(mid, dead, true, false, now); got != StateRecovery {
		t.Errorf("recovery, dead driver: %v", got)
	}
	if got := StateOf(mid, nil, true, false, now); got != StateRecovery {
		t.Errorf("recovery, no lease: %v", got)
	}
	if got := StateOf(mid, live, true, false, now); got != StateRunning {
		t.Errorf("a live driver inside the call: %v", got)
	}
	if StateRecovery.String() != "recovery" || Foreign.String() != "foreign" || StandingOrphaned.String() != "orphaned" {
		t.Error("vocabulary words")
	}
	if (Request{Standing: StandingOrphaned}).Waits() || !(Request{Standing: StandingParked}).Waits() || (Request{Resolved: true}).Waits() {
		t.Error("Waits")
	}
	if Orphaned.Writable() {
		t.Error("an orphan is writable")
	}
}
