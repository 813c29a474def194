package starweaver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

var decidedAt = time.Date(2026, 7, 13, 11, 0, 0, 123456000, time.UTC)

func fixClock(t *testing.T) {
	old := now
	now = func() time.Time { return decidedAt }
	t.Cleanup(func() { now = old })
}

// rawRecord reads a record column and its updated_at as stored.
func rawRecord(t *testing.T, path, table, idCol, id string) (string, string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitex.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rec, upd, typ string
	if err := db.QueryRow("SELECT record, updated_at, typeof(record) FROM "+table+" WHERE "+idCol+" = ?", id).Scan(&rec, &upd, &typ); err != nil {
		t.Fatal(err)
	}
	if typ != "text" {
		t.Errorf("%s.record of %s is %s, not TEXT", table, id, typ)
	}
	return rec, upd
}

// dump is every row of every table but the one a decision may touch, so a
// test can tell nothing else moved.
func dump(t *testing.T, path string, except ...string) string {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitex.DSN(path, "mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	h := sha256.New()
	for _, tb := range tables {
		if slices.Contains(except, tb) {
			continue
		}
		r, err := db.Query("SELECT * FROM " + tb + " ORDER BY rowid")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			r.Scan(ptrs...)
			fmt.Fprintf(h, "%s %v\n", tb, vals)
		}
		r.Close()
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestDecideWritesTheFormatsShape(t *testing.T) {
	fixClock(t)
	s, path := openV07(t)
	ctx := context.Background()
	before := dump(t, path, "approval_records")
	res, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP1}, Verdict: "approve", Text: "looks safe"})
	if err != nil || res != (store.DecideResult{Won: true, Decision: "approve", DecidedBy: "vigil"}) {
		t.Fatalf("approve: %+v %v", res, err)
	}
	rec, upd := rawRecord(t, path, "approval_records", "approval_id", apprP1)
	want := env(schemaApproval, 1, J{"approval_id", apprP1, "session_id", sessB, "run_id", runR5, "action_id", "toolu_01P1shellXa9", "action_name", "run_shell",
		"request", J{"arguments", J{"command", "go test ./payouts/..."}, "reason", "run_shell requires approval", "toolset", "local"},
		"status", "approved",
		"decision", J{"status", "approved", "decided_by", "vigil", "decided_at", "2026-07-13T11:00:00.123456Z", "reason", "looks safe"},
		"created_at", "2026-07-13T10:05:30Z", "updated_at", "2026-07-13T11:00:00.123456Z", "metadata", J{"policy", "defer"}})
	if rec != want {
		t.Errorf("record\n%s\nwant\n%s", rec, want)
	}
	if upd != "2026-07-13T11:00:00.123456+00:00" {
		t.Errorf("updated_at column %q", upd)
	}
	// Deny, no reason: the decision has none.
	res, err = s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP2}, Verdict: "deny"})
	if err != nil || !res.Won {
		t.Fatalf("deny: %+v %v", res, err)
	}
	rec, _ = rawRecord(t, path, "approval_records", "approval_id", apprP2)
	if !strings.Contains(rec, `"status":"denied","decision":{"status":"denied","decided_by":"vigil","decided_at":"2026-07-13T11:00:00.123456Z"},"created_at"`) {
		t.Errorf("denied record %s", rec)
	}
	if after := dump(t, path, "approval_records"); after != before {
		t.Error("a decision touched another table")
	}
	// Deciding again loses, and says what won.
	res, err = s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP1}, Verdict: "deny"})
	if err != nil || res != (store.DecideResult{Won: false, Decision: "approve", DecidedBy: "vigil"}) {
		t.Fatalf("second decision: %+v %v", res, err)
	}
	// The browsing side reads the decision back.
	r, err := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: apprP1})
	if err != nil || !r.Resolved || r.Decision != "approve" || r.DecidedBy != "vigil" {
		t.Fatalf("read back %+v %v", r, err)
	}
	// Decisions are approve or deny; plans do not exist; unknown ids are refused.
	if _, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP2}, Verdict: "maybe"}); err == nil {
		t.Error("verdict maybe accepted")
	}
	if _, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Plan, ID: "1"}, Verdict: "approve"}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("plan: %v", err)
	}
	if _, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "approval_nope"}, Verdict: "approve"}); !errors.Is(err, store.ErrNoSuchReq) {
		t.Errorf("missing: %v", err)
	}
}

