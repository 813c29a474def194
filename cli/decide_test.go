package cli

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

func TestDecideWon(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"approve", "2"}, "approved approval:2: write CHANGELOG.md (run 5, step 3)\n"},
		{[]string{"deny", "approval:3"}, "denied approval:3: exec make release && git push --tags (run 4, step 5)\n"},
		{[]string{"answer", "question:1", "drop", "it"}, "answered question:1 (run 7, step 2): drop it\n"},
		{[]string{"revise", "1", "tag v2.0.0 only after the notes are out"}, "sent plan:1 back for revision (run 4, step 5): tag v2.0.0 only after the notes are out\n"},
	} {
		r := h.run(append(c.args, "--store", p)...)
		r.wantCode(t, 0)
		if r.stdout != c.out || r.stderr != "" {
			t.Errorf("%v: stdout %q, stderr %q; want %q", c.args, r.stdout, r.stderr, c.out)
		}
	}
	s, err := ioharness.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for key, want := range map[store.RequestKey]string{
		{Kind: store.Approval, ID: "2"}: string(store.VerdictApprove),
		{Kind: store.Approval, ID: "3"}: string(store.VerdictDeny),
		{Kind: store.Question, ID: "1"}: "drop it",
		{Kind: store.Plan, ID: "1"}:     string(store.VerdictRevise),
	} {
		q, err := s.Request(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !q.Resolved || q.Decision != want {
			t.Errorf("%s: resolved %v, decision %q; want %q", key, q.Resolved, q.Decision, want)
		}
	}
	q, _ := s.Request(ctx, store.RequestKey{Kind: store.Plan, ID: "1"})
	if q.Correction != "tag v2.0.0 only after the notes are out" {
		t.Errorf("correction %q", q.Correction)
	}
}

func TestDecidePlanAndStdin(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	r := h.run("deny", "plan:1", "--store", p)
	r.wantCode(t, 0)
	if r.stdout != "cancelled plan:1 (run 4, step 5)\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	h.stdin = "keep it\n"
	r = h.run("answer", "1", "-", "--store", p)
	r.wantCode(t, 0)
	contains(t, r.stdout, "answered question:1 (run 7, step 2): keep it\n")

	p2 := fixtureStore(t)
	r = newHarness(t).run("approve", "plan:1", "--store", p2)
	r.wantCode(t, 0)
	if r.stdout != "approved plan:1: 3 steps (run 4, step 5)\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func TestDecideLost(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	h.run("approve", "2", "--store", p).wantCode(t, 0)
	r := h.run("deny", "2", "--store", p)
	r.wantCode(t, ExitDecision)
	r.oneLine(t, "approval:2 was already decided: approve")

	h.run("answer", "1", "keep it", "--store", p).wantCode(t, 0)
	r = h.run("answer", "1", "drop it", "--store", p)
	r.wantCode(t, ExitDecision)
	r.oneLine(t, `question:1 was already decided: "keep it" (by attached)`)
}

// TestDecideRace: two deciders at once; exactly one wins, the other is
// told what won.
func TestDecideRace(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, verb := range []string{"approve", "deny"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = newHarness(t).run(verb, "3", "--store", p)
		}()
	}
	wg.Wait()
	won, lost := results[0], results[1]
	if won.code != 0 {
		won, lost = lost, won
	}
	if won.code != 0 || lost.code != ExitDecision {
		t.Fatalf("exit codes %d and %d, want 0 and 3:\n%+v\n%+v", results[0].code, results[1].code, results[0], results[1])
	}
	verdict := strings.Fields(won.stdout)[0] // approved | denied
	want := map[string]store.Verdict{"approved": store.VerdictApprove, "denied": store.VerdictDeny}[verdict]
	lost.oneLine(t, "approval:3 was already decided: "+string(want))
}

func TestDecideRefused(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	// Approval 1 belongs to a paused (deferred) run.
	r := h.run("approve", "1", "--store", p)
	r.wantCode(t, ExitDecision)
	r.oneLine(t, "approval:1 not decided: run 3 is paused (awaiting_approval)")

	// A read-only store.
	r = h.run("approve", "2", "--read-only", "--store", p)
	r.wantCode(t, ExitDecision)
	r.oneLine(t, "approval:2 not decided: the store is read-only")

	// An ended run.
	w := writer(t, p)
	if err := w.FinishRun(context.Background(), "6", store.OutcomeSuccess); err != nil {
		t.Fatal(err)
	}
	id, err := w.PutPending(context.Background(), "6", 3, "write", "go.mod", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = h.run("approve", id, "--store", p)
	r.wantCode(t, ExitDecision)
	r.oneLine(t, "approval:"+id+" not decided: run 6 has ended (success)")

	// Nothing was written.
	s, err := ioharness.OpenReadOnly(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []string{"1", "2", id} {
		q, err := s.Request(context.Background(), store.RequestKey{Kind: store.Approval, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if q.Resolved {
			t.Errorf("approval %s was decided", id)
		}
	}
}

func TestDecideBadRequests(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"approve", "99"}, ExitError, "no such request: approval 99"},
		{[]string{"approve", "question:1"}, ExitUsage, "question:1 is a question: answer it with 'vigil answer 1 TEXT'"},
		{[]string{"deny", "question:1"}, ExitUsage, "is a question"},
		{[]string{"answer", "approval:2", "yes"}, ExitUsage, "approval:2 is not a question"},
		{[]string{"revise", "approval:2", "do less"}, ExitUsage, "approval:2 is not a plan"},
		{[]string{"approve", "ticket:2"}, ExitUsage, `"ticket" is not a request kind`},
		{[]string{"approve", "approval:"}, ExitUsage, "is not a request"},
		{[]string{"answer", "1", " "}, ExitUsage, "the answer is empty"},
		{[]string{"answer", "1"}, ExitUsage, "missing TEXT"},
	} {
		r := h.run(append(c.args, "--store", p)...)
		if r.code != c.code {
			t.Errorf("%v: exit %d, want %d (%q)", c.args, r.code, c.code, r.stderr)
			continue
		}
		r.oneLine(t, c.says)
	}
}
