package union

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Source is a set as a store.Source.
type Source struct{ s *Set }

var (
	_ store.Source   = (*Source)(nil)
	_ store.StoreSet = (*Source)(nil)
)

// Capabilities are what every store of the set answers natively: a
// reader that takes the set's answer for a store that falls back gets
// that store's fallback, which is what it must be ready for.
func (u *Source) Capabilities() store.Capabilities {
	caps := store.AllCapabilities
	for _, m := range u.s.ms {
		src, _ := m.source()
		caps &= src.Capabilities()
	}
	return caps
}

// Path names every store, space-separated, as they were named.
func (u *Source) Path() string { return u.s.path() }

// Format is the stores' format when they share one, else "several".
func (u *Source) Format() string {
	f := ""
	for _, m := range u.s.ms {
		src, _ := m.source()
		switch {
		case f == "":
			f = src.Format()
		case f != src.Format():
			return "several"
		}
	}
	return f
}

// ReadOnly is true only when no store can be decided in; each store that
// cannot refuses its own decisions with its own reason.
func (u *Source) ReadOnly() (bool, string) {
	var why []string
	for _, m := range u.s.ms {
		src, _ := m.source()
		ro, w := src.ReadOnly()
		if !ro {
			return false, ""
		}
		why = append(why, m.prefix+": "+w)
	}
	return true, strings.Join(why, "; ")
}

// RecordsLeases is whether any store records leases.
func (u *Source) RecordsLeases() bool {
	for _, m := range u.s.ms {
		if src, _ := m.source(); src.RecordsLeases() {
			return true
		}
	}
	return false
}

func (u *Source) Stores() []store.StoreState { return u.s.Stores() }

func (u *Source) RecordsLeasesOf(id string) bool {
	m, _, err := u.s.owner(id)
	if err != nil {
		return false
	}
	src, _ := m.source()
	return src.RecordsLeases()
}

func (u *Source) StoreOf(id string) (store.StoreState, bool) {
	m, _, err := u.s.owner(id)
	if err != nil {
		return store.StoreState{}, false
	}
	return m.state(), true
}

// Runs is every store's runs; a store that cannot be read is marked
// offline and gives the runs it gave last (none when it never has), unless
// no store can be read.
func (u *Source) Runs(ctx context.Context) ([]store.Run, error) {
	parts := make([][]store.Run, len(u.s.ms))
	errs := u.s.each(func(i int, m *member) error {
		src, _ := m.source()
		runs, err := src.Runs(ctx)
		m.note(err)
		if err != nil {
			m.mu.Lock()
			parts[i] = m.lastRuns
			m.mu.Unlock()
			return m.named(err)
		}
		leases := map[string]store.Lease{}
		for j, r := range runs {
			if r.Lease != nil {
				leases[join(m.prefix, r.ID)] = *r.Lease
			}
			runs[j] = outRun(m.prefix, r)
		}
		m.mu.Lock()
		m.leases, m.lastRuns = leases, runs
		m.mu.Unlock()
		parts[i] = runs
		return nil
	})
	if err := allFailed(errs); err != nil {
		return nil, err
	}
	var out []store.Run
	for _, p := range parts {
		out = append(out, p...)
	}
	u.s.learn(out)
	return out, nil
}

// group splits ids of the set by store; a nil map with ok when ids is
// empty (every store's). An id of no store is an error.
func (u *Source) group(ids []string) (map[*member][]string, error) {
	g := map[*member][]string{}
	for _, id := range ids {
		m, own, err := u.s.owner(id)
		if err != nil {
			return nil, err
		}
		g[m] = append(g[m], own)
	}
	return g, nil
}

func (u *Source) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	g, err := u.group(ids)
	if err != nil {
		return nil, err
	}
	out := map[string]store.RunStats{}
	for m, own := range g {
		src, _ := m.source()
		st, err := src.RunStats(ctx, own)
		if err != nil {
			return nil, m.named(err)
		}
		for id, v := range st {
			out[join(m.prefix, id)] = v
		}
	}
	return out, nil
}

