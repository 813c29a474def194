package runmodel

import (
	"time"

	"github.com/vigil-run/vigil/store"
)

// Model is the run model. It is not safe for concurrent use: one goroutine
// (the explorer's update loop, a command) owns it.
type Model struct {
	rev           uint64 // counts the changes (Rev)
	recordsLeases bool
	recorder      func(runID string) bool // per store, over several (SetLeaseRecorder)
	// Each run has a slot, numbered as the runs were given (newest first
	// from a load, then the new ones: the forest's age sort starts from
	// that order); ids is the one map by id, every other table is by slot.
	// (A map by id for each table was most of the model's time on 100 k runs.)
	ids      map[string]int32
	slots    []*store.Run    // nil for a slot whose run was dropped
	leased   map[string]bool // runs holding a lease now
	requests map[store.RequestKey]*Request

	// Steps and tokens of runs without a summary are counted by RunStats;
	// rows that arrive while a count is on its way wait in pendingStats
	// and are added only if the count did not include them. through is the
	// last step row counted, by slot (countedAll: the summary's counts).
	through      []int64
	pendingStats map[string][]store.StepRow

	// Each derived view has its own flag, so a burst of step commits (which
	// only moves counts) never rebuilds the forest.
	shapeStale, sumsStale, leasesStale bool
	f                                  forest
	shapes                             int // forests derived (Shape)
	s                                  sums
	l                                  leases
}

// Request is an undecided request and when it was first seen: its asked
// time, or (approvals carry no time of their own) when the model first
// held it.
type Request struct {
	store.Request
	FirstSeen time.Time
}

// Changed says what folding one Changes touched.
type Changed struct {
	Runs     bool // a run started, ended or changed state
	Tree     bool // a run joined or moved in the forest
	Counts   bool // steps or tokens counted, leases renewed
	Requests bool // a request arrived or was decided
	// Reworded: a request was read again with only its standing's reason
	// changed (io-harness's reason for an orphan names the step its run
	// has reached, so it moves with every commit): shown a moment late,
	// as counts are.
	Reworded bool
	// Recount are runs whose counts came from a summary that no longer
	// holds (a resume reopened the run: store.Run.Reopened): ask RunStats
	// for them again.
	Recount []string
}

// countedAll marks a run whose counts come from its summary: no step row
// adds to them.
const countedAll = 1<<62 - 1

// New makes an empty model; recordsLeases says whether the store records
// leases at all (without them liveness cannot be told).
func New(recordsLeases bool) *Model {
	m := &Model{recordsLeases: recordsLeases}
	m.SetRuns(nil)
	m.requests = map[store.RequestKey]*Request{}
	return m
}

// RecordsLeases reports whether the store records leases.
func (m *Model) RecordsLeases() bool { return m.recordsLeases }

// SetLeaseRecorder says, for a model over several stores, whether the
// store a run is in records leases (some formats do, some do not); nil:
// RecordsLeases holds for every run.
func (m *Model) SetLeaseRecorder(f func(runID string) bool) {
	m.rev++
	m.recorder = f
}

// Rev is the model's revision: it moves with every change to what the
// model says (a pane that reads it as it draws keeps its drawing until
// the revision moves). It counts from zero in each model.
func (m *Model) Rev() uint64 { return m.rev }

// records says whether the store of the run records leases.
func (m *Model) records(id string) bool {
	if m.recorder != nil {
		return m.recorder(id)
	}
	return m.recordsLeases
}

// SetRecordsLeases says again whether the store records leases: a source
// learns a table a newer harness adds (run_leases after an upgrade) as it
// tails.
func (m *Model) SetRecordsLeases(v bool) {
	m.rev++
	if v != m.recordsLeases {
		m.recordsLeases, m.leasesStale = v, true
	}
}

// SetRuns replaces every run (a load). The model keeps runs as its own,
// the caller must not change them: copying each run beside the slice it
// came in allocated 22 MB more on 100 k runs, at the explorer's peak.
func (m *Model) SetRuns(runs []store.Run) {
	m.rev++
	m.ids = make(map[string]int32, len(runs))
	m.slots = make([]*store.Run, 0, len(runs))
	m.through = make([]int64, 0, len(runs))
	m.leased = map[string]bool{}
	m.pendingStats = map[string][]store.StepRow{}
	for i := range runs {
		r := &runs[i]
		s := m.hold(r) // the last one given stands
		if r.Lease != nil {
			m.leased[r.ID] = true
		}
		if r.StatsKnown {
			m.through[s] = countedAll
		}
	}
	m.shapeStale = true
}

