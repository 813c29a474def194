package serve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/livetail"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Role is what a connected key may do.
type Role int

const (
	Viewer   Role = iota // browses
	Approver             // browses and decides
)

func (r Role) String() string {
	if r == Approver {
		return "approver"
	}
	return "viewer"
}

// Session is who is on the other end of a view.
type Session struct {
	Who     audit.Who
	Role    Role
	Channel string // "ssh 127.0.0.1:51234"
	// Revoked, when set, is asked before each decision: "" while the
	// session's key still decides, else why not (its key file changed).
	Revoked func() string
	// KeyNote, when set, is what is wrong with the server's key files, for
	// the status bar ("" when nothing is).
	KeyNote func() string
}

// View is one session's window on a hub: a store.Source whose reads go to
// the shared store, whose tail is a slice of the hub's log, and whose
// decisions are checked against the session's role and written to the
// audit log.
type View struct {
	hub      *Hub
	src      store.Source // the hub's handle when the view was made
	sess     Session
	readOnly string // why this session cannot decide ("" when it can)
	now      func() time.Time
}

// View makes a session's source. serverReadOnly is why the server decides
// nothing ("" when it may).
func (h *Hub) View(sess Session, serverReadOnly string) store.Source {
	src := h.Source()
	v := &View{hub: h, src: src, sess: sess, now: time.Now}
	switch {
	case serverReadOnly != "":
		v.readOnly = serverReadOnly
	case sess.Role != Approver:
		v.readOnly = fmt.Sprintf("you are a viewer (%s): deciding needs a key in the server's --approvers", sess.Who.Name)
	}
	return v
}

// Wakeups is the session's wakeup for tui.Options.Wakeups.
func (h *Hub) Wakeups() (watch.Wakeup, error) { return h.Subscribe(), nil }

func (v *View) Path() string        { return v.src.Path() }
func (v *View) Format() string      { return v.src.Format() }
func (v *View) RecordsLeases() bool { return v.src.RecordsLeases() }

func (v *View) ReadOnly() (bool, string) {
	if v.readOnly != "" {
		return true, v.readOnly
	}
	return v.src.ReadOnly()
}

func (v *View) Runs(ctx context.Context) ([]store.Run, error) { return v.src.Runs(ctx) }

func (v *View) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	st, err := livetail.Shared(ctx, v.hub.Hub, idsKey("stats", ids), func(ctx context.Context) (map[string]store.RunStats, error) {
		return v.src.RunStats(ctx, ids)
	})
	return maps.Clone(st), err
}

func (v *View) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	return v.src.Steps(ctx, runID)
}

func (v *View) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	return livetail.Shared(ctx, v.hub.Hub, detailKey(runID, rowID), func(ctx context.Context) (store.StepDetail, error) {
		return v.src.StepDetail(ctx, runID, rowID)
	})
}

func (v *View) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	return v.src.ContextSamples(ctx, runID)
}

func (v *View) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	reqs, err := v.src.Requests(ctx, unresolvedOnly, runIDs...)
	if err == nil {
		v.hub.decorate(reqs)
	}
	return reqs, err
}

func (v *View) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	return v.src.AgentEvents(ctx, runIDs...)
}

func (v *View) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	return v.src.ProviderCalls(ctx, runID)
}

// Head is the hub's position: the hub has read the store up to at least
// where it stands now, so what a load reads after it is no older.
func (v *View) Head(context.Context) (store.Cursor, error) {
	if v.src != v.hub.Source() {
		return nil, errors.New("the store was opened again: loading it")
	}
	return v.hub.Head(), nil
}

func (v *View) Changes(_ context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	ch, next, err := v.hub.Changes(cur)
	if err == nil {
		v.hub.decorate(ch.Requests)
	}
	return ch, next, err
}

func (v *View) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	return v.src.Classify(req, run, lease, now)
}

func (v *View) Watch() store.WatchSpec { return v.src.Watch() }

// Close is nothing: the hub owns the store.
func (v *View) Close() error { return nil }

// Decide writes a decision if the session may make it. The session's
// explorer decides through the decision service (internal/decision),
// which refuses a viewer with a line in the audit log (ReadOnly says why)
// and records the attempt and the outcome around this compare-and-set.
func (v *View) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	if v.readOnly != "" {
		return store.DecideResult{}, &store.RefusedError{Key: d.Key, Reason: v.readOnly, Delivery: store.Closed}
	}
	if why := v.revoked(); why != "" {
		return store.DecideResult{}, &store.RefusedError{Key: d.Key, Reason: why, Delivery: store.Closed}
	}
	res, err := v.src.Decide(ctx, d)
	if err == nil && res.Won {
		// Named before the sessions are woken: their refresh says who.
		v.hub.addWinner(v.src, audit.Record{Time: v.now().UTC(), Store: v.src.Path(), Request: d.Key.String(), Verdict: string(d.Verdict),
			Who: v.sess.Who, Channel: v.sess.Channel, Outcome: audit.Won})
	}
	v.hub.Poke()
	if err == nil && !res.Won {
		res.DecidedBy = v.hub.describe(d.Key, res.DecidedBy)
	}
	return res, err
}

// decorate names who decided each request decided through vigil serve (the
// audit log knows; the store's column keeps what the format writes).
func (h *Hub) decorate(reqs []store.Request) {
	h.mu.Lock()
	h.currentLocked()
	n := len(h.winners)
	h.mu.Unlock()
	if n == 0 {
		return
	}
	for i := range reqs {
		if reqs[i].Resolved {
			reqs[i].DecidedBy = h.describe(reqs[i].Key(), reqs[i].DecidedBy)
		}
	}
}

func (h *Hub) describe(k store.RequestKey, inStore string) string {
	h.mu.Lock()
	h.currentLocked()
	rec, ok := h.winners[k.String()]
	h.mu.Unlock()
	if !ok {
		return inStore
	}
	s := rec.Describe()
	if inStore != "" {
		s += " (" + inStore + " in the store)"
	}
	return s
}

// addWinner names who won a decision made on src; a decision made on a
// handle of a store since replaced names nobody in the new one.
func (h *Hub) addWinner(src store.Source, r audit.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.currentLocked()
	if src != h.of {
		return
	}
	r.StoreID = h.id
	if h.winners == nil {
		h.winners = map[string]audit.Record{}
	}
	h.winners[r.Request] = r
}
