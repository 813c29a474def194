package claudecode

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// foldingReader reads a run as the explorer does: Steps once, then the
// rows of each Changes past the largest row id it has seen, folded with
// store.AppendStepRows.
type foldingReader struct {
	src   store.Source
	run   string
	cur   store.Cursor
	steps []store.Step
	seen  int64
}

func newFoldingReader(t *testing.T, src store.Source, run string) *foldingReader {
	t.Helper()
	ctx := context.Background()
	cur, err := src.Head(ctx)
	must(t, err)
	steps, err := src.Steps(ctx, run)
	must(t, err)
	r := &foldingReader{src: src, run: run, cur: cur, steps: steps}
	for _, st := range steps {
		r.seen = max(r.seen, st.RowID)
		for _, f := range st.Retries {
			r.seen = max(r.seen, f.RowID)
		}
	}
	return r
}

func (r *foldingReader) refresh(t *testing.T) {
	t.Helper()
	ch, next, err := r.src.Changes(context.Background(), r.cur)
	must(t, err)
	r.cur = next
	var rows []store.StepRow
	for _, row := range ch.Steps {
		if row.RunID == r.run && row.RowID > r.seen {
			rows = append(rows, row)
			r.seen = row.RowID
		}
	}
	r.steps = store.AppendStepRows(r.steps, rows)
}

// A turn whose call runs is a pending step, for a reader that was open
// before it began (its placeholder comes through Changes) and for one that
// opened while it ran (Steps); its committed row replaces the placeholder
// for both once the result is written, and the step's detail answers to
// either row id.
func TestRunningTurnCommitsForAFoldingReader(t *testing.T) {
	cfg, sid := fixtureStore(t)
	ctx := context.Background()
	src := open(t, cfg)
	file := filepath.Join(cfg, "projects", "-home-dev-work-claude", sid+".jsonl")

	before := newFoldingReader(t, src, sid)
	appendTo(t, file, toolTurn)
	during := newFoldingReader(t, src, sid)
	before.refresh(t)
	for name, r := range map[string]*foldingReader{"open before": before, "opened during": during} {
		last := r.steps[len(r.steps)-1]
		if len(r.steps) != 4 || !last.Pending || last.Number != 4 || last.Decision != "running" || last.ToolCall != `Bash {"command":"ls"}` {
			t.Fatalf("%s, while the call runs: %+v", name, r.steps)
		}
	}
	placeholder := during.steps[3].RowID
	if before.steps[3].RowID != placeholder {
		t.Fatalf("the placeholder's row id: %d through Changes, %d from Steps", before.steps[3].RowID, placeholder)
	}

	appendTo(t, file, toolResult)
	before.refresh(t)
	during.refresh(t)
	for name, r := range map[string]*foldingReader{"open before": before, "opened during": during} {
		last := r.steps[len(r.steps)-1]
		if len(r.steps) != 4 || last.Pending || last.Number != 4 || last.Decision != "tool_use" || last.ResultHead != "a.txt" ||
			last.Tokens != 19 || last.RowID <= placeholder {
			t.Fatalf("%s, after the result: %+v", name, r.steps)
		}
	}
	steps, err := src.Steps(ctx, sid)
	must(t, err)
	if got := steps[3]; got.Pending || got.RowID != during.steps[3].RowID {
		t.Fatalf("Steps after the result: %+v, Changes gave row %d", got, during.steps[3].RowID)
	}
	for _, id := range []int64{placeholder, steps[3].RowID} {
		d, err := src.StepDetail(ctx, sid, id)
		must(t, err)
		if d.Number != 4 || d.Pending || d.Result != "a.txt" {
			t.Fatalf("detail at row %d: %+v", id, d.Step)
		}
	}
	if _, err := src.StepDetail(ctx, sid, steps[3].RowID+1); err == nil {
		t.Fatal("a row id of no step resolved")
	}
	// The provider call and context sample keep one row id, running or
	// committed: read twice, they replace themselves.
	calls, err := src.ProviderCalls(ctx, sid)
	must(t, err)
	samples, err := src.ContextSamples(ctx, sid)
	must(t, err)
	if len(calls) != 4 || calls[3].RowID != placeholder || *calls[3].TotalTokens != 19 ||
		len(samples) != 4 || samples[3].RowID != placeholder || *samples[3].Reported != 17 {
		t.Fatalf("calls %+v samples %+v", calls, samples)
	}
	st, err := src.RunStats(ctx, []string{sid})
	must(t, err)
	if st[sid].Steps != 4 || st[sid].Through != steps[3].RowID {
		t.Fatalf("counts after the result: %+v", st[sid])
	}
}