func (u *Source) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	steps, err := src.Steps(ctx, own)
	for i := range steps {
		steps[i] = outStep(m.prefix, steps[i])
	}
	return steps, m.named(err)
}

func (u *Source) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	src, _ := m.source()
	d, err := src.StepDetail(ctx, own, rowID)
	return outDetail(m.prefix, d), m.named(err)
}

func (u *Source) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	ss, err := src.ContextSamples(ctx, own)
	for i := range ss {
		ss[i] = outSample(m.prefix, ss[i])
	}
	return ss, m.named(err)
}

func (u *Source) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	cs, err := src.ProviderCalls(ctx, own)
	for i := range cs {
		cs[i] = outCall(m.prefix, cs[i])
	}
	return cs, m.named(err)
}

// Requests is every store's requests (of the runs named, when some are);
// a store that cannot be read gives what it gave last to the same whole
// read, unless no store can be read.
func (u *Source) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	g, err := u.group(runIDs)
	if err != nil {
		return nil, err
	}
	parts := make([][]store.Request, len(u.s.ms))
	errs := u.s.each(func(i int, m *member) error {
		own, named := g[m]
		if len(runIDs) > 0 && !named {
			return nil
		}
		src, _ := m.source()
		reqs, err := src.Requests(ctx, unresolvedOnly, own...)
		if len(runIDs) == 0 {
			m.note(err)
		}
		if err != nil {
			if len(runIDs) == 0 {
				m.mu.Lock()
				parts[i] = m.lastReqs[unresolvedOnly]
				m.mu.Unlock()
			}
			return m.named(err)
		}
		for j := range reqs {
			reqs[j] = outRequest(m.prefix, reqs[j])
		}
		parts[i] = reqs
		if len(runIDs) == 0 {
			m.mu.Lock()
			if m.lastReqs == nil {
				m.lastReqs = map[bool][]store.Request{}
			}
			m.lastReqs[unresolvedOnly] = reqs
			m.mu.Unlock()
		}
		return nil
	})
	if len(runIDs) > 0 {
		for _, err := range errs {
			if err != nil {
				return nil, err // the runs asked for are one store's
			}
		}
	} else if err := allFailed(errs); err != nil {
		return nil, err
	}
	var out []store.Request
	for _, p := range parts {
		out = append(out, p...)
	}
	u.s.link(out)
	return out, nil
}

func (u *Source) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	g, err := u.group(runIDs)
	if err != nil {
		return nil, err
	}
	if len(runIDs) == 0 {
		for _, m := range u.s.ms {
			g[m] = nil
		}
	}
	var out []store.AgentEvent
	for _, m := range u.s.ms {
		own, ok := g[m]
		if !ok {
			continue
		}
		src, _ := m.source()
		evs, err := src.AgentEvents(ctx, own...)
		if err != nil {
			return nil, m.named(err)
		}
		for _, e := range evs {
			out = append(out, outEvent(m.prefix, e))
		}
	}
	return out, nil
}

// Classify asks the request's own store, with the store's own ids.
func (u *Source) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	m, _, err := u.s.owner(req.ID)
	if err != nil {
		return store.NotLive, err.Error()
	}
	if st := m.state(); st.Offline != "" {
		return store.DeliveryUnknown, fmt.Sprintf("%s is offline (%s): whether the run would read a decision cannot be told now", m.Name, st.Offline)
	}
	src, _ := m.source()
	d, why := src.Classify(inRequest(req), inRun(run), lease, now)
	return d, why
}

// Decide is the request's own store's compare-and-set; a refusal names the
// store. A store marked offline is refused without a write.
func (u *Source) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	m, own, err := u.s.owner(d.Key.ID)
	if err != nil {
		return store.DecideResult{}, err
	}
	if st := m.state(); st.Offline != "" {
		// A store that cannot be read now is not written either: a file
		// that is gone would take the decision with it unseen.
		return store.DecideResult{}, &store.RefusedError{Key: d.Key, Delivery: store.DeliveryUnknown,
			Reason: fmt.Sprintf("%s is offline (%s): nothing was written", m.Name, st.Offline)}
	}
	src, _ := m.source()
	d.Key.ID = own
	res, err := src.Decide(ctx, d)
	return res, m.named(err)
}

