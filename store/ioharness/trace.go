package ioharness

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// CanonicalTrace is io-harness's comparable form of a run, byte for byte
// what Store::canonical_trace (src/state/trace.rs) returns: a line per steps
// row (retries included) ordered by step and then row id, then a line per
// context event in row order, each number printed as that function reads it
// (the step as u32, tokens as u64). It leaves out ids, timestamps and every
// other table, so two runs of the same task compare line by line. Every row
// of the run is read (rows.go), wherever in the table it sits.
func (s *Store) CanonicalTrace(ctx context.Context, runID string) (string, error) {
	var b strings.Builder
	if err := s.WriteCanonicalTrace(ctx, runID, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// traceBatch is how many step rows WriteCanonicalTrace holds at once.
const traceBatch = 256

// WriteCanonicalTrace writes CanonicalTrace's text to w: the rows' ids and
// steps are read first, then their text traceBatch rows at a time in trace
// order, each batch written and let go, so a trace with a 200 MB result
// holds that result once, not the whole trace twice (store.TraceWriter).
func (s *Store) WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error {
	run, err := s.runKey(runID)
	if err != nil {
		return err
	}
	type stepRow struct{ id, step int64 }
	steps, err := readRuns(ctx, s, runSpec{table: "steps", runs: []int64{run}},
		func(r *sql.Rows) (stepRow, error) {
			var l stepRow
			var run int64
			err := r.Scan(&l.id, &run, &l.step)
			return l, err
		})
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].step < steps[j].step })
	bw := bufio.NewWriterSize(w, 64<<10)
	// The rows' text in batches of traceBatch rows, in trace order: a batch
	// is held while it is written, then let go. A field longer than
	// timelineSQLBytes is not in the batch: it is copied from the store to
	// w a piece at a time (bigfields.go), so no field is ever held whole.
	type text struct {
		tokens               int64
		decision             string
		tool, prompt, result cappedText
	}
	for at := 0; at < len(steps); at += traceBatch {
		batch := steps[at:min(at+traceBatch, len(steps))]
		ids := make([]int64, len(batch))
		for i, l := range batch {
			ids[i] = l.id
		}
		texts := make(map[int64]*text, len(batch))
		err := s.eachRow(ctx, fmt.Sprintf("SELECT id, tokens, decision, %s, %s, %s FROM steps WHERE id IN (%s)",
			cappedAt("tool_call", timelineSQLBytes), cappedAt("prompt", timelineSQLBytes), cappedAt("result", timelineSQLBytes), sqlitex.IDList(ids)), nil,
			func(r *sql.Rows) error {
				var id int64
				t := &text{}
				err := r.Scan(&id, &t.tokens, &t.decision, &t.tool.v, &t.tool.n, &t.prompt.v, &t.prompt.n, &t.result.v, &t.result.n)
				texts[id] = t
				return err
			})
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		for _, l := range batch {
			t := texts[l.id]
			if t == nil {
				continue // deleted since the ids were read
			}
			fmt.Fprintf(bw, "step %d | tokens %d | decision %s", uint32(l.step), uint64(t.tokens), t.decision)
			for _, f := range []struct {
				label, col string
				c          cappedText
			}{{" | tool_call ", "tool_call", t.tool}, {" | prompt ", "prompt", t.prompt}, {" | result ", "result", t.result}} {
				if _, err := bw.WriteString(f.label); err != nil {
					return err
				}
				if err := s.writeField(ctx, bw, "steps", f.col, l.id, f.c); err != nil {
					return err
				}
			}
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
			delete(texts, l.id)
		}
	}
	if s.si().has("context_events") {
		// Each detail is written whole: a short one as SQL hands it over,
		// one longer than MaxEventDetailBytes copied from the store a
		// piece at a time (writeField), so the lines held stay small.
		type line struct {
			id, step int64
			kind     string
			detail   cappedText
		}
		lines, err := readRuns(ctx, s, runSpec{table: "context_events", runs: []int64{run}, cols: "kind, " + cappedAt("detail", store.MaxEventDetailBytes)},
			func(r *sql.Rows) (line, error) {
				var l line
				var run int64
				err := r.Scan(&l.id, &run, &l.step, &l.kind, &l.detail.v, &l.detail.n)
				return l, err
			})
		if err != nil {
			return mapDriverErr(s.path, err)
		}
		for _, l := range lines {
			if _, err := fmt.Fprintf(bw, "context %d | %s | ", uint32(l.step), l.kind); err != nil {
				return err
			}
			if err := s.writeField(ctx, bw, "context_events", "detail", l.id, l.detail); err != nil {
				return err
			}
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// writeField writes a capped field whole: as read, or copied from the
// store a piece at a time when it was left out for its size.
func (s *Store) writeField(ctx context.Context, w io.Writer, table, col string, rowid int64, c cappedText) error {
	if !c.leftOut() {
		_, err := io.WriteString(w, c.v.String)
		return err
	}
	out := &seenWriter{w: w}
	_, _, err := sqlitex.CopyField(ctx, s.read, table, col, rowid, out, -1)
	if out.err != nil {
		return out.err // where it goes failed (a closed pipe), not the store
	}
	return mapDriverErr(s.path, err)
}

// seenWriter keeps its writer's error apart from the store's.
type seenWriter struct {
	w   io.Writer
	err error
}

func (s *seenWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}
