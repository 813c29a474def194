package starweaver

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// writerFx opens an existing database as Starweaver's own process would,
// to append to it while vigil tails it.
func writerFx(t *testing.T, path string) *fx {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitex.DSN(path, "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	sqlitex.Pin(db)
	f := &fx{t: t, db: db, path: path}
	t.Cleanup(func() { db.Close() })
	return f
}

// resume picks up a run's rows where they stopped.
func (f *fx) resume(session, run string) *runB {
	r := &runB{f: f, session: session, run: run}
	f.db.QueryRow("SELECT COALESCE(MAX(sequence_no)+1, 0) FROM stream_records WHERE session_id = ? AND run_id = ?", session, run).Scan(&r.seq)
	f.db.QueryRow("SELECT COALESCE(MAX(sequence_no)+1, 0) FROM display_message_records WHERE scope = ?", "run:"+run).Scan(&r.dseq)
	return r
}

// cliApprove writes what `starweaver approval approve` writes
// (docs/formats/starweaver.md, "Deciding"), from another connection.
func (f *fx) cliApprove(session, run, id, callID, tool string, args J, created string) {
	decided := "2026-07-13T10:20:00.5Z"
	p := J{"approval_id", id, "session_id", session, "run_id", run, "action_id", callID, "action_name", tool,
		"request", J{"arguments", args, "reason", tool + " requires approval", "toolset", "local"}, "status", "approved",
		"decision", J{"status", "approved", "decided_by", "starweaver-cli", "decided_at", decided},
		"created_at", created, "updated_at", decided, "metadata", J{"policy", "defer"}}
	f.exec("UPDATE approval_records SET record = ?, updated_at = ? WHERE approval_id = ?",
		env(schemaApproval, 1, p), "2026-07-13T10:20:00.500+00:00", id)
}

// changes reads what came after *c and moves *c on to the next cursor.
func changes(t *testing.T, s *Store, c *store.Cursor) *store.Changes {
	t.Helper()
	ch, next, err := s.Changes(context.Background(), *c)
	if err != nil {
		t.Fatal(err)
	}
	*c = next
	return ch
}

func TestChanges(t *testing.T) {
	s, path := openV07(t)
	ctx := context.Background()
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.CursorFormat() != "starweaver" {
		t.Fatal(cur.CursorFormat())
	}
	steps0, _ := s.Steps(ctx, runR3)
	stats0, _ := s.RunStats(ctx, []string{runR3})
	if ch := changes(t, s, &cur); !ch.Empty() || ch.More {
		t.Fatalf("nothing changed, got %+v", ch)
	}
	marks := map[string]int64{}
	for _, tb := range tailed {
		marks[tb] = cur.(*Cursor).Mark(tb)
	}

	// Starweaver carries on: R3's next turn asks for an approval and parks,
	// a subagent starts, and someone approves P1 with the CLI.
	w := writerFx(t, path)
	r3 := w.resume(sessA, runR3)
	r3.stream(1, J{"kind", "model_request", "step", 2})
	r3.stream(1, response(2, runR3, at("10:15:00"), "tool_calls", usageJ(7000, 0, 6000, 90),
		textPart("Writing the final migration note."), callPart("toolu_01R3write", "write_file", J{"content", "done", "path", "SWACC/final.md"})))
	r3.stream(1, toolCallEv(2, "toolu_01R3write", "write_file", J{"content", "done", "path", "SWACC/final.md"}))
	r3.stream(1, hitlReturn(2, "toolu_01R3write", "write_file", "approval_required", J{"reason", "write_file requires approval"}))
	r3.stream(1, J{"kind", "suspended", "node", "tool_return", "reason", "hitl_control_flow"})
	r3.checkpoint("ckpt_e2f9aaaa-0000-4000-8000-000000000002", "tool_return", 2, at("10:15:01"))
	apprR3 := "approval_" + runR3 + "_toolu_01R3write"
	r3.approval(apprR3, "toolu_01R3write", "write_file", J{"content", "done", "path", "SWACC/final.md"}, "pending", nil, at("10:15:01"), at("10:15:01"))
	w.exec("UPDATE run_records SET record = ?, updated_at = ? WHERE session_id = ? AND run_id = ?",
		env(schemaRun, 1, runJ(sessA, runR3, "SWACC-RUN-3: finish the migration after review", "waiting", "", 3, at("09:06:05.1"), at("10:15:02"), "restore_from_run_id", runR2)),
		col(at("10:15:02")), sessA, runR3)
	const runS3 = "run_f0f0f0f0-1111-4222-8333-444455556666"
	s3 := w.run(sessA, runS3, 1, 6, runJ(sessA, runS3, "draft the release note", "running", "", 6, at("10:15:03"), at("10:15:03"),
		"parent_run_id", runR3, "parent_task_id", "task_s3"), at("10:15:03"), at("10:15:03"))
	s3.stream(1, response(1, runS3, at("10:15:04"), "stop", usageJ(500, 0, 0, 20), textPart("Drafting.")))
	w.cliApprove(sessB, runR5, apprP1, "toolu_01P1shellXa9", "run_shell", J{"command", "go test ./payouts/..."}, "2026-07-13T10:05:30Z")

	ch := changes(t, s, &cur)
	if ch.More || ch.Reset {
		t.Fatalf("More %v Reset %v", ch.More, ch.Reset)
	}
	var lines []string
	for _, r := range ch.Steps {
		lines = append(lines, r.RunID[:8]+" "+stepLine(store.Step{Decision: r.Decision, ToolCall: r.ToolCall}))
		if r.RowID <= marks["stream_records"] {
			t.Errorf("old row %d came again", r.RowID)
		}
	}
	want := []string{
		`run_e2f9 Writing the final migration note. · write_file {"content":"done","path":"SWACC/final.md"}`,
		"run_e2f9 approval required: write_file",
		"run_e2f9 suspended: waits on a human (hitl_control_flow) at tool_return",
		"run_f0f0 Drafting.",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("steps\n%v\nwant\n%v", lines, want)
	}
	if len(ch.Calls) != 2 || ch.Calls[0].Step != 2 || *ch.Calls[0].TotalTokens != 7090 || ch.Calls[1].RunID != runS3 {
		t.Errorf("calls %+v", ch.Calls)
	}
	if len(ch.AgentEvents) != 2 || ch.AgentEvents[0].Kind != "checkpoint" || ch.AgentEvents[0].Step != 2 ||
		ch.AgentEvents[1].Kind != "spawn" || ch.AgentEvents[1].ChildRunID != runS3 || ch.AgentEvents[1].RunID != runR3 {
		t.Errorf("agent events %+v", ch.AgentEvents)
	}
	reqs := map[string]store.Request{}
	for _, r := range ch.Requests {
		reqs[r.ID] = r
	}
	if len(reqs) != 2 {
		t.Errorf("requests %+v", ch.Requests)
	}
	if r := reqs[apprP1]; !r.Resolved || r.Decision != "approve" || r.DecidedBy != "starweaver-cli" {
		t.Errorf("P1 decided elsewhere: %+v", r)
	}
	if r := reqs[apprR3]; r.Resolved || r.Step != 2 || !reflect.DeepEqual(r.Ancestry, []string{runR3}) {
		t.Errorf("new approval: %+v", r)
	}
	runs := byID(t, ch.Runs)
	if len(runs) != 2 || runs[runR3].Status != "paused" || runs[runS3].ParentID != runR3 || runs[runS3].Depth != 1 || runs[runS3].Status != "running" {
		t.Errorf("runs %+v", ch.Runs)
	}

	// Folding the new rows onto the timeline read at Head gives the
	// timeline read now; the count read at Head plus the new rows gives
	// the count now.
	var mine []store.StepRow
	tokens := stats0[runR3].Tokens
	for _, r := range ch.Steps {
		if r.RunID == runR3 {
			mine = append(mine, r)
			if r.RowID > stats0[runR3].Through {
				tokens += r.Tokens
			}
		}
	}
	folded := store.AppendStepRows(steps0, mine)
	store.StampSteps(folded, append(mustCalls(t, s, runR3)[:0:0], ch.Calls...))
	now, _ := s.Steps(ctx, runR3)
	for i := range now {
		a, b := folded[i], now[i]
		if a.RowID != b.RowID || a.Number != b.Number || a.Decision != b.Decision || a.ToolCall != b.ToolCall || a.Tokens != b.Tokens {
			t.Errorf("folded step %d = %+v, read %+v", i, a, b)
		}
	}
	if len(folded) != len(now) {
		t.Errorf("folded %d steps, read %d", len(folded), len(now))
	}
	stats1, _ := s.RunStats(ctx, []string{runR3})
	if stats1[runR3].Tokens != tokens || stats1[runR3].Steps != 2 {
		t.Errorf("count %+v, folded tokens %d", stats1[runR3], tokens)
	}

	if ch := changes(t, s, &cur); !ch.Empty() {
		t.Fatalf("second refresh not empty: %+v", ch)
	}

	// A resume claim on R5 makes its requests undecidable: R5 comes again
	// so the explorer re-classifies them; the release brings it back.
	p2 := store.Request{Kind: store.Approval, ID: apprP2, RunID: runR5}
	r5 := w.resume(sessB, runR5)
	r5.claim("claim-r5", "preflight", at("10:30:00"))
	ch = changes(t, s, &cur)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != runR5 {
		t.Fatalf("claim: runs %+v", ch.Runs)
	}
	if d, _ := s.Classify(p2, ch.Runs[0], nil, at("10:31:00")); d != store.Deferred {
		t.Errorf("claimed: %v", d)
	}
	w.exec("UPDATE hitl_resume_claims SET record = replace(record, 'preflight', 'started') WHERE claim_id = 'claim-r5'")
	if ch = changes(t, s, &cur); len(ch.Runs) != 1 {
		t.Fatalf("claim started: %+v", ch)
	}
	w.exec("DELETE FROM hitl_resume_claims WHERE claim_id = 'claim-r5'")
	ch = changes(t, s, &cur)
	if len(ch.Runs) != 1 {
		t.Fatalf("release: runs %+v", ch.Runs)
	}
	if d, _ := s.Classify(p2, ch.Runs[0], nil, at("10:31:00")); d != store.DeliveryUnknown {
		t.Errorf("released: %v", d)
	}

	// A continuation finishes the run it continues.
	const runR9 = "run_0a0a0a0a-1111-4222-8333-444455556666"
	w.run(sessB, runR9, 1, 3, runJ(sessB, runR9, "SWACC-RUN-9: continue", "running", "", 3, at("10:40:00"), at("10:40:00"), "restore_from_run_id", runR5), at("10:40:00"), at("10:40:00"))
	ch = changes(t, s, &cur)
	runs = byID(t, ch.Runs)
	if runs[runR5].Outcome != "continued" || runs[runR5].Summary == nil || runs[runR9].TurnKind != "continuation" || runs[runR9].ParentID != "" {
		t.Errorf("continuation: %+v", ch.Runs)
	}

	// Rows beyond a page come over several calls.
	s3 = w.resume(sessA, runS3)
	tx, _ := w.db.Begin()
	for i := 0; i < sqlitex.ChangesPage+100; i++ {
		_, err := tx.Exec("INSERT INTO stream_records (session_id, run_id, sequence_no, record) VALUES (?, ?, ?, ?)", sessA, runS3, s3.seq,
			env(schemaStream, 1, J{"sequence", s3.seq, "event", response(2+i, runS3, at("11:00:00"), "stop", usageJ(10, 0, 0, 1), textPart("turn"))}))
		if err != nil {
			t.Fatal(err)
		}
		s3.seq++
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ch = changes(t, s, &cur)
	if !ch.More || len(ch.Steps) != sqlitex.ChangesPage {
		t.Fatalf("first page: More %v, %d steps", ch.More, len(ch.Steps))
	}
	ch = changes(t, s, &cur)
	if ch.More || len(ch.Steps) != 100 || ch.Steps[99].Number != sqlitex.ChangesPage+101 {
		t.Fatalf("second page: More %v, %d steps", ch.More, len(ch.Steps))
	}

	// A run that ends leaves its pending request waiting on nobody: it
	// comes back closed.
	w.exec("UPDATE run_records SET record = ?, updated_at = ? WHERE session_id = ? AND run_id = ?",
		env(schemaRun, 1, runJ(sessA, runR3, "SWACC-RUN-3: finish the migration after review", "failed", "gave up", 3, at("09:06:05.1"), at("11:00:00"), "restore_from_run_id", runR2)),
		col(at("11:00:00")), sessA, runR3)
	ch = changes(t, s, &cur)
	if len(ch.Runs) != 1 || ch.Runs[0].Status != "failed" || ch.Runs[0].Summary == nil || ch.Runs[0].Summary.Tokens != tokens {
		t.Errorf("R3 failed: %+v", ch.Runs)
	}
	if len(ch.Requests) != 1 || ch.Requests[0].ID != apprR3 || !ch.Requests[0].Resolved {
		t.Errorf("R3's request not closed: %+v", ch.Requests)
	}
	if open, _ := s.Requests(ctx, true, runR3); len(open) != 0 {
		t.Errorf("still waiting: %+v", open)
	}

	// A cursor from another, bigger file asks for a reset.
	other, err := Open(buildV015(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ch, _, err := other.Changes(ctx, cur); err != nil || !ch.Reset {
		t.Fatalf("foreign cursor: %+v %v", ch, err)
	}
	if _, _, err := s.Changes(ctx, fakeCursor{}); err == nil {
		t.Fatal("a foreign cursor type was accepted")
	}
}

type fakeCursor struct{}

func (fakeCursor) CursorFormat() string { return "io-harness" }

func mustCalls(t *testing.T, s *Store, run string) []store.ProviderCall {
	t.Helper()
	c, err := s.ProviderCalls(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
