package demo

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// attachPoll is io-harness's ATTACH_POLL: how often a parked run re-reads
// the row a human may decide from another process.
const attachPoll = 200 * time.Millisecond

// engine drives agents on one scenario clock. It is single-threaded: every
// agent is a queue of small operations, and the engine always runs the
// operation due first (ties go to the agent started first), so a seed gives
// one order of writes. Paced, it sleeps until each operation is due on the
// wall clock (scaled by speed) and polls parked agents' requests; unpaced
// (history, Snapshot) it never sleeps and parked agents stay parked.
type engine struct {
	ctx   context.Context
	st    *harness.Store
	seed  int64
	w     *world
	log   io.Writer
	paced bool
	speed float64
	start time.Time // wall clock at scenario time 0 (paced)
	timer *time.Timer

	now     time.Duration // scenario time: offset from the start of the live tree
	agents  []*agent      // the agents being driven, in start order
	all     []*agent      // every agent ever started (to release leases on the way out)
	streams uint64        // rng streams handed out
	stamps  stampLog
	files   map[string]string // the workspace as the agents changed it
	notes   []string          // memory the runs wrote, as a prompt carries it
	history bool              // stamps written now belong to history runs
	stop    func() bool       // unpaced: stop once this holds
}

func newEngine(ctx context.Context, st *harness.Store, seed int64, log io.Writer) *engine {
	return &engine{ctx: ctx, st: st, seed: seed, w: newWorld(seed), log: log, speed: 1, files: map[string]string{}}
}

// rng hands out a fresh deterministic stream: each agent draws from its
// own, so what one agent does never depends on how others interleave.
func (e *engine) rng() *rand.Rand {
	e.streams++
	return rand.New(rand.NewPCG(uint64(e.seed), e.streams*0x9e3779b97f4a7c15))
}

func (e *engine) stampAt(s stamp) {
	s.history = e.history
	if !s.ms {
		s.t = e.now
	}
	e.stamps.add(s)
}

func (e *engine) logf(a *agent, format string, args ...any) {
	if e.log == nil {
		return
	}
	who := "-"
	if a != nil {
		who = a.label()
	}
	at := fmt.Sprintf("%.1fs", e.now.Seconds())
	if e.now < 0 { // history: hours ago
		at = e.now.Round(time.Second).String()
	}
	fmt.Fprintf(e.log, "%10s  %-22s %s\n", at, who, fmt.Sprintf(format, args...))
}

// pollEvery is the scenario-time interval between two polls of a parked
// agent: ATTACH_POLL on the wall clock, shortened at high speed so tests
// are quick.
func (e *engine) pollEvery() time.Duration {
	wall := time.Duration(float64(attachPoll) / e.speed)
	wall = min(max(wall, 10*time.Millisecond), attachPoll)
	return time.Duration(float64(wall) * e.speed)
}

// loop runs operations until every agent is done, the stop condition
// holds, or nothing can run.
func (e *engine) loop() error {
	for {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		if e.stop != nil && e.stop() {
			return nil
		}
		a := e.next()
		if a == nil {
			return nil
		}
		if e.paced {
			if err := e.sleepUntil(a.wake); err != nil {
				return err
			}
		}
		if a.wake > e.now {
			e.now = a.wake
		}
		if err := a.tick(); err != nil {
			return err
		}
	}
}

// next is the agent whose operation is due first.
func (e *engine) next() *agent {
	var best *agent
	for _, a := range e.agents {
		switch {
		case a.done:
			continue
		case a.waitChildren && a.inflight > 0:
			continue
		case a.parked != nil && !e.paced:
			continue
		}
		if best == nil || a.wake < best.wake {
			best = a
		}
	}
	return best
}

func (e *engine) sleepUntil(t time.Duration) error {
	d := time.Until(e.start.Add(time.Duration(float64(t) / e.speed)))
	if d <= 0 {
		return e.ctx.Err()
	}
	if e.timer == nil {
		e.timer = time.NewTimer(d)
	} else {
		e.timer.Reset(d)
	}
	select {
	case <-e.ctx.Done():
		e.timer.Stop()
		return e.ctx.Err()
	case <-e.timer.C:
		return nil
	}
}

// parkedKinds reports which kinds of request the agents wait on now.
func (e *engine) parkedKinds() map[store.RequestKind]bool {
	out := map[store.RequestKind]bool{}
	for _, a := range e.agents {
		if a.parked != nil && !a.done {
			out[a.parked.Kind] = true
		}
	}
	return out
}

// tree is the shared ledger of an agent tree: its caps and its token
// ceiling, which every agent's steps draw down.
type tree struct {
	ceiling   int64
	drawn     int64
	agents    int
	maxAgents int
	maxDepth  int
	byName    map[string]*agent
	halted    bool // a draw crossed the ceiling: every agent stops
}

// profile is how fast an agent works: live agents take a step every
// 0.6–1.5 s; history runs took minutes (their steps are written instantly,
// only their timestamps say so).
type profile struct {
	latency [2]time.Duration // provider answer time, min and max
	gap     [2]time.Duration // pause after a commit
}

var (
	liveProfile    = profile{latency: [2]time.Duration{450 * time.Millisecond, 1100 * time.Millisecond}, gap: [2]time.Duration{150 * time.Millisecond, 400 * time.Millisecond}}
	historyProfile = profile{latency: [2]time.Duration{2 * time.Second, 9 * time.Second}, gap: [2]time.Duration{4 * time.Second, 40 * time.Second}}
)

func between(r *rand.Rand, span [2]time.Duration) time.Duration {
	return span[0] + time.Duration(r.Int64N(int64(span[1]-span[0])+1))
}

// newAgent registers an agent whose run row exists.
func (e *engine) newAgent(id, name string, parent *agent, t *tree, goal, verifyFile, needle string, p profile) *agent {
	a := &agent{e: e, t: t, id: id, name: name, parent: parent, goal: goal, verifyFile: verifyFile, needle: needle,
		rng: e.rng(), prof: p, startT: e.now, wake: e.now}
	if parent != nil {
		a.depth = parent.depth + 1
	}
	e.agents = append(e.agents, a)
	e.all = append(e.all, a)
	return a
}

func (a *agent) label() string {
	if a.name == "" {
		return "run " + a.id
	}
	return a.name + " (run " + a.id + ")"
}

// address is how the tree names the agent (io-harness: the `as` name).
func (a *agent) address() string {
	if a.name == "" {
		return "agent#" + a.id
	}
	return a.name
}

func joinLines(lines ...string) string { return strings.Join(lines, "\n") + "\n" }
