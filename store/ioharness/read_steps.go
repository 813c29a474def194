package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
)

// toolCallSummaryBytes caps the tool call a timeline row carries; the step
// detail reads the whole call.
const toolCallSummaryBytes = 240

// resultHeadBytes is how much of a result a timeline row reads to find
// the line that says what the step did (resultHead).
const resultHeadBytes = 1024

// stepRowCols are the columns a StepRow is read from, after id, run_id and
// step: text is cut in SQL so a huge prompt or result is never loaded. A
// tool call or result longer than timelineSQLBytes is not handed to SQL at
// all (see bigfields.go): its column reads NULL and bigHeads reads its
// head a piece at a time.
var stepRowCols = fmt.Sprintf("decision, CASE WHEN octet_length(tool_call) <= %[3]d THEN substr(tool_call, 1, %[1]d) END, "+
	"CASE WHEN octet_length(result) <= %[3]d THEN substr(ltrim(result, char(10, 13, 32)), 1, %[2]d) END, tokens",
	toolCallSummaryBytes, resultHeadBytes, timelineSQLBytes)

// timelineSQLBytes: a value up to this long is cut by SQL for a timeline
// row; a longer one is read from its head (a result that starts with more
// than this many blanks shows an empty head).
const timelineSQLBytes = 64 << 10

// providerNote matches the note io-harness puts first in a step's
// observations when a provider-run web tool broke inside the response
// ("[step 4] provider web tool: web_search failed (max_uses_exceeded)",
// web_failure_note in src/run/step.rs). It is the provider's report, not
// what the step did: the step's own result follows it.
var providerNote = regexp.MustCompile(`^\[step \d+\] provider web tool: `)

// resultHead is the line that summarises what a step did: the first line
// of its result that is not a provider's note, cut to the summary size
// (a result that is nothing but notes is summarised by its first).
func resultHead(s string) string {
	first := ""
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if !providerNote.MatchString(l) {
			return cutUTF8(l, toolCallSummaryBytes)
		}
	}
	return cutUTF8(first, toolCallSummaryBytes)
}

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// auxRow matches the rows io-harness writes under a step's number before (or
// instead of) committing it. io-harness has no column for what a steps row
// is: its retry, escalation and compaction rows are told apart by the
// decision text it writes for them ("retry 2 after Timeout in 1s",
// "escalated after …", "compacting after …"), and that text is this
// format's fact, so it is read here and nowhere else.
var auxRow = regexp.MustCompile(`^(?:(retry) \d+ after |(escalated) after |(compacting) after )`)

// stepKind is what an io-harness steps row is, from its decision text.
func stepKind(decision string) store.StepKind {
	m := auxRow.FindStringSubmatch(decision)
	switch {
	case m == nil:
		return store.StepTurn
	case m[1] != "":
		return store.StepRetry
	case m[2] != "":
		return store.StepEscalation
	}
	return store.StepCompaction
}

// Steps returns a run's timeline: one entry per step, provider retries
// folded under it. It reads every row of the run (rows.go): a retry of step
// 1 written long before step 1's commit is still folded under it.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	scanned, err := readRuns(ctx, s, runSpec{table: "steps", cols: stepRowCols, runs: []int64{run}}, scanStepRow)
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	rows, err := s.bigHeads(ctx, scanned)
	if err != nil {
		return nil, err
	}
	steps := store.AppendStepRows(nil, rows)
	calls, err := s.providerCalls(ctx, run, allSteps)
	if err != nil {
		return nil, err
	}
	store.StampSteps(steps, calls)
	return steps, nil
}

// scannedStep is a timeline row as read, and which of its text was left
// out for its size.
type scannedStep struct {
	row                store.StepRow
	run                int64
	bigTool, bigResult bool
}

func scanStepRow(r *sql.Rows) (scannedStep, error) {
	var v [7]any
	if err := r.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]); err != nil {
		return scannedStep{}, err
	}
	return cellsStepRow(anyCells(v[:]))
}

