package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// CanonicalTrace is io-harness's comparable form of a run, byte for byte
// what Store::canonical_trace (src/state/trace.rs) returns: a line per steps
// row (retries included) ordered by step and then row id, then a line per
// context event in row order, each number printed as that function reads it
// (the step as u32, tokens as u64). It leaves out ids, timestamps and every
// other table, so two runs of the same task compare line by line. Every row
// of the run is read (rows.go), wherever in the table it sits.
func (s *Store) CanonicalTrace(ctx context.Context, runID string) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	type stepLine struct {
		id   int64
		step int64
		text string
	}
	steps, err := readRuns(ctx, s, runSpec{table: "steps", runs: []int64{run},
		cols: "tokens, decision, tool_call, prompt, result"},
		func(r *sql.Rows) (stepLine, error) {
			var l stepLine
			var run, tokens int64
			var decision, tool, prompt, result string
			err := r.Scan(&l.id, &run, &l.step, &tokens, &decision, &tool, &prompt, &result)
			l.text = fmt.Sprintf("step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n",
				uint32(l.step), uint64(tokens), decision, tool, prompt, result)
			return l, err
		})
	if err != nil {
		return "", mapDriverErr(s.path, err)
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].step < steps[j].step })
	var b strings.Builder
	for _, l := range steps {
		b.WriteString(l.text)
	}
	if s.si().has("context_events") {
		lines, err := readRuns(ctx, s, runSpec{table: "context_events", runs: []int64{run}, cols: "kind, detail"},
			func(r *sql.Rows) (string, error) {
				var id, run, step int64
				var kind string
				var detail sql.NullString
				err := r.Scan(&id, &run, &step, &kind, &detail)
				return fmt.Sprintf("context %d | %s | %s\n", uint32(step), kind, detail.String), err
			})
		if err != nil {
			return "", mapDriverErr(s.path, err)
		}
		for _, l := range lines {
			b.WriteString(l)
		}
	}
	return b.String(), nil
}
