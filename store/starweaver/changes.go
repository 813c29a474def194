package starweaver

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/vigil-run/vigil/internal/cow"
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Cursor is how far a reader has read a Starweaver database: the highest
// rowid seen in each appended table, plus the few rows that can still
// change in place — runs that have not finished, requests not yet decided —
// and the resume claims as last seen. A refresh costs O(new rows + open
// rows), never O(database).
//
// A cursor is never changed once Head or Changes has returned it: Changes
// works on a fork whose maps share the old cursor's entries until written.
type Cursor struct {
	marks   map[string]int64               // one entry per tailed table: copied whole
	open    cow.Map[string, string]        // unfinished run → its row signature
	pending cow.Map[store.RequestKey, key] // undecided request → its primary key
	claims  string                         // the claims table's signature as last seen
	claimed map[string]string              // run → its claim's id/state as last seen: replaced whole, never changed
	tails   cow.Map[string, tail]          // run → its timeline's tail, for rows attributed to it
	owned   cow.Map[string, struct{}]      // runs known to have a stream of their own
	ident   string                         // what the rows at the run and stream marks hold (see ident)
}

// key is a HITL record's primary key.
type key struct{ session, run, id string }

// CursorFormat is "starweaver".
func (c *Cursor) CursorFormat() string { return Format }

// Mark is the highest rowid the cursor has seen in a table.
func (c *Cursor) Mark(table string) int64 { return c.marks[table] }

// fork is the cursor Changes writes: the same position, sharing c's
// entries until it changes them.
func (c *Cursor) fork() *Cursor {
	return &Cursor{marks: maps.Clone(c.marks), open: c.open.Fork(), pending: c.pending.Fork(), claims: c.claims, claimed: c.claimed,
		tails: c.tails.Fork(), owned: c.owned.Fork(), ident: c.ident}
}

// probe reads in one statement the highest rowid of every tailed table and
// the claims table's signature.
func (s *Store) probe(ctx context.Context) (map[string]int64, string, error) {
	tops, sig, err := sqlitex.Tops(ctx, &s.stmts, s.read, "rowid", tailed,
		"(SELECT COALESCE(group_concat(session_id || '/' || run_id || '/' || claim_id || '/' || record, ';'), '') FROM hitl_resume_claims)")
	return tops, sig, mapErr(s.path, err)
}

// Head returns a cursor at the database's end. Load what the screen needs
// after taking it: rows that land in between come again from Changes,
// keyed by id.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	tops, sig, err := s.probe(ctx)
	if err != nil {
		return nil, err
	}
	c := &Cursor{marks: tops, claims: sig}
	if c.ident, err = s.ident(ctx, c.marks); err != nil {
		return nil, err
	}
	rows, err := s.queryRuns(ctx, "")
	if err != nil {
		return nil, err
	}
	s.remember(rows, true)
	cont := continuations(rows)
	ended := map[string]bool{}
	for _, x := range rows {
		if openRun(x, cont[x.rec.RunID]) {
			c.open.Set(x.rec.RunID, x.sig)
		}
		ended[x.rec.RunID] = terminal(x.rec.Status)
	}
	reqs, err := s.readRequests(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, x := range reqs {
		if x.pending && !ended[x.run] {
			c.pending.Set(x.req.Key(), key{x.session, x.run, x.id})
		}
	}
	if err := s.loadClaims(ctx); err != nil {
		return nil, err
	}
	c.claimed = s.claimedRuns()
	return c, nil
}

