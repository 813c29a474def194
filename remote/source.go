package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Source is a remote store as a store.Source. Sources of one client share
// its link; closing one closes nothing (the client is closed by whoever
// dialled it).
type Source struct {
	c *Client

	mu       sync.Mutex
	classify map[string]classified // the agent's recent Classify answers (it is asked on every redraw)
}

type classified struct {
	at       time.Time // the caller's clock when it was asked
	d        store.Delivery
	why      string
	answered bool // d and why are the agent's (or why it could not be asked)
	asking   bool // a question is on its way
}

// activitySource is a Source of a store that reads activity.
type activitySource struct{ *Source }

// Source is a handle on the remote store.
func (c *Client) Source() store.Source {
	s := &Source{c: c, classify: map[string]classified{}}
	if c.Hello().Activity {
		return activitySource{s}
	}
	return s
}

// Wakeups is a wakeup for tui.Options.Wakeups: the agent's notices.
func (c *Client) Wakeups() (watch.Wakeup, error) { return c.subscribe(), nil }

// Path is the URL.
func (s *Source) Path() string   { return s.c.t.String() }
func (s *Source) Format() string { return s.c.Hello().Format }

func (s *Source) ReadOnly() (bool, string) {
	h := s.c.Hello()
	return h.ReadOnly, h.ReadOnlyWhy
}

func (s *Source) RecordsLeases() bool { return s.c.Hello().RecordsLeases }

func (s *Source) Runs(ctx context.Context) ([]store.Run, error) {
	var r []store.Run
	return r, s.c.call(ctx, "Runs", nil, &r)
}

var _ store.RecentRunner = (*Source)(nil)

// RecentRuns is the newest page of runs, as the far store gives it
// (without waiting for a Leviath journal's background fold); an agent
// that does not answer it is asked Runs.
func (s *Source) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	if !s.c.Hello().RecentRuns {
		runs, err := s.Runs(ctx)
		return runs, true, err
	}
	var r recentResult
	err := s.c.call(ctx, "RecentRuns", recentParams{Limit: limit}, &r)
	return r.Runs, r.All, err
}

func (s *Source) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	var r map[string]store.RunStats
	return r, s.c.call(ctx, "RunStats", idsParams{IDs: ids}, &r)
}

func (s *Source) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	var r []store.Step
	return r, s.c.call(ctx, "Steps", runParams{Run: runID}, &r)
}

func (s *Source) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	var r store.StepDetail
	return r, s.c.call(ctx, "StepDetail", runParams{Run: runID, Row: rowID}, &r)
}

func (s *Source) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	var r []store.ContextSample
	return r, s.c.call(ctx, "ContextSamples", runParams{Run: runID}, &r)
}

func (s *Source) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	var r []store.Request
	return r, s.c.call(ctx, "Requests", requestsParams{Unresolved: unresolvedOnly, Runs: runIDs}, &r)
}

func (s *Source) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	var r []store.AgentEvent
	return r, s.c.call(ctx, "AgentEvents", idsParams{IDs: runIDs}, &r)
}

func (s *Source) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	var r []store.ProviderCall
	return r, s.c.call(ctx, "ProviderCalls", runParams{Run: runID}, &r)
}

// cursor is a position in one agent process's log.
type cursor struct{ w wireCursor }

func (cursor) CursorFormat() string { return "vigil-remote" }

func (s *Source) Head(ctx context.Context) (store.Cursor, error) {
	var w wireCursor
	if err := s.c.call(ctx, "Head", nil, &w); err != nil {
		return nil, err
	}
	return cursor{w}, nil
}

// Changes asks the agent for what came after cur. A cursor with a token
// (protocol 2) is resumed by whichever agent the link has now: after a
// reconnect the reader gets the rows written during the outage once and
// nothing it had. A cursor without one, of an agent since replaced,
// answers Reset: the explorer loads the store again, every row once. A
// Reset after a reconnect is said in the link's log, with why.
func (s *Source) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(cursor)
	if !ok {
		return nil, nil, errors.New("a cursor from another source")
	}
	h := s.c.Hello()
	resuming := c.w.Instance != h.Instance
	if resuming && len(c.w.Token) == 0 && s.c.Offline() == "" {
		why := fmt.Sprintf("a cursor of a %s store is not written down (the format has no cursor codec), so it does not outlive the link", sanitize.Line(h.Format))
		if h.Proto < protoResume {
			why = fmt.Sprintf("the far vigil %s speaks protocol %d, whose cursors do not outlive the link", sanitize.Line(h.Vigil), h.Proto)
		}
		s.c.noteReload(why)
		return &store.Changes{Reset: true}, cur, nil
	}
	var r changesResult
	if err := s.c.call(ctx, "Changes", c.w, &r); err != nil {
		return nil, nil, err
	}
	if r.Changes == nil {
		r.Changes = &store.Changes{}
	}
	switch {
	case r.Changes.Reset:
		s.c.noteReload(orText(sanitize.Line(r.Note), "the agent said the store must be read again"))
	case resuming:
		s.c.noteResumed(r.Changes)
	}
	return r.Changes, cursor{r.Next}, nil
}

