package codex_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

const pendingID = "01a2430c-0000-7000-8000-00000000186a"

// foldNew folds the rows past the largest row id seen onto steps, as the
// explorer does (tui agentView.newRows and fold).
func foldNew(steps []store.Step, seen *int64, rows []store.StepRow) []store.Step {
	var fresh []store.StepRow
	for _, r := range rows {
		if r.RowID > *seen {
			fresh = append(fresh, r)
			*seen = r.RowID
		}
	}
	return store.AppendStepRows(steps, fresh)
}

// TestRunningCallIsAPendingStep: while Codex runs a slow shell call the
// turn is on the timeline as a pending step with its call, running; its
// output and token count commit it in place, with its result and tokens.
func TestRunningCallIsAPendingStep(t *testing.T) {
	ctx := context.Background()
	head := [][]byte{
		[]byte(`{"timestamp":"2026-12-04T18:35:49.104Z","type":"session_meta","payload":{"id":"` + pendingID + `","timestamp":"2026-12-04T18:35:49.076Z","cwd":"/w","source":"exec","model_provider":"mock"}}` + "\n"),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.200Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n"),
		[]byte(`{"timestamp":"2026-12-04T18:35:49.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Watch me write a file."}]}}` + "\n"),
	}
	root, file := sessionsTree(t, pendingID, head)
	src := open(t, root)
	steps, err := src.Steps(ctx, pendingID)
	if err != nil || len(steps) != 0 {
		t.Fatalf("before any turn: %+v %v", steps, err)
	}
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seen int64

	appendTo(t, file, []byte(`{"timestamp":"2026-12-04T18:35:50.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 6; echo hi > out.txt\"}","call_id":"call_1"}}`+"\n"))
	ch, cur, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	steps = foldNew(steps, &seen, ch.Steps)
	if len(steps) != 1 || !steps[0].Pending || steps[0].Number != 1 || steps[0].Decision != "running" ||
		!strings.Contains(steps[0].ToolCall, "sleep 6") {
		t.Fatalf("while the call runs the timeline holds %+v (rows %+v); want step 1 pending, running, with its call", steps, ch.Steps)
	}
	pendingRow := steps[0].RowID
	// A reader that loads the run now sees the same placeholder, and its
	// detail reads.
	whole, err := src.Steps(ctx, pendingID)
	if err != nil || len(whole) != 1 || !whole[0].Pending || whole[0].RowID != pendingRow || whole[0].Decision != "running" {
		t.Fatalf("Steps while the call runs: %+v %v", whole, err)
	}
	d, err := src.StepDetail(ctx, pendingID, pendingRow)
	if err != nil || d.RowID != pendingRow || !d.Pending || !strings.Contains(d.ToolCallFull, "sleep 6") || !strings.Contains(d.Result, "running") {
		t.Fatalf("the pending step's detail: %+v %v", d, err)
	}
	// The same cursor's next read has nothing new: the placeholder went out once.
	if again, _, err := src.Changes(ctx, cur); err != nil || len(again.Steps) != 0 {
		t.Fatalf("nothing appended, rows %+v %v", again.Steps, err)
	}

	appendTo(t, file, []byte(`{"timestamp":"2026-12-04T18:35:56.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Process exited with code 0\nOutput:\n"}}`+"\n"+
		`{"timestamp":"2026-12-04T18:35:56.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386},"last_token_usage":{"input_tokens":4321,"output_tokens":65,"total_tokens":4386},"model_context_window":272000}}}`+"\n"))
	ch, _, err = src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	steps = foldNew(steps, &seen, ch.Steps)
	if len(steps) != 1 || steps[0].Pending || steps[0].Number != 1 || steps[0].Decision != "tool" || steps[0].Tokens != 4386 ||
		!strings.Contains(steps[0].ResultHead, "Process exited with code 0") || !strings.Contains(steps[0].ToolCall, "sleep 6") {
		t.Fatalf("after its output the timeline holds %+v (rows %+v); want step 1 committed with its result and tokens", steps, ch.Steps)
	}
	committedRow := steps[0].RowID
	if committedRow <= pendingRow {
		t.Fatalf("the committed row %d is not past the placeholder %d", committedRow, pendingRow)
	}
	whole, err = src.Steps(ctx, pendingID)
	if err != nil || len(whole) != 1 || whole[0].Pending || whole[0].RowID != committedRow {
		t.Fatalf("Steps after the output: %+v %v", whole, err)
	}
	for _, row := range []int64{pendingRow, committedRow} {
		d, err := src.StepDetail(ctx, pendingID, row)
		if err != nil || d.RowID != row || d.Pending || d.Number != 1 || !strings.Contains(d.Result, "Process exited") {
			t.Fatalf("detail of row %d after the output: %+v %v", row, d, err)
		}
	}
}