// Changes returns what was added or changed since cur, and the cursor that
// follows it; cur itself is left as it was (on an error, Changes returns
// it). Leaf tables are read before runs, so a step or request seen here
// never names a run this call has not also seen.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		name := "nil"
		if cur != nil {
			name = cur.CursorFormat()
		}
		return nil, cur, fmt.Errorf("a %s cursor cannot read a Starweaver database", name)
	}
	ch := &store.Changes{}
	tops, claimSig, err := s.probe(ctx)
	if err != nil {
		return nil, cur, err
	}
	if tops["run_records"] < c.marks["run_records"] || tops["stream_records"] < c.marks["stream_records"] {
		ch.Reset = true // another, shorter file now sits at the path
		return ch, cur, nil
	}
	if id, err := s.ident(ctx, c.marks); err != nil {
		return nil, cur, err
	} else if id != c.ident {
		ch.Reset = true // another database, as long or longer, was written over this one in place
		return ch, cur, nil
	}
	next := c.fork()
	grew := func(t string) bool { return tops[t] > c.marks[t] }
	if grew("stream_records") {
		if err := s.newSteps(ctx, next, ch, tops["stream_records"]); err != nil {
			return nil, cur, err
		}
	}
	if grew("checkpoint_records") {
		if err := s.newCheckpoints(ctx, next, ch, tops["checkpoint_records"]); err != nil {
			return nil, cur, err
		}
	}
	if err := s.newRequests(ctx, next, ch, tops, grew); err != nil {
		return nil, cur, err
	}
	// The runs whose claim came, went or changed are told against the
	// claims the cursor saw, not the ones this source last read: another
	// cursor's refresh, a Runs, or a source opened for a written-down
	// cursor (which has read none) must not hide a change from this one.
	var claimed []string
	if claimSig != next.claims || !s.claimsRead() {
		if err := s.loadClaims(ctx); err != nil {
			return nil, cur, err
		}
	}
	if claimSig != next.claims {
		now := s.claimedRuns()
		claimed = diffClaims(next.claimed, now)
		next.claims, next.claimed = claimSig, now
	}
	if err := s.changedRuns(ctx, next, ch, tops, grew("run_records"), claimed); err != nil {
		return nil, cur, err
	}
	if next.marks["run_records"] != c.marks["run_records"] || next.marks["stream_records"] != c.marks["stream_records"] {
		if next.ident, err = s.ident(ctx, next.marks); err != nil {
			return nil, cur, err
		}
	}
	return ch, next, nil
}

// ident is what the rows at the run and stream marks hold, in parts
// Starweaver never rewrites (a run's keys and creation time, a stream
// record's keys): while it reads the same, the database at the path is the
// one the cursor was made on, grown or not; one written over it in place is
// told apart even when it is as long or longer.
func (s *Store) ident(ctx context.Context, marks map[string]int64) (string, error) {
	var run, rec string
	err := s.eachRow(ctx, `SELECT COALESCE((SELECT session_id || char(31) || run_id || char(31) || created_at FROM run_records WHERE rowid = ?), ''),
		COALESCE((SELECT session_id || char(31) || run_id || char(31) || sequence_no FROM stream_records WHERE rowid = ?), '')`,
		[]any{marks["run_records"], marks["stream_records"]}, func(r *sql.Rows) error { return r.Scan(&run, &rec) })
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write([]byte(run))
	h.Write([]byte{0})
	h.Write([]byte(rec))
	return fmt.Sprintf("%x", h.Sum64()), nil
}

func (s *Store) claimedRuns() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.claims))
	for run, c := range s.claims {
		out[run] = c.ClaimID + "/" + c.State
	}
	return out
}

// diffClaims lists the runs whose claim came, went or changed state.
func diffClaims(a, b map[string]string) []string {
	var out []string
	for run, v := range a {
		if b[run] != v {
			out = append(out, run)
		}
	}
	for run := range b {
		if _, ok := a[run]; !ok {
			out = append(out, run)
		}
	}
	sort.Strings(out)
	return out
}