func TestAnswerDeferred(t *testing.T) {
	fixClock(t)
	s, path := openV07(t)
	ctx := context.Background()
	key := store.RequestKey{Kind: store.Question, ID: defR5}
	res, err := s.Decide(ctx, store.Decision{Key: key, Text: ` {"build": "b-1234", "state": "green"} `})
	if err != nil || !res.Won || res.Decision != `{"build":"b-1234","state":"green"}` {
		t.Fatalf("answer: %+v %v", res, err)
	}
	rec, upd := rawRecord(t, path, "deferred_tool_records", "deferred_id", defR5)
	// The bare legacy record comes back in a v1 envelope, response after status.
	want := env(schemaDeferred, 1, J{"deferred_id", defR5, "session_id", sessB, "run_id", runR5, "tool_call_id", "toolu_01D2ciXc7", "tool_name", "fetch_ci_status",
		"request", J{"arguments", J{"build", "b-1234"}, "reason", "the CI status comes from the build farm"},
		"status", "completed", "response", J{"build", "b-1234", "state", "green"},
		"created_at", "2026-07-13T10:05:32Z", "updated_at", "2026-07-13T11:00:00.123456Z", "metadata", J{"policy", "defer"}})
	if rec != want || upd != "2026-07-13T11:00:00.123456+00:00" {
		t.Errorf("record\n%s\nwant\n%s\n%s", rec, want, upd)
	}
	res, err = s.Decide(ctx, store.Decision{Key: key, Text: "again"})
	if err != nil || res.Won || res.Decision != `{"build":"b-1234","state":"green"}` {
		t.Fatalf("second answer: %+v %v", res, err)
	}
	if got := string(answerJSON("all green")); got != `"all green"` {
		t.Errorf("text answer %s", got)
	}
}

func TestDecideExactlyOnce(t *testing.T) {
	s, path := openV07(t)
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	key := store.RequestKey{Kind: store.Approval, ID: apprP2}
	const n = 12
	results := make([]store.DecideResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			h := s
			if i%2 == 1 {
				h = other
			}
			verdict := []store.Verdict{store.VerdictApprove, store.VerdictDeny}[i%3%2]
			<-start
			results[i], errs[i] = h.Decide(ctx, store.Decision{Key: key, Verdict: verdict})
		}(i)
	}
	close(start)
	wg.Wait()
	won := 0
	var winner string
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("decider %d: %v", i, errs[i])
		}
		if results[i].Won {
			won++
			winner = results[i].Decision
		}
	}
	if won != 1 {
		t.Fatalf("%d deciders won", won)
	}
	for i, r := range results {
		if !r.Won && (r.Decision != winner || r.DecidedBy != "vigil") {
			t.Errorf("loser %d saw %+v, winner %s", i, r, winner)
		}
	}
	rec, _ := rawRecord(t, path, "approval_records", "approval_id", apprP2)
	if strings.Count(rec, `"decision"`) != 1 {
		t.Errorf("record %s", rec)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestDecideRefused(t *testing.T) {
	s, path := openV07(t)
	ctx := context.Background()
	before, sum := dump(t, path), fileSum(t, path)
	for _, c := range []struct {
		key  store.RequestKey
		want store.Delivery
		why  string
	}{
		// A resume claim holds R2: the resume took its decisions.
		{store.RequestKey{Kind: store.Approval, ID: apprR2}, store.Deferred, "run " + runR2 + " is being resumed (claim claim-7f3a, preflight"},
		{store.RequestKey{Kind: store.Question, ID: defR2}, store.Deferred, "claim claim-7f3a"},
		// S1 has finished.
		{store.RequestKey{Kind: store.Approval, ID: apprS1}, store.Closed, "run " + runS1 + " has ended (completed)"},
	} {
		_, err := s.Decide(ctx, store.Decision{Key: c.key, Verdict: "approve", Text: "{}"})
		var ref *store.RefusedError
		if !errors.As(err, &ref) {
			t.Fatalf("%s: %v", c.key, err)
		}
		if ref.Delivery != c.want || !strings.Contains(ref.Reason, c.why) || strings.Contains(err.Error(), "\n") || ref.Key != c.key {
			t.Errorf("%s: %v (%v)", c.key, err, ref.Delivery)
		}
	}
	if dump(t, path) != before || fileSum(t, path) != sum {
		t.Error("a refused decision changed the database")
	}
	w := writerFx(t, path)
	// A claim row holds its run whatever its record says (a bare value is
	// not a claim record vigil decodes).
	w.exec("INSERT INTO hitl_resume_claims (session_id, run_id, claim_id, record, created_at) VALUES (?, ?, 'claim-bare', '{\"state\":\"preflight\"}', ?)",
		sessB, runR5, col(at("10:40:00")))
	_, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP1}, Verdict: "approve"})
	if ref := (*store.RefusedError)(nil); !errors.As(err, &ref) || !strings.Contains(ref.Reason, "claim claim-bare, unknown state") {
		t.Fatalf("bare claim: %v", err)
	}
	w.exec("DELETE FROM hitl_resume_claims WHERE claim_id = 'claim-bare'")
	// The same after the claim is started; once released, the decision goes through.
	w.exec("UPDATE hitl_resume_claims SET record = replace(record, 'preflight', 'started')")
	_, err = s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprR2}, Verdict: "approve"})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "never expires") {
		t.Fatalf("started claim: %v", err)
	}
	w.exec("DELETE FROM hitl_resume_claims")
	_, err = s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprR2}, Verdict: "approve"})
	if !errors.As(err, &ref) || ref.Delivery != store.Closed || !strings.Contains(ref.Reason, "was continued by run "+runR3) {
		t.Fatalf("continued run: %v", err)
	}
}

