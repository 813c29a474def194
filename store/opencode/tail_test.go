package opencode_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// The rows a turn goes through as opencode writes it (SessionProcessor in
// packages/opencode/src/session/processor.ts: the assistant message
// first, then its parts, a tool part UPDATEd in place from pending to
// running to completed, the step-finish part, and last the message again
// with time.completed and finish).
const (
	userMsg = `INSERT INTO message VALUES ('msg_zz1', '%[1]s', 1796409700000, 1796409700000, '{"role":"user","time":{"created":1796409700000}}');
INSERT INTO part VALUES ('prt_zz1', 'msg_zz1', '%[1]s', 1796409700001, 1796409700001, '{"type":"text","text":"Once more."}');`
	openTurn = `INSERT INTO message VALUES ('msg_zz2', '%[1]s', 1796409700010, 1796409700010,
  '{"role":"assistant","modelID":"mock-model","providerID":"mock","time":{"created":1796409700010}}');
INSERT INTO part VALUES ('prt_zz2', 'msg_zz2', '%[1]s', 1796409700020, 1796409700020, '{"type":"step-start"}');
INSERT INTO part VALUES ('prt_zz3', 'msg_zz2', '%[1]s', 1796409700030, 1796409700030,
  '{"type":"tool","tool":"bash","callID":"call_zz","state":{"status":"pending","input":{"command":"echo ok"}}}');`
	running    = `UPDATE part SET time_updated = 1796409700040, data = json_set(data, '$.state.status', 'running') WHERE id = 'prt_zz3';`
	finishTurn = `UPDATE part SET time_updated = 1796409700050, data = json_set(data, '$.state.status', 'completed', '$.state.output', 'ok' || char(10)) WHERE id = 'prt_zz3';
INSERT INTO part VALUES ('prt_zz4', 'msg_zz2', '%[1]s', 1796409700060, 1796409700060,
  '{"type":"step-finish","reason":"stop","tokens":{"total":552,"input":500,"output":7,"reasoning":3,"cache":{"read":40,"write":2}}}');
UPDATE message SET time_updated = 1796409700070, data = json_set(data, '$.time.completed', 1796409700070, '$.finish', 'stop') WHERE id = 'msg_zz2';`
)

func decisions(rows []store.StepRow) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%d:%s", r.Number, r.Decision))
	}
	return strings.Join(out, "|")
}