// closeRequests reports a run's undecided requests closed (Resolved, with
// no decision): the run has ended and nothing will read them.
func closeRequests(c *Cursor, ch *store.Changes, runID string) {
	keys := make([]store.RequestKey, 0)
	for k, pk := range c.pending.All() {
		if pk.run == runID {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		c.pending.Delete(k)
		ch.Requests = append(ch.Requests, store.Request{Kind: k.Kind, ID: k.ID, RunID: runID, Resolved: true})
	}
}

// advance sets a table's mark after a page: to the last row read when the
// page was full (More), else to the probed top (every row up to it was
// looked at, including those the filter skipped).
func advance(c *Cursor, ch *store.Changes, table string, n int, last, top int64) {
	if n == sqlitex.ChangesPage {
		c.marks[table] = last
		ch.More = true
		return
	}
	c.marks[table] = max(top, last)
}

func (s *Store) newSteps(ctx context.Context, c *Cursor, ch *store.Changes, top int64) error {
	rows, err := s.streamRowsN(ctx, fmt.Sprintf("WHERE rowid > ? AND %s ORDER BY rowid LIMIT %d", stepKinds, sqlitex.ChangesPage), c.marks["stream_records"])
	if err != nil {
		return err
	}
	var last int64
	for _, x := range rows {
		last = x.rowid
		if !x.ok {
			continue
		}
		owner := x.run
		if !x.own() {
			_, src := x.rec.source()
			owner = ""
			if src != "" {
				attributable, err := s.mergedFor(ctx, c, src)
				if err != nil {
					return err
				}
				if attributable {
					owner = src
				}
			}
		} else {
			c.owned.Set(x.run, struct{}{})
		}
		if owner == "" {
			continue
		}
		t, ok := c.tails.Get(owner)
		if !ok {
			if t, _, err = s.tailBefore(ctx, x.streamRow, owner, owner != x.run); err != nil {
				return err
			}
		}
		row, call, ok := stepOf(x.streamRow, owner, &t)
		c.tails.Set(owner, t)
		if !ok {
			continue
		}
		ch.Steps = append(ch.Steps, row)
		if call != nil {
			ch.Calls = append(ch.Calls, *call)
		}
	}
	advance(c, ch, "stream_records", len(rows), last, top)
	return nil
}

// mergedFor reports whether a subagent's merged records stand for its
// timeline: it is a run in the store with no stream of its own.
func (s *Store) mergedFor(ctx context.Context, c *Cursor, runID string) (bool, error) {
	if c.owned.Has(runID) {
		return false, nil
	}
	if _, ok, err := s.metaOf(ctx, runID); err != nil || !ok {
		return false, err
	}
	own, err := s.hasOwnStream(ctx, runID)
	if own {
		c.owned.Set(runID, struct{}{})
	}
	return !own, err
}

// decodedRow is a stream row that may not have decoded (it still moves the
// mark).
type decodedRow struct {
	streamRow
	ok bool
}

func (s *Store) streamRowsN(ctx context.Context, where string, args ...any) ([]decodedRow, error) {
	var out []decodedRow
	var big []int // indexes in out of records too big to hand to SQL (shrink.go)
	sizes := map[int64]int64{}
	q := fmt.Sprintf("SELECT rowid, session_id, run_id, CASE WHEN octet_length(record) <= %d THEN record END, octet_length(record) FROM stream_records ",
		bigRecord) + guardLikes(where)
	err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
		var x decodedRow
		var rec []byte
		var size sql.NullInt64
		if err := r.Scan(&x.rowid, &x.session, &x.run, &rec, &size); err != nil {
			return err
		}
		if size.Int64 > bigRecord {
			big = append(big, len(out))
			sizes[x.rowid] = size.Int64
		} else {
			x.ok = decode(rec, schemaStream, true, &x.rec)
		}
		out = append(out, x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, i := range big {
		rec, err := s.shrunk(ctx, "stream_records", out[i].rowid, sizes[out[i].rowid])
		if err != nil {
			return nil, err
		}
		out[i].ok = decode(rec, schemaStream, true, &out[i].rec)
	}
	return out, nil
}

func (s *Store) newCheckpoints(ctx context.Context, c *Cursor, ch *store.Changes, top int64) error {
	n := 0
	var last int64
	err := s.eachRow(ctx, fmt.Sprintf("SELECT rowid, run_id, sequence_no, checkpoint_id, record FROM checkpoint_records WHERE rowid > ? ORDER BY rowid LIMIT %d", sqlitex.ChangesPage),
		[]any{c.marks["checkpoint_records"]}, func(r *sql.Rows) error {
			e, ok, err := scanCheckpoint(r)
			n++
			last = e.RowID
			if ok {
				ch.AgentEvents = append(ch.AgentEvents, e)
			}
			return err
		})
	if err != nil {
		return err
	}
	advance(c, ch, "checkpoint_records", n, last, top)
	return nil
}

func (s *Store) newRequests(ctx context.Context, c *Cursor, ch *store.Changes, tops map[string]int64, grew func(string) bool) error {
	var fresh []reqRow
	seen := map[store.RequestKey]bool{}
	// Known undecided requests: did someone decide them? Each is a point
	// read on its primary key.
	keys := slices.SortedFunc(c.pending.Keys(), func(a, b store.RequestKey) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		pk, _ := c.pending.Get(k)
		table, col := requestTable(k.Kind)
		cols, scan := approvalCols, scanApproval
		if k.Kind == store.Question {
			cols, scan = deferredCols, scanDeferred
		}
		var got []reqRow
		err := s.eachRow(ctx, "SELECT "+cols+" FROM "+table+" WHERE session_id = ? AND run_id = ? AND "+col+" = ?",
			[]any{pk.session, pk.run, pk.id}, func(r *sql.Rows) error {
				x, ok, err := scan(r)
				if ok {
					got = append(got, x)
				}
				return err
			})
		if err != nil {
			return err
		}
		switch {
		case len(got) == 0:
			// The row is gone (its run was trimmed): nothing waits any more.
			c.pending.Delete(k)
			ch.Requests = append(ch.Requests, store.Request{Kind: k.Kind, ID: k.ID, RunID: pk.run, Resolved: true, Decision: "gone"})
			seen[k] = true
		case !got[0].pending:
			c.pending.Delete(k)
			fresh = append(fresh, got[0])
			seen[k] = true
		}
	}
	for _, t := range []struct {
		table string
		cols  string
		scan  func(*sql.Rows) (reqRow, bool, error)
	}{
		{"approval_records", approvalCols, scanApproval},
		{"deferred_tool_records", deferredCols, scanDeferred},
	} {
		if !grew(t.table) {
			continue
		}
		n := 0
		var last int64
		var newRows []reqRow
		err := s.eachRow(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE rowid > ? ORDER BY rowid LIMIT %d", t.cols, t.table, sqlitex.ChangesPage),
			[]any{c.marks[t.table]}, func(r *sql.Rows) error {
				x, ok, err := t.scan(r)
				n++
				last = x.rowid
				if !ok || err != nil {
					return err
				}
				newRows = append(newRows, x)
				return nil
			})
		if err != nil {
			return err
		}
		for _, x := range newRows {
			k := x.req.Key()
			if x.pending {
				// A record left pending by a run that has ended waits on nobody.
				rec, err := s.runRecord(ctx, x.session, x.run)
				if err != nil {
					return err
				}
				if rec != nil && terminal(rec.Status) {
					continue
				}
				c.pending.Set(k, key{x.session, x.run, x.id})
			} else {
				c.pending.Delete(k)
			}
			if !seen[k] {
				seen[k] = true
				fresh = append(fresh, x)
			}
		}
		advance(c, ch, t.table, n, last, tops[t.table])
	}
	reqs, err := s.finishRequests(ctx, fresh)
	if err != nil {
		return err
	}
	ch.Requests = append(ch.Requests, reqs...)
	return nil
}

func (s *Store) changedRuns(ctx context.Context, c *Cursor, ch *store.Changes, tops map[string]int64, grew bool, claimed []string) error {
	reread := map[string]bool{}
	for _, id := range claimed {
		reread[id] = true
	}
	// Open runs: a light look at each row (a point read on the primary
	// key); whole rows only for those that changed.
	ids := slices.Sorted(c.open.Keys())
	for _, id := range ids {
		m, ok, err := s.metaOf(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			c.open.Delete(id)
			continue
		}
		sig := ""
		err = s.eachRow(ctx, "SELECT updated_at || '|' || length(record) FROM run_records WHERE session_id = ? AND run_id = ?",
			[]any{m.session, id}, func(r *sql.Rows) error { return r.Scan(&sig) })
		if err != nil {
			return err
		}
		if was, _ := c.open.Get(id); sig != was {
			reread[id] = true
		}
	}
	// New rows: new runs, and runs Starweaver rewrote with INSERT OR
	// REPLACE. A continuation also finishes the run it continues.
	if grew {
		n := 0
		var last int64
		var rows []runRow
		err := s.eachRow(ctx, fmt.Sprintf("SELECT %s FROM run_records WHERE rowid > ? ORDER BY rowid LIMIT %d", runCols, sqlitex.ChangesPage),
			[]any{c.marks["run_records"]}, func(r *sql.Rows) error {
				x, ok, err := scanRun(r)
				n++
				last = x.rowid
				if ok {
					rows = append(rows, x)
				}
				return err
			})
		if err != nil {
			return err
		}
		s.remember(rows, false)
		for _, x := range rows {
			reread[x.rec.RunID] = true
			if src := x.rec.RestoreFromRunID; src != "" {
				reread[src] = true
			}
			if x.rec.ParentRunID != "" {
				ch.AgentEvents = append(ch.AgentEvents, spawnEvent(x))
			}
		}
		advance(c, ch, "run_records", n, last, tops["run_records"])
	}
	if len(reread) == 0 {
		return nil
	}
	ids = ids[:0]
	for id := range reread {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	runs, rows, err := s.runsByID(ctx, ids)
	if err != nil {
		return err
	}
	byID := map[string]runRow{}
	for _, x := range rows {
		byID[x.rec.RunID] = x
	}
	for id := range reread {
		if _, ok := byID[id]; !ok {
			c.open.Delete(id) // gone (trimmed, or its session deleted)
		}
	}
	for _, r := range runs {
		x := byID[r.ID]
		if r.Summary == nil && !r.Status.Ended() {
			c.open.Set(r.ID, x.sig)
			if err := s.countOpen(ctx, &r, tops["stream_records"]); err != nil {
				return err
			}
		} else {
			c.open.Delete(r.ID)
			c.tails.Delete(r.ID)
		}
		if terminal(x.rec.Status) {
			// What it left pending waits on nobody now.
			closeRequests(c, ch, r.ID)
		}
		ch.Runs = append(ch.Runs, r)
	}
	return nil
}