// cellsStepRow is a timeline row (id, run_id, step, stepRowCols) read
// either way (cells.go).
func cellsStepRow(x cells) (scannedStep, error) {
	var c colConv
	var st scannedStep
	st.row.RowID = cellInt(x, &c, 0)
	st.run = cellInt(x, &c, 1)
	st.row.Number = int(cellInt(x, &c, 2))
	st.row.Decision = cellStr(x, &c, 3)
	tool, result := x.nullStr(&c, 4), x.peekStr(&c, 5)
	st.row.Tokens = cellInt(x, &c, 6)
	// io-harness writes a step's usage total or 0 when the provider reported
	// none (run_from in src/run/step.rs: usage.map(total_tokens).unwrap_or(0)).
	st.row.TokensUnknown = st.row.Tokens == 0
	if c.err != nil {
		return scannedStep{}, c.err
	}
	st.bigTool, st.bigResult = !tool.Valid, !result.Valid
	st.row.RunID, st.row.ToolCall, st.row.Kind = idStr(st.run), tool.String, stepKind(st.row.Decision)
	st.row.ResultHead = strings.Clone(resultHead(result.String)) // the head alone is kept, not the whole result
	return st, nil
}

// readStepRows reads timeline rows (q selects id, run_id, step,
// stepRowCols).
func (s *Store) readStepRows(ctx context.Context, q string, args []any) ([]scannedStep, error) {
	var xs []scannedStep
	err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
		x, err := scanStepRow(r)
		xs = append(xs, x)
		return err
	})
	return xs, err
}

// bigHeads reads the heads of the tool calls and results stepRowCols left
// out, a piece at a time, and returns the rows.
func (s *Store) bigHeads(ctx context.Context, xs []scannedStep) ([]store.StepRow, error) {
	out := make([]store.StepRow, len(xs))
	for i, x := range xs {
		if x.bigTool {
			h, _, err := s.head(ctx, "steps", "tool_call", x.row.RowID, toolCallSummaryBytes)
			if err != nil {
				return nil, err
			}
			x.row.ToolCall = h
		}
		if x.bigResult {
			h, _, err := s.head(ctx, "steps", "result", x.row.RowID, timelineSQLBytes)
			if err != nil {
				return nil, err
			}
			x.row.ResultHead = resultHead(cutUTF8(strings.TrimLeft(h, "\n\r "), resultHeadBytes))
		}
		out[i] = x.row
	}
	return out, nil
}

func reverse[T any](xs []T) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// StepDetail reads everything recorded about one step row: its full text,
// the turn, ledger observations, edits, policy events and provider calls
// under the same step number.
func (s *Store) StepDetail(ctx context.Context, runID string, rowID int64) (store.StepDetail, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return store.StepDetail{}, err
	}
	var d store.StepDetail
	var runCol int64
	var prompt, result, tool cappedText
	err = s.read.QueryRowContext(ctx, "SELECT run_id, step, decision, tokens, "+capped("prompt")+", "+capped("result")+", "+capped("tool_call")+
		" FROM steps WHERE id = ?", rowID).
		Scan(&runCol, &d.Number, &d.Decision, &d.Tokens, &prompt.v, &prompt.n, &result.v, &result.n, &tool.v, &tool.n)
	if err == sql.ErrNoRows || (err == nil && runCol != run) {
		return store.StepDetail{}, storeErr(s.path, store.ErrNoSuchRun, fmt.Sprintf("run %s has no step row %d", runID, rowID), nil)
	}
	if err != nil {
		return store.StepDetail{}, mapDriverErr(s.path, err)
	}
	d.RowID, d.RunID, d.Kind = rowID, runID, stepKind(d.Decision)
	d.TokensUnknown = d.Tokens == 0 // as cellsStepRow says
	for _, f := range []struct {
		name, col string
		c         cappedText
		to        *string
	}{{"prompt", "prompt", prompt, &d.Prompt}, {"result", "result", result, &d.Result}, {"tool call", "tool_call", tool, &d.ToolCallFull}} {
		v, cut, err := s.detailText(ctx, "steps", f.col, rowID, f.c)
		if err != nil {
			return store.StepDetail{}, err
		}
		*f.to = v
		if cut {
			cutField(&d, f.name, f.c.n.Int64)
		}
	}
	d.ToolCall = d.ToolCallFull
	if err := s.stepExtras(ctx, run, &d); err != nil {
		return store.StepDetail{}, err
	}
	if d.Tools == nil && d.Kind == store.StepTurn {
		d.Tools = summaryCalls(d.ToolCallFull)
	}
	return d, nil
}

// stepExtras fills the per-step rows of other tables: every row of the run
// under the step's number, wherever in the table it was written (a resume
// writes rows for old steps late).
func (s *Store) stepExtras(ctx context.Context, run int64, d *store.StepDetail) error {
	x, err := s.extras(withStepRow(ctx, run, d.Number, d.RowID), run, d.Number)
	if err != nil {
		return err
	}
	x.fill(d)
	return nil
}

