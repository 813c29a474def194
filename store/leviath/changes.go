package leviath

import (
	"context"
	"fmt"
	"sort"

	"github.com/vigil-run/vigil/store"
)

// ChangesPage caps the log entries one Changes call returns; when more
// wait, Changes.More asks the caller to call again.
const ChangesPage = 4096

// changesPage is ChangesPage (tests lower it).
var changesPage = ChangesPage

// Cursor is a Leviath source's cursor: a position in the source's change
// log, never changed once returned. Every row, replay point and provider
// call gets its id from the same sequence as the log, so "what came after
// the cursor" is a binary search and a slice: O(new data).
//
// A cursor read back from its written form (CursorCodec) is marks
// instead: how far the reader has each run (cursor_codec.go).
type Cursor struct {
	src     *Store
	seq     int64
	marks   map[string]*runMarks // a written cursor read back (src nil), or a page of one
	folding map[string]foldMark  // the runs being folded when the cursor was made, and what the reader has of each (cursor_folding.go)
	why     string               // with Reset: why the cursor before could not be followed
	dead    string               // a written cursor that could not be followed when written, and why
}

// CursorFormat names the source kind the cursor belongs to.
func (c *Cursor) CursorFormat() string { return Format }

// Head reads what is new on disk and returns a cursor at the end.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	return s.liveCursor(nil), nil
}

// Changes reads what was appended since the last read (new run
// directories, frames appended to each run.lvr from its last offset,
// rewritten meta.json and sidecars) and returns what the cursor has not
// seen, with the cursor that follows it (cur itself is a value Changes
// never changes):
//   - Runs: new runs, and runs whose status, outcome, summary, lease or
//     shown fields changed (each once, as it is now);
//   - Steps: new timeline rows in row order (a transcript entry, a status
//     change, a restart, a journal problem);
//   - Context: new replay points, and points whose provider count arrived;
//   - Calls: new provider calls;
//   - Requests: new waiting_input episodes, and ones that ended (Resolved).
//
// Reset is set when a run directory was deleted or a journal replaced or
// shortened: reload everything. Unwritten is set when all of it is a
// background fold put in place (folding.go): nothing was written.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		name := "nil"
		if cur != nil {
			name = cur.CursorFormat()
		}
		return nil, cur, fmt.Errorf("a %s cursor cannot read a Leviath source", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, cur, err
	}
	ch := &store.Changes{}
	if c.marks != nil || c.dead != "" {
		if err := s.refreshLocked(); err != nil {
			return nil, cur, err
		}
		// Only the runs the marks have must be folded to be compared;
		// the others are given once they are (changesSince).
		var marked []string
		for id := range c.marks {
			if rs := s.runs[id]; rs != nil && rs.pending {
				marked = append(marked, id)
			}
		}
		if len(marked) > 0 {
			if err := s.settle(ctx, marked...); err != nil {
				return nil, cur, err
			}
		}
		ch, next := s.changesSince(c)
		return ch, next, nil
	}
	if c.src != s {
		ch.Reset = true
		return ch, cur, nil
	}
	if err := s.refreshLocked(); err != nil {
		return nil, cur, err
	}
	if c.seq < s.resetAt || c.seq < s.cut {
		ch.Reset = true
		why := "a run was deleted, or a journal replaced, shortened or written over, after the cursor"
		if c.seq >= s.resetAt {
			why = "the cursor is older than the change log keeps"
		}
		next := s.liveCursor(nil)
		next.why = why
		return ch, next, nil
	}
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].seq > c.seq })
	end := len(s.log)
	if end-i > changesPage {
		end, ch.More = i+changesPage, true
	}
	runs := map[*runState]bool{}
	type key struct {
		rs  *runState
		idx int32
	}
	samples, reqs := map[key]int{}, map[key]int{}
	unwritten := true
	for _, e := range s.log[i:end] {
		rs := e.run
		unwritten = unwritten && e.caught
		switch e.kind {
		case evRun:
			if !runs[rs] {
				runs[rs] = true
				ch.Runs = append(ch.Runs, s.runOf(rs))
			}
		case evStep:
			ch.Steps = append(ch.Steps, stepRowOf(rs, &rs.rows[e.idx]))
		case evSample:
			cs := sampleOf(rs, &rs.samples[e.idx])
			if j, ok := samples[key{rs, e.idx}]; ok {
				ch.Context[j] = cs
			} else {
				samples[key{rs, e.idx}] = len(ch.Context)
				ch.Context = append(ch.Context, cs)
			}
		case evCall:
			ch.Calls = append(ch.Calls, callOf(rs, &rs.calls[e.idx]))
		case evRequest:
			r := s.request(rs, &rs.episodes[e.idx])
			if j, ok := reqs[key{rs, e.idx}]; ok {
				ch.Requests[j] = r
			} else {
				reqs[key{rs, e.idx}] = len(ch.Requests)
				ch.Requests = append(ch.Requests, r)
			}
		}
	}
	ch.Unwritten = unwritten && !ch.Empty()
	next := s.liveCursor(c.folding)
	if ch.More {
		next.seq = s.log[end-1].seq
	}
	return ch, next, nil
}