// hold keeps a run in its slot, in place of a run of the same id held
// before (whose counted-through mark stays), or in a new slot.
func (m *Model) hold(r *store.Run) int32 {
	if s, ok := m.ids[r.ID]; ok {
		m.slots[s] = r
		return s
	}
	s := int32(len(m.slots))
	m.ids[r.ID] = s
	m.slots = append(m.slots, r)
	m.through = append(m.through, 0)
	return s
}

// slot is the slot of a run the model holds.
func (m *Model) slot(id string) (int32, bool) {
	s, ok := m.ids[id]
	return s, ok
}

// run is the run of that id, nil for none.
func (m *Model) run(id string) *store.Run {
	if s, ok := m.ids[id]; ok {
		return m.slots[s]
	}
	return nil
}

// SetRequests replaces the undecided requests (a load); resolved ones are
// left out.
func (m *Model) SetRequests(reqs []store.Request, now time.Time) {
	m.rev++
	m.requests = make(map[store.RequestKey]*Request, len(reqs))
	for _, r := range reqs {
		if !r.Resolved {
			m.requests[r.Key()] = &Request{Request: r, FirstSeen: firstSeen(r, now)}
		}
	}
	m.sumsStale = true
}

func firstSeen(r store.Request, now time.Time) time.Time {
	if !r.AskedAt.IsZero() && r.AskedAt.Before(now) {
		return r.AskedAt
	}
	return now
}