// firstStepNumber is the number of a run's first step. Step 0 is before it and
// never gets a row: io-harness's authorize_provider (src/run/gate.rs)
// checks the provider's host there, and a deferred answer stops the run
// with its policy event written and no step committed. The first step's
// detail carries those events too (each keeps its own Step), so the step
// pane shows them once the run has a step.
const firstStepNumber = 1

// stepExtra is what other tables hold about a run's steps, by step number.
type stepExtra struct {
	turns  map[int]sql.NullString
	obs    map[int][]store.Observation
	edits  map[int][]store.Edit
	policy map[int][]store.PolicyEvent
	calls  map[int][]store.ProviderCall
	cites  map[int][]store.Citation
	tools  map[int][]store.ServerToolCall
	// turnTools are the tool calls of each step's model turn.
	turnTools map[int][]store.ToolCall
	cutTurns  map[int]int64 // the whole length of turn texts cut to MaxDetailBytes
	// cutSide are the observation texts and edit hunks cut to their
	// heads, by step: each one's field name and whole length.
	cutSide map[int][]sideCut
}

type sideCut struct {
	name string
	size int64
}

// cut notes a side field of step cut to its head.
func (x *stepExtra) cut(step int, name string, size int64) {
	if x.cutSide == nil {
		x.cutSide = map[int][]sideCut{}
	}
	x.cutSide[step] = append(x.cutSide[step], sideCut{name, size})
}

// fill puts the extras of d's step into d.
func (x *stepExtra) fill(d *store.StepDetail) {
	n := d.Number
	if t, ok := x.turns[n]; ok {
		d.TurnText, d.HasTurnText = t.String, t.Valid
		if size, ok := x.cutTurns[n]; ok {
			cutField(d, "turn", size)
		}
	}
	d.Observations, d.Edits, d.Policy, d.ProviderCalls = x.obs[n], x.edits[n], x.policy[n], x.calls[n]
	if n == firstStepNumber && len(x.policy[0]) > 0 {
		d.Policy = append(slices.Clip(x.policy[0]), x.policy[n]...)
	}
	for _, c := range x.cutSide[n] {
		cutField(d, c.name, c.size)
	}
	d.Citations, d.ServerTools = x.cites[n], x.tools[n]
	d.Tools = x.turnTools[n]
}