// TestForeignWriterReachesChanges: Python's sqlite3, another process,
// writes a turn while vigil reads. The unfinished turn is one pending row
// (Changes and Steps), its running call saying so, and the finished turn
// comes through Changes whole, with the provider's figures.
func TestForeignWriterReachesChanges(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ch, _, err := src.Changes(ctx, head); err != nil || !ch.Empty() {
		t.Fatalf("nothing written yet: %+v %v", ch, err)
	}
	foreign(t, db, fmt.Sprintf(userMsg+openTurn, rootID), "exec")
	ch, c1, err := src.Changes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if decisions(ch.Steps) != "3:pending bash" || !ch.Steps[0].Pending || len(ch.Runs) != 1 || ch.Runs[0].ID != rootID || ch.Runs[0].Status != store.StatusRunning || ch.Runs[0].Ended() {
		t.Fatalf("an unfinished turn: rows %q, runs %+v", decisions(ch.Steps), ch.Runs)
	}
	foreign(t, db, running, "exec")
	steps, err := src.Steps(ctx, rootID)
	if err != nil || len(steps) != 4 || steps[3].Decision != "running bash" || steps[3].Number != 3 || !steps[3].Pending {
		t.Fatalf("the live timeline: %+v %v", steps, err)
	}
	// The unfinished session's counts are RunStats's, up to Through.
	runs, err := src.Runs(ctx)
	if err != nil || runs[0].ID != rootID || runs[0].StatsKnown || runs[0].Summary != nil {
		t.Fatalf("runs while the turn is written: %+v %v", runs, err)
	}
	before, err := src.RunStats(ctx, []string{rootID})
	if err != nil || before[rootID].Steps != 2 || before[rootID].Tokens != 2560 || before[rootID].Through == 0 {
		t.Fatalf("stats while the turn is written: %+v %v", before, err)
	}
	foreign(t, db, fmt.Sprintf(finishTurn, rootID), "exec")
	ch, _, err = src.Changes(ctx, c1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Steps) > 0 && ch.Steps[0].RowID <= before[rootID].Through {
		t.Errorf("the new turn's row %d is at or below the count's %d", ch.Steps[0].RowID, before[rootID].Through)
	}
	after, err := src.RunStats(ctx, []string{rootID, "ses_nope"})
	if err != nil || len(after) != 1 || after[rootID].Steps != 3 || after[rootID].Tokens != 2560+552 {
		t.Errorf("stats after the turn: %+v %v", after, err)
	}
	if got := decisions(ch.Steps); got != "3:calls bash|3:result bash" || ch.Steps[1].ResultHead != "ok" || ch.Steps[0].Tokens != 552 {
		t.Fatalf("the finished turn: %q %+v", got, ch.Steps)
	}
	if len(ch.Calls) != 1 {
		t.Fatalf("calls %+v", ch.Calls)
	}
	// getUsage stored input 500 without the 40 read and 2 written from
	// cache, and output 7 without 3 of reasoning: the provider said 542
	// and 10.
	c := ch.Calls[0]
	if *c.PromptTokens != 542 || *c.CompletionTokens != 10 || *c.TotalTokens != 552 || *c.CacheReadTokens != 40 ||
		*c.CacheWriteTokens != 2 || *c.ReasoningTokens != 3 || c.Step != 3 {
		t.Errorf("provider call %+v", c)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].Status != store.StatusCompleted || ch.Runs[0].Summary == nil {
		t.Errorf("runs after the turn: %+v", ch.Runs)
	}
	// Cursors are values: the head still reads everything since it.
	again, _, err := src.Changes(ctx, head)
	if err != nil || decisions(again.Steps) != "3:calls bash|3:result bash" {
		t.Errorf("from the head again: %q %v", decisions(again.Steps), err)
	}
}

