// Package demo is a simulated multi-agent harness: it writes an
// io-harness run store the way io-harness itself would while a tree of
// agents cuts a software release, with no model, no API key and no
// network. `vigil demo` runs it beside the explorer so a newcomer can watch
// a live tree unfold and answer what it waits on.
//
// The store holds four finished runs from earlier (success,
// step_cap_reached, denied, and a small tree), then the live tree: a
// coordinator spawns three workers, one of which spawns a grandchild. One
// spawn is refused by the agent cap and one by the depth cap. A write and
// a command wait for approval, a worker asks a question and another
// proposes a plan; each agent polls its row as io-harness does (every
// 200 ms) and acts on what the row says. Every step writes what io-harness
// writes: the step row and its checkpoint, the turn, provider calls with
// failed attempts and retry rows, context estimates the provider's count
// drifts away from, ledger observations, edits with hunks, policy events,
// and budget draws against the tree's ceiling.
package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Options configure Run.
type Options struct {
	// Path is the store file to create (harness.Create): the caller decides
	// whether it is a temporary file or one to keep.
	Path string
	// Speed multiplies the pace: 1 is human-watchable (a step every
	// 0.6–1.5 s), 10 is ten times faster. <= 0 means 1.
	Speed float64
	// Seed picks the scenario (DefaultSeed is vigil demo's): the same seed gives the same goals, steps,
	// tokens, retries, drift and order.
	Seed int64
	// Log, when set, gets one plain line per step and notable event.
	Log io.Writer
	// Ready, when set, is called (on Run's goroutine) once the history is
	// written with its final timestamps and the live root has started: the
	// moment a viewer should open the store.
	Ready func()
}

// snapshotLeaseTTL keeps a snapshot's lease live whatever base it was
// stamped with.
const snapshotLeaseTTL = 100 * 365 * 24 * time.Hour

// Run creates the store at o.Path, writes the history and then drives the
// live tree, paced by o.Speed, until every agent has finished. Actions that
// wait on a human wait until someone decides them through another handle
// (ioharness.Open + Decide). When ctx is cancelled Run stops promptly, releases
// the lease and closes the store (the runs it cut off stay "running", as
// after a crash) and returns ctx.Err().
func Run(ctx context.Context, o Options) (err error) {
	speed := o.Speed
	if speed <= 0 || math.IsNaN(speed) || math.IsInf(speed, 0) {
		speed = 1
	}
	st, err := harness.Create(o.Path)
	if err != nil {
		return err
	}
	e := newEngine(ctx, st, o.Seed, o.Log)
	defer func() {
		if e.timer != nil {
			e.timer.Stop()
		}
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, a := range e.all {
			if a.leased {
				if rerr := st.ReleaseLease(rctx, a.id); rerr != nil && err == nil {
					err = rerr
				}
			}
		}
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
	}()
	if err := e.writeHistory(); err != nil {
		return err
	}
	start := time.Now()
	if err := applyStamps(ctx, o.Path, e.stamps.list, start, func(s stamp) bool { return s.history }, nil); err != nil {
		return err
	}
	e.paced, e.speed, e.start = true, speed, start
	if _, err := e.startLiveTree(harness.DefaultLeaseTTL); err != nil {
		return err
	}
	if o.Ready != nil {
		o.Ready()
	}
	return e.loop()
}

// Snapshot writes the same scenario instantly (no sleeps, no goroutines)
// and stops at the moment the live tree waits on a human three ways at
// once: an approval, a question and a plan are undecided, the history runs
// have finished, and the other agents are mid-flight. It then rewrites
// every timestamp it wrote to base plus a fixed offset (the live tree
// starts at base; history lies before it) and the lease owner to
// "<this pid>-<this process's start in ns>-0", so two snapshots with the
// same seed and base taken by one process are identical row for row. (The
// owner is minted no earlier than this process: an owner claiming to be
// older than the process behind its pid is another process's.) The lease belongs to the calling process and
// has a ttl of a century: the tree reads as live while that process runs.
// processStart is taken when the package is initialised: after the process
// started, before any snapshot.
var processStart = time.Now()

func Snapshot(ctx context.Context, path string, seed int64, base time.Time) error {
	st, err := harness.Create(path)
	if err != nil {
		return err
	}
	e := newEngine(ctx, st, seed, nil)
	werr := func() error {
		if err := e.writeHistory(); err != nil {
			return err
		}
		if _, err := e.startLiveTree(snapshotLeaseTTL); err != nil {
			return err
		}
		e.stop = func() bool {
			k := e.parkedKinds()
			return k[store.Approval] && k[store.Question] && k[store.Plan]
		}
		if err := e.loop(); err != nil {
			return err
		}
		if !e.stop() {
			return errors.New("demo: the scenario never waited on an approval, a question and a plan at once")
		}
		return nil
	}()
	owner := st.Owner()
	if err := st.Close(); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return werr
	}
	fixed := fmt.Sprintf("%d-%d-0", os.Getpid(), processStart.UnixNano())
	return applyStamps(ctx, path, e.stamps.list, base, nil, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE run_leases SET owner = ? WHERE owner = ?", fixed, owner)
		return err
	})
}
