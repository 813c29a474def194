package union

import (
	"context"
	"errors"

	"github.com/vigil-run/vigil/store"
)

// cursor is every store's cursor, with the generation of the source it
// was made on. A store whose head could not be read has none yet.
type cursor struct{ parts []part }

type part struct {
	gen int
	cur store.Cursor // nil: not read yet
}

func (cursor) CursorFormat() string { return "vigil-union" }

// Head is every store's head; a store that cannot be read now has none
// (Changes reads it once it can, and says Reset).
func (u *Source) Head(ctx context.Context) (store.Cursor, error) {
	c := cursor{parts: make([]part, len(u.s.ms))}
	errs := u.s.each(func(i int, m *member) error {
		src, gen := m.source()
		cur, err := src.Head(ctx)
		m.note(err)
		c.parts[i] = part{gen: gen, cur: cur}
		return m.named(err)
	})
	if err := allFailed(errs); err != nil {
		return nil, err
	}
	return c, nil
}

// Changes is every store's changes after cur, its ids prefixed. A store
// that cannot be read keeps its cursor and is marked offline; the others'
// changes come. A store reset, replaced, or read for the first time is
// loaded again alone: its runs and undecided requests whole, its prefix
// in Reloaded (the reader drops what it held of it); the other stores are
// read only for their changes.
func (u *Source) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(cursor)
	if !ok || len(c.parts) != len(u.s.ms) {
		return nil, nil, errors.New("a cursor from another source")
	}
	next := cursor{parts: append([]part(nil), c.parts...)}
	got := make([]*store.Changes, len(u.s.ms))
	reloaded := make([]*store.Changes, len(u.s.ms))
	errs := u.s.each(func(i int, m *member) error {
		m.reopenIfAsked()
		src, gen := m.source()
		p := c.parts[i]
		if p.gen != gen || p.cur == nil {
			// Another source, or none read yet: this store alone is
			// loaded again.
			ch, nc, err := u.s.reload(ctx, m)
			if err != nil {
				return err
			}
			reloaded[i], next.parts[i] = ch, part{gen: gen, cur: nc}
			return nil
		}
		ch, nc, err := src.Changes(ctx, p.cur)
		m.note(err)
		if err != nil {
			return m.named(err)
		}
		if ch.Reset {
			if m.Reopen != nil {
				m.mu.Lock()
				m.reopen = true
				m.mu.Unlock()
				m.reopenIfAsked()
			}
			_, gen = m.source()
			ch, nc, err := u.s.reload(ctx, m)
			if err != nil {
				// Loaded again once it can be read: a cursor of no store.
				next.parts[i] = part{gen: gen}
				return err
			}
			reloaded[i], next.parts[i] = ch, part{gen: gen, cur: nc}
			return nil
		}
		got[i], next.parts[i] = ch, part{gen: gen, cur: nc}
		return nil
	})
	if err := allFailed(errs); err != nil {
		return nil, nil, err
	}
	out := &store.Changes{}
	for i, ch := range reloaded {
		if ch == nil {
			continue
		}
		out.Reloaded = append(out.Reloaded, u.s.ms[i].prefix)
		out.Runs = append(out.Runs, ch.Runs...)
		out.Requests = append(out.Requests, ch.Requests...)
		out.LeasesChanged = true
	}
	// Unwritten only when every store's changes are (none reloaded).
	unwritten := len(out.Reloaded) == 0
	for i, ch := range got {
		if ch == nil {
			continue
		}
		m := u.s.ms[i]
		u.s.merge(out, m, ch)
		unwritten = unwritten && (ch.Unwritten || ch.Empty())
	}
	linked := u.s.learn(out.Runs)
	u.s.link(out.Requests)
	out.Requests = appendNew(out.Requests, linked)
	out.Unwritten = unwritten && !out.Empty()
	if out.LeasesChanged {
		out.Leases = u.s.allLeases()
	}
	return out, next, nil
}

// reload loads one store again from its head, as a whole load does: its
// runs and undecided requests, prefixed, and the cursor they are as of
// (taken first: rows landing in between come again, keyed by id).
func (s *Set) reload(ctx context.Context, m *member) (*store.Changes, store.Cursor, error) {
	src, _ := m.source()
	cur, err := src.Head(ctx)
	m.note(err)
	if err != nil {
		return nil, nil, m.named(err)
	}
	runs, err := src.Runs(ctx)
	m.note(err)
	if err != nil {
		return nil, nil, m.named(err)
	}
	reqs, err := src.Requests(ctx, true)
	m.note(err)
	if err != nil {
		return nil, nil, m.named(err)
	}
	ch := &store.Changes{}
	leases := map[string]store.Lease{}
	for _, r := range runs {
		if r.Lease != nil {
			leases[join(m.prefix, r.ID)] = *r.Lease
		}
		ch.Runs = append(ch.Runs, outRun(m.prefix, r))
	}
	for _, q := range reqs {
		ch.Requests = append(ch.Requests, outRequest(m.prefix, q))
	}
	m.mu.Lock()
	m.leases, m.lastRuns = leases, ch.Runs
	m.reloads++
	m.mu.Unlock()
	return ch, cur, nil
}

// Reloads is how often each store (by prefix) was loaded again alone.
func (s *Set) Reloads() map[string]int {
	out := map[string]int{}
	for _, m := range s.ms {
		m.mu.Lock()
		out[m.prefix] = m.reloads
		m.mu.Unlock()
	}
	return out
}

// merge adds one store's changes to out, its ids prefixed.
func (s *Set) merge(out *store.Changes, m *member, ch *store.Changes) {
	p := m.prefix
	for _, r := range ch.Runs {
		out.Runs = append(out.Runs, outRun(p, r))
	}
	for _, r := range ch.Steps {
		r.RunID = join(p, r.RunID)
		out.Steps = append(out.Steps, r)
	}
	for _, c := range ch.Context {
		out.Context = append(out.Context, outSample(p, c))
	}
	for _, q := range ch.Requests {
		out.Requests = append(out.Requests, outRequest(p, q))
	}
	for _, e := range ch.AgentEvents {
		out.AgentEvents = append(out.AgentEvents, outEvent(p, e))
	}
	for _, c := range ch.Calls {
		out.Calls = append(out.Calls, outCall(p, c))
	}
	if ch.LeasesChanged {
		leases := make(map[string]store.Lease, len(ch.Leases))
		for id, l := range ch.Leases {
			leases[join(p, id)] = l
		}
		m.mu.Lock()
		m.leases = leases
		m.mu.Unlock()
		out.LeasesChanged = true
	}
	out.More = out.More || ch.More
}