// TestMalformedRowIsOneProblem: a part whose data is not JSON is one
// problem naming its table, row and id; its turn and session still show.
func TestMalformedRowIsOneProblem(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	foreign(t, db, fmt.Sprintf(`INSERT INTO message VALUES ('msg_zz9', '%[1]s', 1796409700000, 1796409700000,
  '{"role":"assistant","time":{"created":1796409700000,"completed":1796409700009},"finish":"stop"}');
INSERT INTO part VALUES ('prt_zz8', 'msg_zz9', '%[1]s', 1796409700001, 1796409700001, '{"type":"text","text":"still here"}');
INSERT INTO part VALUES ('prt_zz9', 'msg_zz9', '%[1]s', 1796409700002, 1796409700002, '{"type":"tool", "tool":');`, childID), "exec")
	ch, _, err := src.Changes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := decisions(ch.Steps); got != "3:still here" {
		t.Errorf("rows %q", got)
	}
	steps, err := src.Steps(ctx, childID)
	if err != nil || len(steps) != 4 {
		t.Fatalf("child steps %+v %v", steps, err)
	}
	probs := src.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), "part row") || !strings.Contains(probs[0].Error(), "prt_zz9") {
		t.Fatalf("problems %v", probs)
	}
	if _, err := src.Runs(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStatusFromTheLastReply: the session's state follows its last
// assistant message as opencode's prompt loop reads it (SessionPrompt.loop
// in packages/opencode/src/session/prompt.ts goes on after "tool-calls";
// an abort is MessageAbortedError in message-v2.ts).
func TestStatusFromTheLastReply(t *testing.T) {
	for _, c := range []struct {
		name, data string
		status     store.Status
		outcome    store.Outcome
	}{
		{"aborted", `{"role":"assistant","time":{"created":1796409700000,"completed":1796409700009},"error":{"name":"MessageAbortedError","data":{"message":"aborted"}}}`,
			store.StatusCompleted, store.OutcomeCancelled},
		{"api error", `{"role":"assistant","time":{"created":1796409700000},"error":{"name":"APIError","data":{"message":"boom"}}}`,
			store.StatusFailed, store.OutcomeFailed},
		{"tool calls", `{"role":"assistant","time":{"created":1796409700000,"completed":1796409700009},"finish":"tool-calls"}`,
			store.StatusRunning, ""},
		{"user prompt", `{"role":"user","time":{"created":1796409700000}}`, store.StatusRunning, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := fixtureDB(t)
			foreign(t, db, fmt.Sprintf(`INSERT INTO message VALUES ('msg_zz9', '%s', 1796409700000, 1796409700000, '%s');`, childID, c.data), "exec")
			src := browse(t, db)
			r, err := src.Run(context.Background(), childID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != c.status || r.Outcome != c.outcome || (r.Summary != nil) != c.status.Ended() {
				t.Errorf("status %q outcome %q summary %+v; want %q %q", r.Status, r.Outcome, r.Summary, c.status, c.outcome)
			}
		})
	}
}

// TestRewoundDatabaseIsAReset: rows gone from under the cursor's marks
// (opencode deleting its newest session, whose messages and parts go with
// it) are a Reset, never a guess. A file renamed over the path is the
// watcher's to tell: the open connection keeps reading the file it opened
// (internal/sqlitex, reader.Connect).
func TestRewoundDatabaseIsAReset(t *testing.T) {
	db := fixtureDB(t)
	src := browse(t, db)
	ctx := context.Background()
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	foreign(t, db, `DELETE FROM part WHERE session_id = '`+childID+`';
DELETE FROM message WHERE session_id = '`+childID+`';
DELETE FROM session WHERE id = '`+childID+`';`, "exec")
	ch, next, err := src.Changes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Reset || len(ch.Steps) != 0 || next != head {
		t.Fatalf("changes %+v, want a reset and the cursor back", ch)
	}
}

// TestTimelineReadsHeadsDetailReadsWhole: the timeline takes a tool's
// output only up to its head, the row's detail reads its message whole.
func TestTimelineReadsHeadsDetailReadsWhole(t *testing.T) {
	db := fixtureDB(t)
	long := strings.Repeat("y", 50000)
	foreign(t, db, fmt.Sprintf(`INSERT INTO message VALUES ('msg_zz9', '%[1]s', 1796409700000, 1796409700000,
  '{"role":"assistant","time":{"created":1796409700000,"completed":1796409700009},"finish":"stop"}');
INSERT INTO part VALUES ('prt_zz7', 'msg_zz9', '%[1]s', 1796409700001, 1796409700001, '{"type":"step-start"}');
INSERT INTO part VALUES ('prt_zz8', 'msg_zz9', '%[1]s', 1796409700001, 1796409700001,
  '{"type":"tool","tool":"read","callID":"call_long","state":{"status":"completed","input":{"filePath":"%[2]s"},"output":"%[2]s"}}');`, childID, long), "exec")
	src := browse(t, db)
	ctx := context.Background()
	steps, err := src.Steps(ctx, childID)
	if err != nil || len(steps) != 5 {
		t.Fatalf("steps %+v %v", steps, err)
	}
	row := steps[4]
	if row.Decision != "result read" || len(row.ResultHead) > 210 || len(steps[3].ToolCall) > 210 || !strings.HasPrefix(steps[3].ToolCall, `read {"filePath":"yyy`) {
		t.Errorf("row %+v / turn %+v", row, steps[3])
	}
	d, err := src.StepDetail(ctx, childID, row.RowID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Result != long || len(d.Tools) != 1 || d.Tools[0].Arguments != `{"filePath":"`+long+`"}` {
		t.Errorf("detail: result %d bytes, tools %d", len(d.Result), len(d.Tools))
	}
	if _, err := src.StepDetail(ctx, childID, 1<<40); err == nil {
		t.Error("a row that is not there has a detail")
	}
	if _, err := src.Steps(ctx, "ses_nope"); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("an unknown session: %v", err)
	}
}
