package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
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

// The facts OwnerCheck reads about this system. Tests replace them; each
// answers ok false where the system cannot tell (no /proc).
var (
	// ProcessStarted is when the process with this pid started.
	ProcessStarted = procStarted
	// PIDMax is the largest pid this pid namespace hands out.
	PIDMax = procPIDMax
	// NestedPIDNamespace reports whether vigil runs in a pid namespace
	// below the host's (a container), where the host's processes are not
	// visible.
	NestedPIDNamespace = procNestedPIDNamespace
)

// OwnerCheck says whether a lease's owner is a process vigil can check, and
// if there is something to say about it, says it in one line. A pid means
// something only in the pid namespace (and on the host) that minted it, and
// an io-harness owner string ("<pid>-<unix-nanos>-<seq>") records neither,
// so the check looks for evidence that the owner is not this namespace's:
// a pid above this namespace's pid_max, or a live pid whose process started
// after the owner was minted (another namespace's process, or a reused pid:
// either way not the owner). foreign is true on such evidence. Without it
// the note may still say what the check cannot see (vigil in a nested pid
// namespace, where a host's driver looks dead).
func OwnerCheck(l Lease) (foreign bool, note string) {
	pid, minted, ok := ownerParts(l.Owner)
	if !ok {
		return false, "the lease's owner names no pid: vigil cannot check whether it is alive"
	}
	now := time.Now()
	ownerChecks.Lock()
	c, hit := ownerChecks.m[l.Owner]
	ownerChecks.Unlock()
	if hit && now.Sub(c.at) < time.Second {
		return c.foreign, c.note
	}
	foreign, note = ownerCheck(pid, minted)
	ownerChecks.Lock()
	if len(ownerChecks.m) > 256 {
		ownerChecks.m = map[string]ownerCheckResult{}
	}
	ownerChecks.m[l.Owner] = ownerCheckResult{at: now, foreign: foreign, note: note}
	ownerChecks.Unlock()
	return foreign, note
}

type ownerCheckResult struct {
	at      time.Time
	foreign bool
	note    string
}

// ownerChecks keeps each owner's check for a second: states are told for
// every run of a tree on every frame, and the answer is one per owner.
var ownerChecks = struct {
	sync.Mutex
	m map[string]ownerCheckResult
}{m: map[string]ownerCheckResult{}}

// ResetOwnerChecks forgets the cached owner checks (tests that replace the
// system facts call it).
func ResetOwnerChecks() {
	ownerChecks.Lock()
	ownerChecks.m = map[string]ownerCheckResult{}
	ownerChecks.Unlock()
}

func ownerCheck(pid int64, minted time.Time) (bool, string) {
	if max, ok := PIDMax(); ok && pid > max {
		return true, fmt.Sprintf("owner pid %d cannot be a process of vigil's pid namespace (pid_max %d): the driver runs on another host or in another pid namespace, and its liveness cannot be checked from here", pid, max)
	}
	if pid > 1<<22 {
		return true, fmt.Sprintf("owner pid %d is beyond any pid this system hands out: the driver runs on another host or in another pid namespace, and its liveness cannot be checked from here", pid)
	}
	if !PIDAlive(int(pid)) {
		if nested, ok := NestedPIDNamespace(); ok && nested {
			return false, fmt.Sprintf("pid %d is not running in vigil's pid namespace; vigil runs in a nested pid namespace (a container), where a driver outside it would look the same", pid)
		}
		return false, ""
	}
	if !minted.IsZero() {
		// /proc gives a start time to the clock tick and the boot time to the
		// second: allow two seconds before calling the process younger.
		if started, ok := ProcessStarted(int(pid)); ok && started.After(minted.Add(2*time.Second)) {
			return true, fmt.Sprintf("pid %d here is a process started %s, after the lease's owner was minted (%s): the owner is another pid namespace's process, or it exited and its pid was reused; liveness by pid does not hold",
				pid, started.UTC().Format(time.RFC3339), minted.UTC().Format(time.RFC3339))
		}
	}
	return false, ""
}

// ownerParts reads "<pid>-<unix-nanos>-<seq>": the pid, and when the owner
// has that shape, when it was minted.
func ownerParts(owner string) (pid int64, minted time.Time, ok bool) {
	parts := strings.SplitN(owner, "-", 3)
	pid, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || pid <= 0 {
		return 0, time.Time{}, false
	}
	if len(parts) == 3 {
		if ns, err := strconv.ParseInt(parts[1], 10, 64); err == nil && ns > 0 {
			minted = time.Unix(0, ns)
		}
	}
	return pid, minted, true
}

// procStarted reads a process's start time from /proc/<pid>/stat (field 22,
// clock ticks since boot; USER_HZ is 100 on Linux) and the boot time.
func procStarted(pid int) (time.Time, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): starttime, field 22, is f[19].
	if len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	boot, ok := bootTime()
	if !ok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * (time.Second / 100)), true
}

func bootTime() (time.Time, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return time.Unix(n, 0), err == nil
		}
	}
	return time.Time{}, false
}

func procPIDMax() (int64, bool) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// procNestedPIDNamespace reads NSpid in /proc/self/status: one pid per
// namespace from the host's down, so more than one means a nested one.
func procNestedPIDNamespace() (bool, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return len(strings.Fields(rest)) > 1, true
		}
	}
	return false, false
}

// LivenessOf judges a lease. A run parked on a human commits no step and so
// renews nothing: past its ttl with the owner alive it is Lapsed, and still
// reads its pending rows. An owner vigil cannot check (OwnerCheck) is
// Foreign, whatever its pid says here.
func LivenessOf(l *Lease, recordsLeases bool, now time.Time) Liveness {
	switch {
	case !recordsLeases:
		return LivenessUnknown
	case l == nil:
		return Unleased
	}
	if foreign, _ := OwnerCheck(*l); foreign {
		return Foreign
	}
	switch {
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
// whether it (or, for a tree, anything under it) waits on a human. The
// adapter's readings on the run refine it: a reopened run (Resumable with a
// lease of its own) is read by that lease, not by its ended status; a run a
// leaseless resume drives (LeaselessDriver) has unknown liveness rather than
// being paused; and a run whose driver died inside a tool call it cannot
// replay (Recovery) waits on a recovery decision rather than being crashed.
func StateOf(r Run, lease *Lease, recordsLeases, waiting bool, now time.Time) State {
	live := LivenessOf(lease, recordsLeases, now)
	driven := live == Live || live == Lapsed
	if r.LeaselessDriver && !driven {
		live = LivenessUnknown
	}
	switch {
	case r.Parked() && !driven && !r.LeaselessDriver:
		return StatePaused
	case r.Parked():
		// io-harness never sets a resumed run's status back to running: a
		// parked row with a live driver is running again.
	case r.Ended():
		return StateFinished
	}
	switch live {
	case LivenessUnknown, Foreign:
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
	if r.Recovery != nil {
		return StateRecovery
	}
	return StateCrashed
}
