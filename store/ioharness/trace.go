package ioharness

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// CanonicalTrace is io-harness's comparable form of a run: a line per step
// row (retries included) ordered by step, then a line per context event.
// It leaves out ids, timestamps and every other table, so two runs of the
// same task can be compared line by line.
func (s *Store) CanonicalTrace(ctx context.Context, runID string) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	type stepLine struct {
		id   int64
		step int
		text string
	}
	steps, err := scanBack(ctx, s.read, scanSpec{table: "steps", runs: []int64{run},
		cols: "tokens, decision, tool_call, prompt, result", done: firstStep},
		func(r *sql.Rows) (stepLine, int64, int, error) {
			var l stepLine
			var run, tokens int64
			var decision, tool, prompt, result string
			err := r.Scan(&l.id, &run, &l.step, &tokens, &decision, &tool, &prompt, &result)
			l.text = fmt.Sprintf("step %d | tokens %d | decision %s | tool_call %s | prompt %s | result %s\n",
				l.step, tokens, decision, tool, prompt, result)
			return l, run, l.step, err
		})
	if err != nil {
		return "", mapDriverErr(s.path, err)
	}
	sort.Slice(steps, func(i, j int) bool {
		if steps[i].step != steps[j].step {
			return steps[i].step < steps[j].step
		}
		return steps[i].id < steps[j].id
	})
	var b strings.Builder
	for _, l := range steps {
		b.WriteString(l.text)
	}
	if s.schema.has("context_events") {
		lines, err := scanBack(ctx, s.read, scanSpec{table: "context_events", runs: []int64{run},
			cols: "kind, detail", done: firstStep},
			func(r *sql.Rows) (string, int64, int, error) {
				var id, run int64
				var step int
				var kind string
				var detail sql.NullString
				err := r.Scan(&id, &run, &step, &kind, &detail)
				return fmt.Sprintf("context %d | %s | %s\n", step, kind, detail.String), run, step, err
			})
		if err != nil {
			return "", mapDriverErr(s.path, err)
		}
		reverse(lines)
		for _, l := range lines {
			b.WriteString(l)
		}
	}
	return b.String(), nil
}
