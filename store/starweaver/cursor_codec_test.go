package starweaver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// reopen is another reader of the same file, as vigil agent started for
// a new link opens it: it has read nothing yet.
func reopen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// resumeIn reads a written cursor back in a fresh reader and returns what
// came after it and the next cursor written down, as the agent does on
// every refresh.
func resumeIn(t *testing.T, path string, token []byte) (*store.Changes, []byte, *Store) {
	t.Helper()
	s := reopen(t, path)
	cur, err := s.DecodeCursor(token)
	if err != nil {
		t.Fatal(err)
	}
	ch, next, err := s.Changes(context.Background(), cur)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.EncodeCursor(next)
	if err != nil {
		t.Fatal(err)
	}
	return ch, b, s
}

// A cursor written down in one reader and read back by another opened on
// the same file tells exactly what the original tells: what a foreign
// writer (python3's sqlite3, as Starweaver's own process) committed in
// between, once — a new turn and the approval it asks, a CLI decision, a
// resume claim (and the claim's release, against the claims the cursor
// saw, which a fresh reader has never read).
func TestCursorCodecResumesInAnotherReader(t *testing.T) {
	s, path := openV07(t)
	ctx := context.Background()
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	// The round trip: read back, written again, the same bytes.
	back, err := s.DecodeCursor(token)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.EncodeCursor(back); err != nil || !bytes.Equal(again, token) {
		t.Fatalf("written again:\n%s\nfirst:\n%s (%v)", again, token, err)
	}
	if !strings.Contains(string(token), `"claimed"`) || !strings.Contains(string(token), `"pending"`) || !strings.Contains(string(token), `"open"`) {
		t.Errorf("the token leaves out part of the cursor: %s", token)
	}

	// What happens while the link is down, written by another process.
	w := foreignWriter(t, path)
	r3 := w.resume(sessA, runR3)
	r3.stream(1, J{"kind", "model_request", "step", 2})
	r3.stream(1, response(2, runR3, at("10:15:00"), "tool_calls", usageJ(7000, 0, 6000, 90),
		textPart("Writing the final migration note."), callPart("toolu_01R3write", "write_file", J{"content", "done", "path", "SWACC/final.md"})))
	apprR3 := "approval_" + runR3 + "_toolu_01R3write"
	r3.approval(apprR3, "toolu_01R3write", "write_file", J{"content", "done", "path", "SWACC/final.md"}, "pending", nil, at("10:15:01"), at("10:15:01"))
	w.cliApprove(sessB, runR5, apprP1, "toolu_01P1shellXa9", "run_shell", J{"command", "go test ./payouts/..."}, "2026-07-13T10:05:30Z")
	w.resume(sessB, runR5).claim("claim-r5", "preflight", at("10:30:00"))

	want, _, err := s.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	got, next, other := resumeIn(t, path, token)
	if got.Reset || got.More {
		t.Fatalf("resumed: Reset %v More %v", got.Reset, got.More)
	}
	var lines []string
	for _, r := range got.Steps {
		lines = append(lines, r.RunID[:8]+" "+stepLine(store.Step{Decision: r.Decision, ToolCall: r.ToolCall}))
	}
	if w := []string{`run_e2f9 Writing the final migration note. · write_file {"content":"done","path":"SWACC/final.md"}`}; !reflect.DeepEqual(lines, w) {
		t.Errorf("steps after the token\n%v\nwant\n%v", lines, w)
	}
	reqs := map[string]store.Request{}
	for _, r := range got.Requests {
		reqs[r.ID] = r
	}
	if r := reqs[apprP1]; !r.Resolved || r.Decision != "approve" || r.DecidedBy != "starweaver-cli" {
		t.Errorf("P1 decided by the CLI during the outage: %+v", r)
	}
	if r := reqs[apprR3]; r.Resolved || r.RunID != runR3 {
		t.Errorf("the approval asked during the outage: %+v", r)
	}
	runs := byID(t, got.Runs)
	r5, ok := runs[runR5]
	if !ok {
		t.Fatalf("R5, claimed during the outage, did not come: %+v", got.Runs)
	}
	// The fresh reader answers Classify from the claims it read.
	if d, why := other.Classify(store.Request{Kind: store.Approval, ID: apprP2, RunID: runR5}, r5, nil, at("10:31:00")); d != store.Deferred {
		t.Errorf("P2 on the claimed run: %v %s", d, why)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the resumed cursor tells\n%+v\nthe original\n%+v", got, want)
	}

	// The timeline's tail and the runs with a stream of their own, learnt
	// from the outage's rows, go on in the next token.
	if !strings.Contains(string(next), `"tails":{"`+runR3) || !strings.Contains(string(next), `"owned":["`) {
		t.Errorf("the next token leaves out what the refresh learnt: %s", next)
	}

	// Once: the next token, read back in yet another reader, tells nothing.
	if ch, _, _ := resumeIn(t, path, next); !ch.Empty() {
		t.Errorf("the rows came again: %+v", ch)
	}

	// The claim is released and a step lands during the next outage: R5
	// comes again (its requests can be decided now), the step once.
	w.exec("DELETE FROM hitl_resume_claims WHERE claim_id = 'claim-r5'")
	r3 = w.resume(sessA, runR3)
	r3.stream(1, response(3, runR3, at("10:16:00"), "stop", usageJ(10, 0, 0, 1), textPart("After the second outage.")))
	got, next, other = resumeIn(t, path, next)
	runs = byID(t, got.Runs)
	if _, ok := runs[runR5]; !ok {
		t.Errorf("R5's release did not come: %+v", got.Runs)
	}
	if d, why := other.Classify(store.Request{Kind: store.Approval, ID: apprP2, RunID: runR5}, runs[runR5], nil, at("10:31:00")); d == store.Deferred {
		t.Errorf("P2 after the release: %v %s", d, why)
	}
	if len(got.Steps) != 1 || got.Steps[0].Decision != "After the second outage." || got.Steps[0].Number != 3 {
		t.Errorf("steps after the second token: %+v", got.Steps)
	}
	if ch, _, _ := resumeIn(t, path, next); !ch.Empty() {
		t.Errorf("the second outage's rows came again: %+v", ch)
	}
}

