package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// listGoalBytes caps a goal in run lists: a session turn's goal is the
// user's whole prompt. Run(id) returns it whole.
const listGoalBytes = 4096

func (s *Store) runSelect(goalCap int, where string) string {
	si := s.si()
	goal := "r.goal"
	if goalCap > 0 {
		goal = fmt.Sprintf("substr(r.goal, 1, %d)", goalCap)
	}
	return fmt.Sprintf(`SELECT r.id, %s, r.file, r.outcome, %s, %s, %s, %s, %s, %s
		FROM runs r %s ORDER BY r.id DESC`,
		goal,
		si.col("runs", "provider", "NULL"),
		si.col("runs", "parent_run_id", "NULL"),
		si.col("runs", "depth", "0"),
		si.col("runs", "status", "CASE WHEN r.outcome IS NULL THEN 'running' ELSE 'completed' END"),
		si.col("runs", "started_at", "NULL"),
		si.col("runs", "turn_kind", "NULL"),
		where)
}

// runCols is how many columns runSelect reads.
const runCols = 10

// scanRun reads one of runSelect's rows through buf (newRowBuf(runCols)).
func scanRun(rows *sql.Rows, buf *rowBuf) (store.Run, int64, error) {
	// Scanned into any and converted here: database/sql's conversions into
	// Null types and int went through reflection (a tenth of listing 100 k
	// runs). What the fast paths do not take is converted by the Null
	// types' own Scan, so a value stored as another type reads as it did.
	x, err := buf.scan(rows)
	if err != nil {
		return store.Run{}, 0, err
	}
	return buf.run(x)
}

// rowBuf is a row's cells and the pointers Scan fills them through, made
// once a query: made for each row, both escaped to the heap every time,
// garbage that listing every run made as fast as it read them. It also
// holds what rows of one query share: the few distinct values of a
// status, an outcome, a provider, a workspace, kept once for every run
// that has them, and the id of the last parent read (a tree's runs are
// read one after another, and the parent itself after its children).
type rowBuf struct {
	v, p   []any
	x      cells
	shared interner
	lastID int64
	lastIS string // idStr(lastID), the last parent's id
}

// keep is a text column's value as one string shared with the other rows
// of the query that hold the same value.
func (b *rowBuf) keep(s sql.NullString) sql.NullString {
	if s.Valid {
		s.String = b.shared.of(s.String)
	}
	return s
}

// parentID is a parent's id as text: one string for the runs under it.
func (b *rowBuf) parentID(n int64) string {
	if n != b.lastID || b.lastIS == "" {
		b.lastID, b.lastIS = n, idStr(n)
	}
	return b.lastIS
}

// runID is a run's id as text: its children's string for it, if they
// were the rows just read.
func (b *rowBuf) runID(n int64) string {
	if n == b.lastID && b.lastIS != "" {
		return b.lastIS
	}
	return idStr(n)
}

func newRowBuf(n int) *rowBuf {
	b := &rowBuf{v: make([]any, n), p: make([]any, n)}
	for i := range b.v {
		b.p[i] = &b.v[i]
	}
	b.x = anyCells(b.v)
	return b
}

func (b *rowBuf) scan(rows *sql.Rows) (cells, error) {
	return b.x, rows.Scan(b.p...)
}

// run makes a run of runSelect's columns.
func (b *rowBuf) run(x cells) (store.Run, int64, error) {
	var c colConv
	id := cellInt(x, &c, 0)
	goal, file := cellStr(x, &c, 1), b.shared.of(cellStr(x, &c, 2))
	outcome, provider := b.keep(x.nullStr(&c, 3)), b.keep(x.nullStr(&c, 4))
	parent := x.nullInt(&c, 5)
	depth := int(cellInt(x, &c, 6))
	status, kind := b.keep(x.nullStr(&c, 7)), b.keep(x.nullStr(&c, 9))
	started := nullTime(x.peekStr(&c, 8)) // parsed, not kept
	if c.err != nil {
		return store.Run{}, 0, c.err
	}
	var parentID string
	if parent.Valid {
		parentID = b.parentID(parent.Int64)
	}
	r := store.Run{
		ID:        b.runID(id),
		ParentID:  parentID,
		Depth:     depth,
		Goal:      goal,
		Workspace: file,
		Provider:  nullStr(provider),
		Status:    store.Status(nullStr(status)),
		Outcome:   store.Outcome(nullStr(outcome)),
		TurnKind:  nullStr(kind),
		StartedAt: started,
	}
	r.Resumable = resumable(r.Status, r.Outcome)
	return r, id, nil
}