// Classify answers from what the agent last said about the request in
// this state (the format's rules and the store's claims are there),
// never waiting on the link: it is asked inside the explorer's update, on
// every redraw. A state not asked about yet is DeliveryUnknown while the
// agent is asked, in the background; an answer a second old is asked
// again, and stands meanwhile. Offline, it says so.
func (s *Source) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if off := s.c.Offline(); off != "" {
		return store.DeliveryUnknown, s.c.t.Host + " is offline: whether the run would read a decision cannot be told now"
	}
	key := fmt.Sprintf("%s|%v|%s|%s|%v", req.Key(), req.Resolved, run.Status, run.Outcome, lease != nil && lease.RenewedAt.Add(lease.TTL).After(now))
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.classify[key]
	if !c.asking && (!ok || now.Sub(c.at) >= time.Second || now.Before(c.at)) {
		if len(s.classify) > 1024 {
			s.classify = map[string]classified{}
		}
		c.asking = true
		s.classify[key] = c
		go s.ask(key, classifyParams{Req: req, Run: run, Lease: lease, Now: now.UnixNano()}, now)
	}
	if !c.answered {
		return store.DeliveryUnknown, "asking " + s.c.t.Host + " whether the run would read a decision"
	}
	return c.d, c.why
}

// ask asks the agent to classify, and keeps the answer for Classify.
func (s *Source) ask(key string, p classifyParams, at time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var r classifyResult
	c := classified{at: at, answered: true}
	if err := s.c.call(ctx, "Classify", p, &r); err != nil {
		c.d, c.why = store.DeliveryUnknown, "cannot ask "+s.c.t.Host+": "+err.Error()
	} else {
		c.d, c.why = r.Delivery, r.Why
	}
	s.mu.Lock()
	s.classify[key] = c
	s.mu.Unlock()
}

// UnknownError is a decision the link took with it: it may or may not
// have been written. It is never sent again; the store is read again once
// the link is back.
type UnknownError struct {
	Key  store.RequestKey
	Host string
}

// Is makes the decision's audit line Unknown.
func (e *UnknownError) Is(target error) bool { return target == audit.ErrOutcomeUnknown }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("the link to %s dropped with the decision in flight: whether it was written is unknown until the store is read again (it is not sent twice)", e.Host)
}

// Decide is the remote store's compare-and-set. One cut off by the link
// is reported unknown, never retried. It records nothing: the decision
// service (internal/decision) that calls it writes this machine's audit
// lines, the agent the far machine's.
func (s *Source) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	return s.decide(ctx, d)
}

func (s *Source) decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	var r store.DecideResult
	err := s.c.call(ctx, "Decide", decideParams{Decision: d, By: s.c.opt.Who.Name}, &r)
	if errors.Is(err, errLinkDown) {
		s.c.mu.Lock()
		s.c.unknown[d.Key.String()] = d
		s.c.mu.Unlock()
		return store.DecideResult{}, &UnknownError{Key: d.Key, Host: s.c.t.Host}
	}
	return r, err
}

// Watch is nothing to watch here: the agent watches (Wakeups).
func (s *Source) Watch() store.WatchSpec { return store.WatchSpec{} }

// Close is nothing: the client owns the link.
func (s *Source) Close() error { return nil }

func (s *Source) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	var r store.RunFacts
	return r, s.c.call(ctx, "RunFacts", runParams{Run: runID}, &r)
}

// CanonicalTrace is the run's trace as the far store writes it (protocol
// 2; a far vigil of protocol 1 answers that it has no such method).
func (s *Source) CanonicalTrace(ctx context.Context, runID string) (string, error) {
	var r string
	return r, s.c.call(ctx, "CanonicalTrace", runParams{Run: runID}, &r)
}

func (s *Source) LastWrite(ctx context.Context) (time.Time, error) {
	var t time.Time
	return t, s.c.call(ctx, "LastWrite", nil, &t)
}

func (a activitySource) Activity(ctx context.Context, q store.ActivityQuery) (store.Activity, error) {
	var r store.Activity
	return r, a.c.call(ctx, "Activity", q, &r)
}