// A written cursor read back against another database at the path says
// Reset: one longer written over it, and one shorter; a cursor of another
// layout or format is an error, never a guess.
func TestCursorCodecReplacedStoreResets(t *testing.T) {
	s, path := openV07(t)
	token, err := s.EncodeCursor(must(t)(s.Head(context.Background())))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dir := filepath.Dir(path)
	saved := filepath.Join(t.TempDir(), "saved.sqlite")
	copyFile(t, path, saved)

	// Another Starweaver database put at the path (0.15's scenario).
	other := buildV015(t, t.TempDir())
	for _, sfx := range []string{"", "-wal", "-shm"} {
		os.Remove(path + sfx)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if ch, _, _ := resumeIn(t, path, token); !ch.Reset {
		t.Errorf("another database at the path: %+v; want Reset", ch)
	}

	// The same database with its newest rows gone (rewound): shorter.
	os.Remove(path)
	copyFile(t, saved, path)
	w := foreignWriter(t, path)
	w.exec("DELETE FROM stream_records WHERE rowid = (SELECT MAX(rowid) FROM stream_records)")
	if ch, _, _ := resumeIn(t, path, token); !ch.Reset {
		t.Errorf("a rewound database at the path: %+v; want Reset", ch)
	}

	r := reopen(t, filepath.Join(dir, filepath.Base(path)))
	for _, bad := range []string{`{"v":9,"format":"starweaver","marks":{}}`, `{"v":1,"format":"io-harness","marks":{}}`, `{"v":1,"format":"starweaver"}`, `nonsense`} {
		if _, err := r.DecodeCursor([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if _, err := r.EncodeCursor(fakeCursor{}); err == nil {
		t.Error("an io-harness cursor was written down as a Starweaver one")
	}
}

func must(t *testing.T) func(store.Cursor, error) store.Cursor {
	return func(c store.Cursor, err error) store.Cursor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}