// extras reads the rows of other tables under one step of a run, or under
// all of them (allSteps): one read of each table either way.
func (s *Store) extras(ctx context.Context, run int64, step int) (*stepExtra, error) {
	x := &stepExtra{turns: map[int]sql.NullString{}, obs: map[int][]store.Observation{}, edits: map[int][]store.Edit{},
		policy: map[int][]store.PolicyEvent{}, calls: map[int][]store.ProviderCall{}, cites: map[int][]store.Citation{},
		tools: map[int][]store.ServerToolCall{}, turnTools: map[int][]store.ToolCall{}, cutTurns: map[int]int64{}}
	if s.si().has("step_turns") {
		q, args := "SELECT rowid, step, "+capped("text")+", calls FROM step_turns WHERE run_id = ?", []any{run}
		if step != allSteps {
			q, args = q+" AND step = ?", append(args, step)
		}
		big := map[int]int64{}   // step → rowid of a turn text left out for its size
		sizes := map[int]int64{} // and its length
		err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
			var n int
			var rowid int64
			var text cappedText
			var calls sql.NullString
			err := r.Scan(&rowid, &n, &text.v, &text.n, &calls)
			x.turns[n] = text.v
			if text.big(store.MaxDetailBytes) {
				big[n], sizes[n] = rowid, text.n.Int64
			}
			x.turnTools[n] = turnCalls(calls.String)
			return err
		})
		if err != nil {
			return nil, err
		}
		for n, rowid := range big {
			h, _, err := s.head(ctx, "step_turns", "text", rowid, store.MaxDetailBytes)
			if err != nil {
				return nil, err
			}
			x.turns[n] = sql.NullString{String: h, Valid: true}
			x.cutTurns[n] = sizes[n]
		}
	}
	if s.si().has("ledger_observations") {
		type obsRow struct {
			o    store.Observation
			text cappedText
		}
		obs, err := readRuns(ctx, s, stepFilter(runSpec{table: "ledger_observations",
			cols: "kind, target, " + headAt("text", store.MaxDetailBytes), runs: []int64{run}}, step),
			func(r *sql.Rows) (obsRow, error) {
				var run int64
				var x obsRow
				var target sql.NullString
				err := r.Scan(&x.o.RowID, &run, &x.o.Step, &x.o.Kind, &target, &x.text.v, &x.text.n)
				x.o.Target = target.String
				return x, err
			})
		if err != nil {
			return nil, mapDriverErr(s.path, err)
		}
		for _, ob := range obs {
			var size int64
			if ob.o.Text, size, err = s.headOf(ctx, "ledger_observations", "text", ob.o.RowID, ob.text, store.MaxDetailBytes); err != nil {
				return nil, err
			}
			if size > 0 {
				x.cut(ob.o.Step, store.ObservationField(ob.o.RowID), size)
			}
			x.obs[ob.o.Step] = append(x.obs[ob.o.Step], ob.o)
		}
	}
	if s.si().has("edits") {
		hunk := s.si().col("edits", "hunk", "NULL")
		type editRow struct {
			step int
			e    store.Edit
			hunk cappedText
		}
		edits, err := readRuns(ctx, s, stepFilter(runSpec{table: "edits",
			cols: "tool, path, lines_added, lines_removed, " + headAt(hunk, store.MaxDetailBytes), runs: []int64{run}}, step),
			func(r *sql.Rows) (editRow, error) {
				var run int64
				var x editRow
				err := r.Scan(&x.e.RowID, &run, &x.step, &x.e.Tool, &x.e.Path, &x.e.LinesAdded, &x.e.LinesRemoved, &x.hunk.v, &x.hunk.n)
				return x, err
			})
		if err != nil {
			return nil, mapDriverErr(s.path, err)
		}
		for _, se := range edits {
			var size int64
			if se.e.Hunk, size, err = s.headOf(ctx, "edits", "hunk", se.e.RowID, se.hunk, store.MaxDetailBytes); err != nil {
				return nil, err
			}
			if size > 0 {
				x.cut(se.step, store.EditField(se.e.RowID), size)
			}
			x.edits[se.step] = append(x.edits[se.step], se.e)
		}
	}
	pol, err := s.policyEvents(ctx, run, step)
	if err != nil {
		return nil, err
	}
	if step == firstStepNumber {
		before, err := s.policyEvents(ctx, run, 0)
		if err != nil {
			return nil, err
		}
		pol = append(before, pol...)
	}
	for _, p := range pol {
		x.policy[p.Step] = append(x.policy[p.Step], p)
	}
	calls, err := s.providerCalls(ctx, run, step)
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		x.calls[c.Step] = append(x.calls[c.Step], c)
	}
	cites, err := s.citations(ctx, run, step)
	if err != nil {
		return nil, err
	}
	for _, c := range cites {
		x.cites[c.Step] = append(x.cites[c.Step], c)
	}
	tools, err := s.serverTools(ctx, run, step)
	if err != nil {
		return nil, err
	}
	for _, t := range tools {
		x.tools[t.Step] = append(x.tools[t.Step], t)
	}
	return x, nil
}

// StepDetails reads every timeline step's detail of a run (Prompt left
// empty): its rows once, and each other table once, for the whole run.
func (s *Store) StepDetails(ctx context.Context, runID string) ([]store.StepDetail, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	steps, err := s.Steps(ctx, runID)
	if err != nil {
		return nil, err
	}
	type full struct{ result, tool cappedText }
	rows, err := readRuns(ctx, s, runSpec{table: "steps", cols: capped("result") + ", " + capped("tool_call"), runs: []int64{run}},
		func(r *sql.Rows) (struct {
			id int64
			f  full
		}, error) {
			var x struct {
				id int64
				f  full
			}
			var rn int64
			var n int
			err := r.Scan(&x.id, &rn, &n, &x.f.result.v, &x.f.result.n, &x.f.tool.v, &x.f.tool.n)
			return x, err
		})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	byRow := make(map[int64]full, len(rows))
	for _, r := range rows {
		byRow[r.id] = r.f
	}
	x, err := s.extras(ctx, run, allSteps)
	if err != nil {
		return nil, err
	}
	out := make([]store.StepDetail, 0, len(steps))
	for _, st := range steps {
		d := store.StepDetail{Step: st}
		if f, ok := byRow[st.RowID]; ok && !st.Pending {
			var cut bool
			if d.Result, cut, err = s.detailText(ctx, "steps", "result", st.RowID, f.result); err != nil {
				return nil, err
			} else if cut {
				cutField(&d, "result", f.result.n.Int64)
			}
			if d.ToolCallFull, cut, err = s.detailText(ctx, "steps", "tool_call", st.RowID, f.tool); err != nil {
				return nil, err
			} else if cut {
				cutField(&d, "tool call", f.tool.n.Int64)
			}
		}
		x.fill(&d)
		out = append(out, d)
	}
	return out, nil
}