// Unknown lists the runs whose counts are not known yet: what RunStats is
// asked for.
func (m *Model) Unknown() []string {
	n := 0
	for _, r := range m.slots {
		if r != nil && !r.StatsKnown {
			n++
		}
	}
	ids := make([]string, 0, n)
	for _, r := range m.slots {
		if r != nil && !r.StatsKnown {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// ApplyStats takes a RunStats count.
func (m *Model) ApplyStats(stats map[string]store.RunStats) {
	m.rev++
	for id, st := range stats {
		s, ok := m.slot(id)
		if !ok {
			continue
		}
		r := m.slots[s]
		if r.Summary != nil && r.StatsKnown {
			continue
		}
		r.Steps, r.Tokens, r.Unreported, r.StatsKnown = st.Steps, st.Tokens, st.Unreported, true
		m.through[s] = st.Through
		if r.Provider == "" {
			r.Provider = st.Provider
		}
		if r.Summary != nil {
			// A finished run whose store left its counts to RunStats (a
			// Starweaver record too big for SQL): its summary carries
			// them from now on. A copy: the source may share the one it gave.
			sum := *r.Summary
			sum.Steps, sum.Tokens = st.Steps, st.Tokens
			r.Summary = &sum
			m.through[s] = countedAll
		}
		if len(m.pendingStats) == 0 {
			continue // nothing waits (a load): two look-ups a run fewer on 100 k
		}
		for _, row := range m.pendingStats[id] {
			m.countRow(s, row)
		}
		delete(m.pendingStats, id)
	}
	m.sumsStale = true
}

func (m *Model) countRow(s int32, row store.StepRow) {
	if row.Pending || row.RowID <= m.through[s] { // a placeholder: its committed row counts
		return
	}
	r := m.slots[s]
	r.Tokens += row.Tokens
	if row.TokensUnknown && row.Kind == store.StepTurn {
		r.Unreported++
	}
	r.Steps = max(r.Steps, row.Number)
	m.through[s] = row.RowID
}

// Apply folds one refresh's runs, leases, step counts and requests into
// the model, in O(changes). What else a refresh carries (timeline rows,
// context samples, tree events) is the reader's to fold.
func (m *Model) Apply(ch *store.Changes, now time.Time) Changed {
	m.rev++
	var c Changed
	var reloaded map[string]bool
	if len(ch.Reloaded) > 0 {
		reloaded = map[string]bool{}
		for _, p := range ch.Reloaded {
			reloaded[p] = true
		}
		m.dropStores(reloaded)
		c.Requests = true
	}
	for _, r := range ch.Runs {
		if reloaded != nil && reloadedPrefix(r.ID, reloaded) {
			m.loadRun(r, &c)
			continue
		}
		m.applyRun(r, &c)
	}
	if ch.LeasesChanged {
		m.applyLeases(ch.Leases)
		c.Counts = true
	}
	for _, row := range ch.Steps {
		s, ok := m.slot(row.RunID)
		if !ok {
			continue
		}
		switch r := m.slots[s]; {
		case !r.StatsKnown:
			m.pendingStats[r.ID] = append(m.pendingStats[r.ID], row)
		case r.Summary == nil:
			m.countRow(s, row)
			m.sumsStale, c.Counts = true, true
		}
	}
	for _, q := range ch.Requests {
		switch m.applyRequest(q, now) {
		case requestChanged:
			m.sumsStale, c.Requests = true, true
		case requestReworded:
			c.Reworded = true
		}
	}
	return c
}

func (m *Model) applyRun(r store.Run, c *Changed) {
	s, held := m.slot(r.ID)
	var old *store.Run
	if held {
		old = m.slots[s]
	}
	switch {
	case r.CountsWhole:
		// The format counted the open run itself: its counts replace ours,
		// and rows waiting for a count are in them.
		delete(m.pendingStats, r.ID)
	case old != nil && r.Summary == nil && old.Summary != nil:
		// The summary the counts came from no longer holds (a resume
		// reopened the run): its steps are counted again.
		r.StatsKnown = false
		m.through[s] = 0
		delete(m.pendingStats, r.ID)
		c.Recount = append(c.Recount, r.ID)
	case old != nil && r.Summary == nil:
		// A row re-read for a status change carries no counts: keep ours.
		r.Steps, r.Tokens, r.Unreported, r.StatsKnown = old.Steps, old.Tokens, old.Unreported, old.StatsKnown
	case old != nil && old.StatsKnown:
		// A run that finishes while held: its summary's total adds the
		// same steps and says nothing of which went unreported, so the
		// ones counted as unreported stay counted.
		r.Unreported = old.Unreported
	}
	if old != nil && r.Lease == nil {
		r.Lease = old.Lease
	}
	through := int64(0) // a new run's mark, or a held one's unless kept
	keep := false
	switch {
	case r.Summary != nil && !r.StatsKnown:
		// Finished, its counts left to RunStats.
		c.Recount = append(c.Recount, r.ID)
	case r.Summary != nil, r.CountsWhole:
		through = countedAll
	case old == nil:
		// A run born after the cursor: every step it has will come
		// through Changes, so it starts counted at zero.
		r.StatsKnown = true
	default:
		keep = true
	}
	if held && !keep {
		m.through[s] = through
	}
	if r.Lease != nil {
		m.leased[r.ID] = true
	}
	if old == nil {
		m.through[m.hold(&r)] = through
		m.shapeStale, c.Tree = true, true
	} else {
		if *old == r {
			// The row was written again with nothing in it changed that a
			// reader keeps (io-harness rewrites a run's updated_at with every
			// step): its steps count through Changes.Steps, as Counts.
			return
		}
		if old.ParentID != r.ParentID || !old.StartedAt.Equal(r.StartedAt) {
			m.shapeStale, c.Tree = true, true // a move, or a new place in the age order
		}
		*old = r // in place: the forest keeps pointers to runs
	}
	m.sumsStale, m.leasesStale, c.Runs = true, true, true
}

// applyLeases takes the whole new lease table. Only runs that held a lease
// or hold one now are touched: O(leases), not O(runs).
func (m *Model) applyLeases(leases map[string]store.Lease) {
	for id := range m.leased {
		if r := m.run(id); r != nil {
			r.Lease = nil
		}
	}
	m.leased = make(map[string]bool, len(leases))
	for id, l := range leases {
		if r := m.run(id); r != nil {
			l := l
			r.Lease = &l
			m.leased[id] = true
		}
	}
	m.leasesStale = true
}

// requestChange is what folding a request changed.
type requestChange int

const (
	requestSame     requestChange = iota
	requestReworded               // only its standing's reason
	requestChanged
)

// applyRequest folds one request and reports what changed.
func (m *Model) applyRequest(q store.Request, now time.Time) requestChange {
	key := q.Key()
	known, ok := m.requests[key]
	switch {
	case q.Resolved && !ok:
		return requestSame
	case q.Resolved:
		delete(m.requests, key)
	case ok:
		was := known.Request
		known.Request = q // a source may re-send a request with more to say
		if was.Equal(q) {
			return requestSame
		}
		if was.StandingReason = q.StandingReason; was.Equal(q) {
			return requestReworded
		}
	default:
		m.requests[key] = &Request{Request: q, FirstSeen: firstSeen(q, now)}
	}
	return requestChanged
}

// Decided drops a request a decision has just settled, before the store's
// next refresh says so.
func (m *Model) Decided(key store.RequestKey) {
	m.rev++
	if _, ok := m.requests[key]; ok {
		delete(m.requests, key)
		m.sumsStale = true
	}
}

// Len is the number of runs.
func (m *Model) Len() int { return len(m.ids) }

// Run is a run as the model holds it (counts folded in).
func (m *Model) Run(id string) (store.Run, bool) {
	r := m.run(id)
	if r == nil {
		return store.Run{}, false
	}
	return *r, true
}
