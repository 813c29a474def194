package union

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/vigil-run/vigil/store"
)

// pageOf is each store's share of a first page of limit runs.
func (s *Set) pageOf(limit int) int { return max(limit/len(s.ms), 1) }

// RecentRuns is each store's newest page, each store's share of limit
// (every tree whole, as each store gives it); all when every store gave
// all its runs. A store that cannot be read gives the runs it gave last.
func (u *Source) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	parts := make([][]store.Run, len(u.s.ms))
	whole := make([]bool, len(u.s.ms))
	errs := u.s.each(func(i int, m *member) error {
		src, _ := m.source()
		runs, all, err := src.RecentRuns(ctx, u.s.pageOf(limit))
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
		m.leases = maps.Clone(m.leases)
		if m.leases == nil {
			m.leases = map[string]store.Lease{}
		}
		maps.Copy(m.leases, leases)
		m.mu.Unlock()
		parts[i], whole[i] = runs, all
		return nil
	})
	if err := allFailed(errs); err != nil {
		return nil, false, err
	}
	var out []store.Run
	all := true
	for i, p := range parts {
		out = append(out, p...)
		all = all && whole[i]
	}
	return out, all, nil
}

// HeadNewest is each store's first cursor for its share of the page;
// whole when every store's is.
func (u *Source) HeadNewest(ctx context.Context, limit int) (store.Cursor, bool, error) {
	c := cursor{parts: make([]part, len(u.s.ms))}
	wholes := make([]bool, len(u.s.ms))
	errs := u.s.each(func(i int, m *member) error {
		src, gen := m.source()
		cur, whole, err := src.HeadNewest(ctx, u.s.pageOf(limit))
		m.note(err)
		c.parts[i], wholes[i] = part{gen: gen, cur: cur}, whole
		return m.named(err)
	})
	if err := allFailed(errs); err != nil {
		return nil, false, err
	}
	whole := true
	for i, w := range wholes {
		whole = whole && (w || c.parts[i].cur == nil)
	}
	return c, whole, nil
}

// WholeHead makes each store's part follow every run of its store.
func (u *Source) WholeHead(ctx context.Context, cur store.Cursor) (store.Cursor, error) {
	c, ok := cur.(cursor)
	if !ok || len(c.parts) != len(u.s.ms) {
		return nil, errors.New("a cursor from another source")
	}
	next := cursor{parts: append([]part(nil), c.parts...)}
	errs := u.s.each(func(i int, m *member) error {
		src, gen := m.source()
		p := c.parts[i]
		if p.cur == nil || p.gen != gen {
			return nil // Changes loads this store again alone
		}
		nc, err := src.WholeHead(ctx, p.cur)
		m.note(err)
		if err != nil {
			next.parts[i].cur = nil
			return m.named(err)
		}
		next.parts[i].cur = nc
		return nil
	})
	if err := allFailed(errs); err != nil {
		return nil, err
	}
	return next, nil
}

// EncodeCursor writes every store's part down with its own store's codec
// (a part not read yet as null).
func (u *Source) EncodeCursor(cur store.Cursor) ([]byte, error) {
	c, ok := cur.(cursor)
	if !ok || len(c.parts) != len(u.s.ms) {
		return nil, errors.New("a cursor from another source")
	}
	out := make([]json.RawMessage, len(c.parts))
	for i, m := range u.s.ms {
		if c.parts[i].cur == nil {
			continue
		}
		src, _ := m.source()
		b, err := src.EncodeCursor(c.parts[i].cur)
		if err != nil {
			return nil, m.named(err)
		}
		out[i] = b
	}
	return json.Marshal(out)
}

// DecodeCursor reads a cursor EncodeCursor wrote, each part with its own
// store's codec, as of the stores open now (Changes says Reset for a
// store that is not the one its part was made on).
func (u *Source) DecodeCursor(b []byte) (store.Cursor, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return nil, err
	}
	if len(parts) != len(u.s.ms) {
		return nil, errors.New("a cursor of another set of stores")
	}
	c := cursor{parts: make([]part, len(parts))}
	for i, m := range u.s.ms {
		src, gen := m.source()
		c.parts[i].gen = gen
		if len(parts[i]) == 0 || string(parts[i]) == "null" {
			continue
		}
		cur, err := src.DecodeCursor(parts[i])
		if err != nil {
			return nil, m.named(err)
		}
		c.parts[i].cur = cur
	}
	return c, nil
}
