// Package union is several stores read as one store.Source: one runs
// list, one approval queue, one stream of changes. Each store keeps its
// own format, cursor, watcher and compare-and-set; the set only routes.
//
// Ids. A run or request id of the set is "<prefix>/<the store's own id>"
// (prefixes: see prefixes in ids.go; "a/42" is run 42 of a.sqlite3). Every
// per-run read and every decision goes to the store the prefix names, with
// the store's own id. Row ids (timeline rows, provider calls) stay the
// store's own: they are read per run, and a run lies in one store.
//
// Offline. A store that cannot be read (its link dropped, its file is
// gone, its last read failed) is marked offline in Stores and skipped:
// the others' changes keep coming, and what was read of it stays shown.
// Only when every store fails does a read fail. A remote store that comes
// back resumes from the cursor it held (remote protocol 2: the agent
// started for the new link reads it back), so the others are not read
// again. A store that comes back under a cursor it cannot resume (a file
// replaced, a far store rewritten, a far vigil of protocol 1) is loaded
// again alone: the set's Changes carry its runs and requests whole and
// its prefix in Reloaded, and the reader drops what it held of that store
// only; the other stores are not read again.
package union

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Member is one store of a set.
type Member struct {
	// Name is the store as the user named it: a path or an ssh:// URL.
	Name   string
	Source store.Source
	// Reopen opens the store again when its file was replaced (nil: the
	// source is kept, as a remote one is across reconnects).
	Reopen func() (store.Source, error)
	// Wakeups wakes the set on this store's changes (nil: a file watcher
	// on Source.Watch, polling at Poll when that is set).
	Wakeups func() (watch.Wakeup, error)
	Poll    time.Duration
	// Offline says why the store cannot be reached now, as its link knows
	// it (nil: only what the set itself sees).
	Offline func() string
}

// Set is the stores; Source hands out the set as a store.Source.
type Set struct {
	ms    []*member
	links links
}

type member struct {
	Member
	prefix string

	mu      sync.Mutex
	src     store.Source
	gen     int    // bumped on each reopen: a cursor of an older one is reset
	problem string // why the last read failed ("" when it did not)
	gone    string // the watcher says the file is gone
	reopen  bool   // the watcher says another file is at the path
	reloads int    // times loaded again alone (Set.Reloads)
	leases  map[string]store.Lease
	old     []store.Source // replaced sources, closed with the set

	// What the store last gave to a whole load, prefixed: a load while it
	// cannot be read (the set reloaded for another store's sake) keeps its
	// rows on screen, as last read, instead of dropping them.
	lastRuns []store.Run
	lastReqs map[bool][]store.Request // by unresolvedOnly
}

// New is a set of two or more stores.
func New(members []Member) (*Set, error) {
	if len(members) < 2 {
		return nil, errors.New("a set is two or more stores")
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Name
	}
	ps := prefixes(names)
	s := &Set{}
	for i, m := range members {
		s.ms = append(s.ms, &member{Member: m, prefix: ps[i], src: m.Source})
	}
	return s, nil
}

// Source is the set as a store.Source. Closing it closes nothing: Close
// the set.
func (s *Set) Source() store.Source { return &Source{s: s} }

// Close closes every store's source.
func (s *Set) Close() error {
	var first error
	for _, m := range s.ms {
		m.mu.Lock()
		srcs := append([]store.Source{m.src}, m.old...)
		m.old = nil
		m.mu.Unlock()
		for _, src := range srcs {
			if err := src.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Stores are the stores as they stand now.
func (s *Set) Stores() []store.StoreState {
	out := make([]store.StoreState, len(s.ms))
	for i, m := range s.ms {
		out[i] = m.state()
	}
	return out
}

func (m *member) state() store.StoreState {
	st := store.StoreState{Prefix: m.prefix, Name: m.Name}
	if m.Offline != nil {
		st.Offline = m.Offline()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case st.Offline != "":
	case m.gone != "":
		st.Offline = m.gone
	case m.problem != "":
		st.Offline = m.problem
	}
	return st
}

func (m *member) source() (store.Source, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.src, m.gen
}

// note records how the last read of the store went.
func (m *member) note(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		m.problem = ""
		return
	}
	m.problem = err.Error()
}

// reopenIfAsked opens the store again when its watcher said it was
// replaced; it reports whether it did (cursors of the old one are void).
func (m *member) reopenIfAsked() bool {
	m.mu.Lock()
	want := m.reopen && m.Reopen != nil
	m.mu.Unlock()
	if !want {
		return false
	}
	src, err := m.Reopen()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.problem = "store unavailable: " + err.Error()
		return false
	}
	m.old = append(m.old, m.src)
	m.src, m.gen, m.reopen, m.gone, m.problem = src, m.gen+1, false, "", ""
	return true
}

func (s *Set) byPrefix(p string) *member {
	for _, m := range s.ms {
		if m.prefix == p {
			return m
		}
	}
	return nil
}

// owner is the store an id of the set names, and the store's own id.
func (s *Set) owner(id string) (*member, string, error) {
	p, own, ok := split(id)
	if ok {
		if m := s.byPrefix(p); m != nil {
			return m, own, nil
		}
	}
	return nil, "", store.Errorf("", store.ErrNotFound, nil, "%q names none of the stores (ids here are store/id: %s)",
		id, strings.Join(s.prefixList(), ", "))
}

func (s *Set) prefixList() []string {
	var out []string
	for _, m := range s.ms {
		out = append(out, m.prefix+"/…")
	}
	return out
}

func (s *Set) path() string {
	names := make([]string, len(s.ms))
	for i, m := range s.ms {
		names[i] = m.Name
	}
	return strings.Join(names, " ")
}

// named wraps a store's error with the store's name (the other stores'
// errors would say nothing of which store refused).
func (m *member) named(err error) error {
	if err == nil {
		return nil
	}
	var ref *store.RefusedError
	if errors.As(err, &ref) {
		c := *ref
		c.Key.ID = join(m.prefix, c.Key.ID)
		c.Reason = m.Name + ": " + c.Reason
		return &c
	}
	return &storeError{name: m.Name, err: err}
}

type storeError struct {
	name string
	err  error
}

func (e *storeError) Error() string {
	msg := e.err.Error()
	if strings.Contains(msg, e.name) {
		return msg
	}
	return e.name + ": " + msg
}
func (e *storeError) Unwrap() error { return e.err }

// each runs f on every store at once and waits; f's error is the store's.
func (s *Set) each(f func(i int, m *member) error) []error {
	errs := make([]error, len(s.ms))
	var wg sync.WaitGroup
	for i, m := range s.ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i, m)
		}()
	}
	wg.Wait()
	return errs
}

// allFailed is the first error when every store failed, else nil: one
// store that cannot be read does not stop the others.
func allFailed(errs []error) error {
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return errors.Join(errs...)
}