// The summaries (run_outcomes) are read apart from the run rows: a LEFT
// JOIN put seven more columns on every row, NULL for each unfinished run,
// and the driver's cost is per column read (on 100 k running runs, a
// third of listing them). Only finished runs have a row to read. The two
// are separate reads: the runs first, so a run that ends in between reads
// as the unfinished run its row says it is, never as finished without its
// summary (io-harness writes the status and the row in one transaction).

// outcomeCols reads a run_outcomes row after its run_id.
const outcomeCols = "run_id, outcome, success, steps, tokens, duration_ms, finished_at"

// scanOutcome reads one run_outcomes row.
func scanOutcome(rows *sql.Rows, buf *rowBuf) (int64, *store.Summary, error) {
	x, err := buf.scan(rows)
	if err != nil {
		return 0, nil, err
	}
	return buf.outcome(x)
}

// outcome makes a summary of outcomeCols.
func (b *rowBuf) outcome(x cells) (int64, *store.Summary, error) {
	var c colConv
	run := cellInt(x, &c, 0)
	oOutcome, oSuccess, oSteps := b.keep(x.nullStr(&c, 1)), x.nullInt(&c, 2), x.nullInt(&c, 3)
	oTokens, oDur, oFinished := x.nullInt(&c, 4), x.nullInt(&c, 5), x.peekStr(&c, 6)
	if c.err != nil {
		return 0, nil, c.err
	}
	sum := &store.Summary{
		Outcome:    store.Outcome(nullStr(oOutcome)),
		Success:    oSuccess.Int64 != 0,
		Steps:      int(oSteps.Int64),
		Tokens:     oTokens.Int64,
		FinishedAt: nullTime(oFinished), // parsed, not kept
	}
	if oDur.Valid {
		sum.Duration, sum.HasDuration = time.Duration(oDur.Int64)*time.Millisecond, true
	}
	return run, sum, nil
}

// summarize gives a run its run_outcomes row. The row is the summary only
// while the run is really finished: a resumed run keeps its earlier row
// until it ends again (and one a resume drives again with its status left
// completed loses it in dress, once its lease is known). A run parked on a
// question has one too, though it has not ended: finish_run
// (src/state/runs.rs) pauses only awaiting_approval and awaiting_plan and
// completes, with a summary, everything else, while io-harness's own
// RunOutcome::AwaitingAnswer (src/run.rs) is "paused, not finished" and
// resume_with_answer drives it on. Its row's finished time, duration and
// success 0 would say it ended, and failed: it is read as a paused run's,
// with none.
func summarize(r *store.Run, sum *store.Summary) {
	if r.Status == "running" || r.Status == "paused" || r.Outcome == store.OutcomeAwaitingAnswer || r.Summary != nil {
		return
	}
	r.Summary = sum
	r.Steps, r.Tokens, r.StatsKnown = sum.Steps, sum.Tokens, true
}

// attachOutcomes reads the summaries of runs (ids[i] is runs[i]'s id, both
// in descending id order, as runSelect reads them): a few runs by id, many
// by one pass over the table merged with them. Their outcomes are the
// strings the runs' rows were read with (shared).
func (s *Store) attachOutcomes(ctx context.Context, runs []store.Run, ids []int64, shared interner) error {
	if len(runs) == 0 || !s.si().has("run_outcomes") {
		return nil
	}
	q := "SELECT " + outcomeCols + " FROM run_outcomes"
	if len(ids) <= manyIDs {
		q += " WHERE run_id IN (" + sqlitex.IDList(ids) + ")"
	}
	q += " ORDER BY run_id DESC"
	i := 0
	take := func(run int64, sum *store.Summary, err error) error {
		if err != nil {
			return err
		}
		for i < len(ids) && ids[i] > run {
			i++
		}
		if i < len(ids) && ids[i] == run {
			summarize(&runs[i], sum)
		}
		return nil
	}
	buf := newRowBuf(7)
	buf.shared = shared
	return s.eachRow(ctx, q, nil, func(rows *sql.Rows) error { return take(scanOutcome(rows, buf)) })
}