// ContextSamples returns the run's per-turn context sizes ("assembled"
// events): the estimate beside the provider's count, which may be missing.
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return nil, err
	}
	if !s.si().has("context_events") {
		return nil, nil
	}
	var big []int // samples whose detail is read from the store, after the rows
	out, err := readRuns(ctx, s, runSpec{table: "context_events",
		cols: "est_tokens, reported_tokens, " + eventDetail, where: "kind = 'assembled'", runs: []int64{run}},
		func(r *sql.Rows) (sampleRow, error) {
			return scanSample(r)
		})
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	samples := make([]store.ContextSample, len(out))
	for i, x := range out {
		samples[i] = x.c
		if x.detail.big(timelineSQLBytes) {
			big = append(big, i)
		}
	}
	for _, i := range big {
		c := &samples[i]
		if c.Detail, c.DetailBytes, err = s.detailHead(ctx, c.RowID, out[i].detail); err != nil {
			return nil, err
		}
	}
	return samples, nil
}

// eventDetail is a context event's detail, read for its head (headAt):
// Store::record_context_event (src/state/trace.rs) writes whatever the
// event carries — a question's text, an operator's answer.
var eventDetail = headAt("detail", store.MaxEventDetailBytes)

// detailHead is a context event's detail head and, when it is cut, its
// whole length, from what eventDetail read. A detail too big for SQL is
// read from the store: call it after the rows are let go.
func (s *Store) detailHead(ctx context.Context, rowid int64, c cappedText) (string, int64, error) {
	return s.headOf(ctx, "context_events", "detail", rowid, c, store.MaxEventDetailBytes)
}

// sampleRow is a context sample as read, with its detail as eventDetail
// read it.
type sampleRow struct {
	c      store.ContextSample
	run    int64
	detail cappedText
}

// scanSample reads id, run_id, step, est_tokens, reported_tokens and
// eventDetail. A detail SQL did read is set (cut to its head) here; one
// it left out for its size (detail.big) is left to detailHead.
func scanSample(r *sql.Rows) (sampleRow, error) {
	var x sampleRow
	var est, rep sql.NullInt64
	err := r.Scan(&x.c.RowID, &x.run, &x.c.Step, &est, &rep, &x.detail.v, &x.detail.n)
	c := &x.c
	c.RunID, c.Estimated, c.NoEstimate, c.Reported = idStr(x.run), est.Int64, !est.Valid, nullInt(rep)
	if err == nil && !x.detail.big(timelineSQLBytes) {
		c.Detail, c.DetailBytes, err = cutDetail(x.detail)
	}
	return x, err
}

// cutDetail is what detailHead makes of a detail SQL read.
func cutDetail(c cappedText) (string, int64, error) {
	t := cutUTF8(c.v.String, store.MaxEventDetailBytes)
	if c.n.Valid && int64(len(t)) < c.n.Int64 {
		return t, c.n.Int64, nil
	}
	return t, 0, nil
}

// newSample is a context_events row as a refresh reads it (id, run_id,
// step, est_tokens, reported_tokens, the detail and its length, kind):
// only an assembled row is a sample, the others are counted past.
type newSample struct {
	sampleRow
	est, rep  sql.NullInt64
	assembled bool
}

func cellsNewSample(x cells) (newSample, error) {
	var c colConv
	var y newSample
	y.c.RowID = cellInt(x, &c, 0)
	y.run = cellInt(x, &c, 1)
	y.c.Step = int(cellInt(x, &c, 2))
	y.est, y.rep = x.nullInt(&c, 3), x.nullInt(&c, 4)
	y.detail.v, y.detail.n = x.nullStr(&c, 5), x.nullInt(&c, 6)
	kind := x.peekStr(&c, 7)
	if !kind.Valid {
		c.fail(errNullNotNullable)
	}
	y.assembled = kind.String == ContextAssembled
	return y, c.err
}

// readNewSamples reads a refresh's context rows.
func (s *Store) readNewSamples(ctx context.Context, q string, args []any) ([]newSample, error) {
	var xs []newSample
	err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
		var v [8]any
		if err := r.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); err != nil {
			return err
		}
		y, err := cellsNewSample(anyCells(v[:]))
		xs = append(xs, y)
		return err
	})
	return xs, err
}
