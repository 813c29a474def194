package decision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/store"
)

// Maker makes one person's decisions through one channel.
type Maker struct {
	Who audit.Who
	// Via is how the person reached the store: "the explorer", "vigil
	// approve", "ssh 10.0.0.5:51234 (vigil serve)". A store named by URL
	// (ssh://…) is put before it: the channel crossed that link.
	Via string
	// Log is the open log decisions are recorded in. Without it, OpenLog
	// opens one for each decision (the per-user default, created on the
	// first) and closes it after.
	Log     *audit.Log
	OpenLog func() (*audit.Log, error)
	// Unlogged lets a Maker with neither decide without a log: the far
	// side's agent, whose caller's log holds the record. Otherwise such a
	// Maker decides nothing.
	Unlogged bool
	// Now is the clock of the lines (nil: time.Now).
	Now func() time.Time
}

// Local is the Maker of the person at this terminal: the login and host,
// the log in the state directory getenv names (audit.OpenIn).
func Local(getenv func(string) string, via string) *Maker {
	return &Maker{Who: audit.LocalWho(getenv), Via: via, OpenLog: func() (*audit.Log, error) { return audit.OpenIn(getenv) }}
}

// Ask is one decision and what the caller knows of the request it decides.
type Ask struct {
	Decision store.Decision
	// Request, Run and Lease are the request, its run and the run's
	// effective lease as the caller last read them; with Request and Run
	// set, a decision the run cannot read is refused before anything is
	// written.
	Request *store.Request
	Run     *store.Run
	Lease   *store.Lease
}

// ErrNoLog is a Maker with no audit log: it decides nothing.
var ErrNoLog = errors.New("no audit log: decisions are off")

// Make decides a on src and records it (the package doc says the steps).
func (m *Maker) Make(ctx context.Context, src store.Source, a Ask) (store.DecideResult, error) {
	now := m.now()
	d := a.Decision
	where, key := placeOf(src, d.Key)
	if d.By == "" {
		d.By = m.by(where)
	}
	id := audit.StoreID(where)
	rec := func(res store.DecideResult, err error) audit.Record {
		r := audit.Of(where, store.Decision{Key: key, Verdict: d.Verdict, Text: d.Text, Always: d.Always}, "", m.Who, m.channel(where), res, err, now())
		r.StoreID = id
		return r
	}
	if err := m.classify(src, a, now()); err != nil {
		m.refused(rec(store.DecideResult{}, err))
		return store.DecideResult{}, err
	}
	log, done, err := m.log()
	if err != nil {
		return store.DecideResult{}, err
	}
	defer done()
	attempt := rec(store.DecideResult{}, nil)
	attempt.Outcome = audit.Attempt
	if log != nil {
		if err := log.Append(attempt); err != nil {
			return store.DecideResult{}, fmt.Errorf("not decided: %w", err)
		}
	}
	res, err := src.Decide(ctx, d)
	if log == nil {
		return res, err
	}
	if aerr := log.Append(rec(res, err)); aerr != nil && err == nil && res.Won {
		return res, fmt.Errorf("decided in the store, but the audit log was not written: %w", aerr)
	}
	return res, err
}

// classify refuses what cannot be decided here: a store read-only for this
// person, a request its run would not read.
func (m *Maker) classify(src store.Source, a Ask, now time.Time) error {
	k := a.Decision.Key
	if ro, why := src.ReadOnly(); ro {
		return &store.RefusedError{Key: k, Reason: orText(why, "the store is read-only"), Delivery: store.Closed}
	}
	if a.Request == nil || a.Run == nil {
		return nil
	}
	dl, why := src.Classify(*a.Request, *a.Run, a.Lease, now)
	if dl.Writable() {
		return nil
	}
	return &store.RefusedError{Key: k, Reason: orText(why, "the run would not read it"), Delivery: dl}
}

// refused records a refusal when a log is at hand; a refusal writes
// nothing to the store, so a log that cannot be had changes nothing.
func (m *Maker) refused(r audit.Record) {
	if log, done, err := m.log(); err == nil && log != nil {
		log.Append(r)
		done()
	}
}

// log is the log to record in (nil when Unlogged lets the Maker go
// without) and what to do when done with it.
func (m *Maker) log() (*audit.Log, func(), error) {
	switch {
	case m.Log != nil:
		return m.Log, func() {}, nil
	case m.OpenLog != nil:
		l, err := m.OpenLog()
		if err != nil {
			return nil, nil, fmt.Errorf("not decided: %w", err)
		}
		return l, func() { l.Close() }, nil
	case m.Unlogged:
		return nil, func() {}, nil
	}
	return nil, nil, ErrNoLog
}

func (m *Maker) now() func() time.Time {
	if m.Now != nil {
		return m.Now
	}
	return time.Now
}

// by is the decider as a store that keeps one records it: the person and
// the channel, as the audit line has them.
func (m *Maker) by(where string) string {
	who := orText(m.Who.Name, "unknown user")
	if ch := m.channel(where); ch != "" {
		return who + " via " + ch
	}
	return who
}

func (m *Maker) channel(where string) string {
	switch {
	case !strings.Contains(where, "://"):
		return m.Via
	case m.Via == "":
		return where
	}
	return where + " (" + m.Via + ")"
}

// placeOf names the store a decision lands in and the request's key
// there: in a set of stores, the member's name and its own id.
func placeOf(src store.Source, k store.RequestKey) (string, store.RequestKey) {
	if set, ok := src.(store.StoreSet); ok {
		if st, ok := set.StoreOf(k.ID); ok {
			k.ID = strings.TrimPrefix(k.ID, st.Prefix+"/")
			return st.Name, k
		}
	}
	return src.Path(), k
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