// Runs returns every run in the store, roots and children, newest first.
// Finished runs carry their counts from the summary; the others have
// StatsKnown false until RunStats counts them.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	// The count sizes the slice once: growing it by appending copied a
	// 100 k-run list several times over.
	var n int
	if err := s.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM runs").Scan(&n); err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	runs, err := s.queryRunsInto(ctx, make([]store.Run, 0, min(n, 1<<20)), s.runSelect(listGoalBytes, ""))
	if err != nil {
		return nil, err
	}
	leases, err := s.leases(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.dress(ctx, runs, leases); err != nil {
		return nil, err
	}
	return runs, nil
}

// RecentRuns returns the newest limit runs whose trees are whole in them:
// run ids grow with start time, so a page of the newest ids holds every
// child of each root in it; a child of an older root is left out, with
// its root. It costs the page, not the store (Runs reads every run).
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	page, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, "")+fmt.Sprintf(" LIMIT %d", limit+1))
	if err != nil {
		return nil, false, err
	}
	all := len(page) <= limit
	if !all {
		page = page[:limit]
	}
	if !all {
		bound := runNum(page[len(page)-1].ID)
		// Oldest first, so a parent is judged before its children.
		kept := map[string]bool{}
		out := make([]store.Run, 0, len(page))
		for i := len(page) - 1; i >= 0; i-- {
			if r := page[i]; r.ParentID == "" || kept[r.ParentID] {
				kept[r.ID] = true
				out = append(out, r)
			}
		}
		slices.Reverse(out)
		page = out
		// Ids that do not follow start times (recent_order.go): the page
		// is read again in the list's order.
		newest, err := s.pageIsNewest(ctx, page, bound)
		if err != nil {
			return nil, false, err
		}
		if !newest {
			ids, err := s.newestByStart(ctx, limit)
			if errors.Is(err, errNoForest) {
				runs, err := s.Runs(ctx)
				return runs, true, err
			}
			if err != nil {
				return nil, false, err
			}
			if page, err = s.runsByID(ctx, ids); err != nil {
				return nil, false, err
			}
		}
	}
	leases, err := s.leases(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := s.dress(ctx, page, leases); err != nil {
		return nil, false, err
	}
	return page, all, nil
}

// HasRun says whether the store holds a run, from its row alone.
func (s *Store) HasRun(ctx context.Context, id string) (bool, error) {
	n, ok := parseID(id)
	if !ok {
		return false, nil
	}
	found := false
	err := s.eachRow(ctx, "SELECT 1 FROM runs WHERE id = ?", []any{n}, func(*sql.Rows) error {
		found = true
		return nil
	})
	return found, err
}

// Run returns one run, goal in full, with its lease and counts.
func (s *Store) Run(ctx context.Context, id string) (store.Run, error) {
	n, ok := parseID(id)
	if !ok {
		return store.Run{}, storeErr(s.path, store.ErrNoSuchRun, id, nil)
	}
	runs, err := s.queryRuns(ctx, s.runSelect(0, "WHERE r.id = ?"), n)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, storeErr(s.path, store.ErrNoSuchRun, id, nil)
	}
	leases, err := s.leases(ctx)
	if err != nil {
		return store.Run{}, err
	}
	if err := s.dress(ctx, runs, leases); err != nil {
		return store.Run{}, err
	}
	r := runs[0]
	if !r.StatsKnown {
		st, err := s.RunStats(ctx, []string{r.ID})
		if err != nil {
			return store.Run{}, err
		}
		r.Steps, r.Tokens, r.Unreported, r.StatsKnown = st[r.ID].Steps, st[r.ID].Tokens, st[r.ID].Unreported, true
	}
	return r, nil
}

func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]store.Run, error) {
	return s.queryRunsInto(ctx, nil, q, args...)
}

func (s *Store) queryRunsInto(ctx context.Context, out []store.Run, q string, args ...any) ([]store.Run, error) {
	ids := make([]int64, 0, cap(out))
	buf := newRowBuf(runCols)
	err := s.eachRow(ctx, q, args, func(rows *sql.Rows) error {
		r, id, err := scanRun(rows, buf)
		out = append(out, r)
		ids = append(ids, id)
		return err
	})
	if err != nil {
		return out, err
	}
	return out, s.attachOutcomes(ctx, out, ids, buf.shared)
}