func TestDecideReadOnly(t *testing.T) {
	path := buildV07(t, t.TempDir())
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ro, why := s.ReadOnly(); !ro || why != "opened read-only" {
		t.Fatalf("ReadOnly %v %q", ro, why)
	}
	sum := fileSum(t, path)
	_, err = s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprP1}, Verdict: "approve"})
	if !errors.Is(err, store.ErrReadOnly) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("read-only decide: %v", err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("file changed")
	}
	if os.Getuid() != 0 {
		os.Chmod(path, 0o444)
		defer os.Chmod(path, 0o644)
		s2, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if ro, why := s2.ReadOnly(); !ro || why != "the store file is read-only" {
			t.Fatalf("read-only file: %v %q", ro, why)
		}
	}
}

func TestV015(t *testing.T) {
	fixClock(t)
	path := buildV015(t, t.TempDir())
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if s.Migration() != 19 {
		t.Fatalf("migration %d", s.Migration())
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs := byID(t, runs)
	if len(rs) != 4 {
		t.Fatalf("%d runs: the deleted session's run must not show", len(rs))
	}
	if _, ok := rs[runV5]; ok {
		t.Error("deleted session's run listed")
	}
	if r := rs[runV1]; r.Workspace != "/work/shop" || r.Status != "completed" || r.Outcome != "finished" || r.Tokens != 2050 || r.Goal != "SWACC-V1: add the checkout test" {
		t.Errorf("v2 run %+v", r)
	}
	if r := rs[runV2]; r.Status != "failed" || r.Summary == nil || r.Summary.Success {
		t.Errorf("failed v2 run %+v", r)
	}
	steps, _ := s.Steps(ctx, runV2)
	if len(steps) != 1 || steps[0].Decision != "run failed (model_http): provider returned 529" {
		t.Errorf("failed steps %+v", steps)
	}
	// DEFERRED_REQUESTED (0.15) shows in the step's observations.
	v3, _ := s.Steps(ctx, runV3)
	d, err := s.StepDetail(ctx, runV3, v3[0].RowID)
	if err != nil || len(d.Observations) != 1 || d.Observations[0].Kind != "deferred_requested" {
		t.Errorf("v3 detail %+v %v", d.Observations, err)
	}
	reqs, _ := s.Requests(ctx, true)
	if len(reqs) != 4 {
		t.Fatalf("requests %+v", reqs)
	}
	// The admitted claim (0.15) holds V4.
	for _, r := range reqs {
		if r.ID == apprV4 {
			if dl, why := s.Classify(r, rs[runV4], nil, decidedAt); dl != store.Deferred || !strings.Contains(why, "admitted") {
				t.Errorf("admitted claim: %v %q", dl, why)
			}
		}
	}
	// Approving bumps the revision and keeps reviewed_arguments.
	res, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprV3}, Verdict: "approve"})
	if err != nil || !res.Won {
		t.Fatalf("approve v3: %+v %v", res, err)
	}
	rec, _ := rawRecord(t, path, "approval_records", "approval_id", apprV3)
	if !strings.HasPrefix(rec, `{"schema":"starweaver.session.approval_record","version":1,"payload":{"approval_id":"`+apprV3+`","revision":2,"session_id"`) ||
		!strings.Contains(rec, `"reviewed_arguments":{"content":"x","path":"cart.go"},"status":"approved","decision":{`) {
		t.Errorf("v3 record %s", rec)
	}
	// ask_user_question cannot be approved, only denied.
	q := store.RequestKey{Kind: store.Approval, ID: apprV3q}
	if _, err := s.Decide(ctx, store.Decision{Key: q, Verdict: "approve"}); !strings.Contains(fmt.Sprint(err), "ask_user_question") {
		t.Errorf("approve ask_user_question: %v", err)
	}
	if res, err := s.Decide(ctx, store.Decision{Key: q, Verdict: "deny"}); err != nil || !res.Won {
		t.Errorf("deny ask_user_question: %+v %v", res, err)
	}
	var ref *store.RefusedError
	if _, err := s.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: apprV4}, Verdict: "approve"}); !errors.As(err, &ref) {
		t.Errorf("claimed v4: %v", err)
	}
}