// Watch is nothing: the set wakes through Set.Wakeups, one watcher per
// store.
func (u *Source) Watch() store.WatchSpec { return store.WatchSpec{} }

// Close closes nothing: the set owns the stores.
func (u *Source) Close() error { return nil }

// Problems are every store's, each naming its store.
func (u *Source) Problems() []error {
	var out []error
	for _, m := range u.s.ms {
		src, _ := m.source()
		for _, p := range src.Problems() {
			out = append(out, m.named(p))
		}
	}
	return out
}

func (u *Source) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return store.RunFacts{}, err
	}
	src, _ := m.source()
	f, err := src.RunFacts(ctx, own)
	return outFacts(m.prefix, f), m.named(err)
}

// Activity reads the runs' own store (a tree lies in one store).
func (u *Source) Activity(ctx context.Context, q store.ActivityQuery) (store.Activity, error) {
	g, err := u.group(q.RunIDs)
	if err != nil {
		return store.Activity{}, err
	}
	for m, own := range g {
		src, _ := m.source()
		q.RunIDs = own
		a, err := src.Activity(ctx, q)
		return outActivity(m.prefix, a), m.named(err)
	}
	return store.Activity{}, nil
}

// LastWrite is the newest of the stores' last writes.
func (u *Source) LastWrite(ctx context.Context) (time.Time, error) {
	var last time.Time
	for _, m := range u.s.ms {
		src, _ := m.source()
		if t, err := src.LastWrite(ctx); err == nil && t.After(last) {
			last = t
		}
	}
	return last, nil
}

func (u *Source) Run(ctx context.Context, id string) (store.Run, error) {
	m, own, err := u.s.owner(id)
	if err != nil {
		return store.Run{}, err
	}
	src, _ := m.source()
	r, err := src.Run(ctx, own)
	return outRun(m.prefix, r), m.named(err)
}

func (u *Source) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	m, own, err := u.s.owner(key.ID)
	if err != nil {
		return store.Request{}, err
	}
	src, _ := m.source()
	k := store.RequestKey{Kind: key.Kind, ID: own}
	q, err := src.Request(ctx, k)
	if err != nil {
		return q, m.named(err)
	}
	one := []store.Request{outRequest(m.prefix, q)}
	u.s.link(one)
	return one[0], nil
}

func (u *Source) PolicyEvents(ctx context.Context, runID string) ([]store.PolicyEvent, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	evs, err := src.PolicyEvents(ctx, own)
	for i := range evs {
		evs[i].RunID = join(m.prefix, evs[i].RunID)
	}
	return evs, m.named(err)
}

// WriteCanonicalTrace writes the run's trace from its own store.
func (u *Source) WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return err
	}
	src, _ := m.source()
	return m.named(src.WriteCanonicalTrace(ctx, own, w))
}

// WriteStepField writes a step's field whole from the run's own store.
func (u *Source) WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return err
	}
	src, _ := m.source()
	return m.named(src.WriteStepField(ctx, own, rowID, field, w))
}

// CarriesReason is true only when every store's format carries the
// reason: the explorer then never promises a reason a store would drop.
func (u *Source) CarriesReason(kind store.RequestKind, v store.Verdict) bool {
	for _, m := range u.s.ms {
		src, _ := m.source()
		if !src.CarriesReason(kind, v) {
			return false
		}
	}
	return true
}

// allLeases is the whole lease table: every store's last one.
func (s *Set) allLeases() map[string]store.Lease {
	out := map[string]store.Lease{}
	for _, m := range s.ms {
		m.mu.Lock()
		maps.Copy(out, m.leases)
		m.mu.Unlock()
	}
	return out
}