// RunStats counts steps and tokens for runs that have no summary yet. The
// steps table has no run_id index, so this reads it backwards from the end
// and stops at each run's first step: cheap for recent runs. A run still
// not done after a few chunks (one a killed harness left, far back) is
// counted by SQLite itself, forwards from the table's start in short
// chunks of GROUP BY: read backwards, pages come a random read at a time
// (10 M steps not in the page cache: minutes); forwards they are read
// ahead, and aggregating in SQLite hands vigil a row per run, not per step.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	nums := parseIDs(ids)
	var through int64
	if err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM steps").Scan(&through); err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	// Every run asked about has an entry, stamped with what it was counted
	// through, before any row adds to it.
	out := make(map[string]store.RunStats, len(ids))
	for _, id := range ids {
		out[id] = store.RunStats{Through: through}
	}
	type row struct {
		run      int64
		step     int
		tokens   int64
		decision string
	}
	rows, left, below, err := scanBackSome(ctx, s.read, scanSpec{
		table: "steps", cols: "tokens, substr(decision, 1, 32)", runs: nums, top: through,
		done: firstStep,
	}, statsBackChunks, func(r *sql.Rows) (row, int64, int, error) {
		var id int64
		var x row
		err := r.Scan(&id, &x.run, &x.step, &x.tokens, &x.decision)
		return x, x.run, x.step, err
	})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	for _, r := range rows {
		st := out[idStr(r.run)]
		st.Tokens += r.tokens
		if unreportedStep(r.tokens, r.decision) {
			st.Unreported++
		}
		if r.step > st.Steps {
			st.Steps = r.step
		}
		out[idStr(r.run)] = st
	}
	if len(left) > 0 {
		if err := s.statsForward(ctx, left, below, out); err != nil {
			return nil, err
		}
	}
	// A conversational reply's spend is its provider calls, as io-harness's
	// spent_tokens counts it.
	if s.si().has("provider_calls") && s.si().hasCol("runs", "turn_kind") {
		// A long list of ids is cheaper asked of every reply and filtered
		// here: SQLite parsing 100 k literals was a tenth of listing runs.
		var want *runSet // made only if a reply has spend to keep or drop
		filter := ""
		if len(nums) > manyIDs {
			want = &runSet{nums: nums}
		} else {
			filter = fmt.Sprintf("p.run_id IN (%s) AND", sqlitex.IDList(nums))
		}
		q := fmt.Sprintf(`SELECT p.run_id, COALESCE(SUM(p.total_tokens), 0), COUNT(*) - COUNT(p.total_tokens) FROM provider_calls p
			WHERE %s p.run_id IN (SELECT id FROM runs WHERE turn_kind = 'reply')
			GROUP BY p.run_id`, filter)
		err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
			var run, tokens int64
			var unreported int
			if err := r.Scan(&run, &tokens, &unreported); err != nil {
				return err
			}
			if want != nil && !want.has(run) {
				return nil
			}
			st := out[idStr(run)]
			st.Tokens, st.Unreported = tokens, unreported // a call with no usage, as a step with none
			out[idStr(run)] = st
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// manyIDs is how many runs RunStats names in SQL before it reads every
// reply's spend and keeps the ones asked for instead.
const manyIDs = 1000

// runIn is a condition on run_id holding it to runs, and its parameters.
// Past manyIDs runs they are one parameter, a JSON array SQLite reads
// into the same ephemeral index the literals made: a statement naming
// tens of thousands of ids held SQLite memory outside the Go heap (the
// parsed literals and their code) for as long as it stayed prepared, and
// the statement cache kept it. Reading every run's rows and keeping the
// asked ones in Go instead cost half as much CPU again: SQLite then
// groups every run's steps, not a third of them.
func runIn(runs []int64) (string, []any) {
	if len(runs) > manyIDs {
		return "run_id IN (SELECT value FROM json_each(?))", []any{"[" + sqlitex.IDList(runs) + "]"}
	}
	return "run_id IN (" + sqlitex.IDList(runs) + ")", nil
}

// statsBackChunks is how far back RunStats reads row by row (4 × 8192
// rows) before it counts the runs left with SQLite's GROUP BY.
const statsBackChunks = 4

// statsChunk is how many row ids one forward GROUP BY covers: each is its
// own short read, so the count never pins the WAL.
const statsChunk = 1 << 16

// statsForward adds to out the steps and tokens of runs in the rows at or
// below below, read forwards in chunks, each aggregated by SQLite.
func (s *Store) statsForward(ctx context.Context, runs []int64, below int64, out map[string]store.RunStats) error {
	filter, ids := runIn(runs)
	q := fmt.Sprintf(`SELECT run_id, MAX(step), COALESCE(SUM(tokens), 0), SUM(%s) FROM steps WHERE id > ? AND id <= ? AND %s GROUP BY run_id`,
		unreportedSQL, filter)
	var low int64
	if err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MIN(id), 1) - 1 FROM steps").Scan(&low); err != nil {
		return mapDriverErr(s.path, err)
	}
	for lo := low; lo < below; lo += statsChunk {
		err := s.eachRow(ctx, q, append([]any{lo, min(lo+statsChunk, below)}, ids...), func(r *sql.Rows) error {
			var run, tokens int64
			var step, unreported int
			if err := r.Scan(&run, &step, &tokens, &unreported); err != nil {
				return err
			}
			st := out[idStr(run)]
			st.Tokens += tokens
			st.Unreported += unreported
			st.Steps = max(st.Steps, step)
			out[idStr(run)] = st
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Tree returns the run and every run below it (any depth), parents before
// children. A cycle in parent_run_id cannot loop: UNION drops repeats.
func (s *Store) Tree(ctx context.Context, rootID string) ([]store.Run, error) {
	root, ok := parseID(rootID)
	if !ok {
		return nil, storeErr(s.path, store.ErrNoSuchRun, rootID, nil)
	}
	if !s.si().hasCol("runs", "parent_run_id") {
		r, err := s.Run(ctx, rootID)
		if err != nil {
			return nil, err
		}
		return []store.Run{r}, nil
	}
	where := `WHERE r.id IN (WITH RECURSIVE tree(id) AS (
			SELECT id FROM runs WHERE id = ?
			UNION SELECT c.id FROM runs c JOIN tree t ON c.parent_run_id = t.id)
		SELECT id FROM tree)`
	runs, err := s.queryRuns(ctx, s.runSelect(listGoalBytes, where), root)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, storeErr(s.path, store.ErrNoSuchRun, rootID, nil)
	}
	leases, err := s.leases(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.dress(ctx, runs, leases); err != nil {
		return nil, err
	}
	var unknown []string
	for i := range runs {
		if !runs[i].StatsKnown {
			unknown = append(unknown, runs[i].ID)
		}
	}
	if len(unknown) > 0 {
		st, err := s.RunStats(ctx, unknown)
		if err != nil {
			return nil, err
		}
		for i := range runs {
			if x, ok := st[runs[i].ID]; ok {
				runs[i].Steps, runs[i].Tokens, runs[i].Unreported, runs[i].StatsKnown = x.Steps, x.Tokens, x.Unreported, true
			}
		}
	}
	// Ids grow with start time, so ascending id puts parents first.
	sort.Slice(runs, func(i, j int) bool { return runNum(runs[i].ID) < runNum(runs[j].ID) })
	return runs, nil
}

// leases reads every lease: the table holds a row only while a run is
// driven, so it stays small.
func (s *Store) leases(ctx context.Context) (map[string]store.Lease, error) {
	out := map[string]store.Lease{}
	if !s.si().has("run_leases") {
		return out, nil
	}
	err := s.eachRow(ctx, "SELECT run_id, owner, generation, acquired_at, renewed_at, ttl_secs FROM run_leases", nil,
		func(r *sql.Rows) error {
			var run, gen, ttl int64
			var owner, acq, ren string
			if err := r.Scan(&run, &owner, &gen, &acq, &ren, &ttl); err != nil {
				return err
			}
			out[idStr(run)] = store.Lease{Owner: owner, Generation: gen, AcquiredAt: parseTime(acq),
				RenewedAt: parseTime(ren), TTL: time.Duration(ttl) * time.Second}
			return nil
		})
	return out, err
}

// RecordsLeases reports whether the store has the run_leases table
// (io-harness 0.62 and later): without it, liveness cannot be told.
func (s *Store) RecordsLeases() bool { return s.si().has("run_leases") }

// eachRow runs a read and hands each row to fn, with no read transaction
// outliving the call.
func (s *Store) eachRow(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	return mapDriverErr(s.path, s.stmts.EachRow(ctx, s.read, q, args, fn))
}

func parseIDs(ids []string) []int64 {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if n, ok := parseID(id); ok {
			out = append(out, n)
		}
	}
	return out
}

func runNum(id string) int64 {
	n, _ := parseID(id)
	return n
}
