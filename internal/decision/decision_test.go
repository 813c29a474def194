package decision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/union"
)

var (
	ann       = audit.Who{Name: "ann@laptop"}
	approval1 = store.RequestKey{Kind: store.Approval, ID: "1"} // run 3's, paused: deferred
	approval2 = store.RequestKey{Kind: store.Approval, ID: "2"} // run 5's, live
)

func fixtureStore(t *testing.T) (string, store.Source) {
	t.Helper()
	p, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ioharness.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return p, store.Complete(s)
}

func openLog(t *testing.T) (*audit.Log, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "state", "vigil", audit.FileName)
	l, err := audit.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, p
}

func readLog(t *testing.T, p string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// outcomes is the log's lines as "outcome verdict", one a line.
func outcomes(recs []audit.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s\n", r.Outcome, r.Verdict)
	}
	return b.String()
}

func undecided(t *testing.T, s store.Source, k store.RequestKey) {
	t.Helper()
	q, err := s.(store.RequestGetter).Request(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if q.Resolved {
		t.Errorf("%s was written: %+v", k, q)
	}
}

// A decision is an attempt line before the store is written and its
// outcome after, each naming who decided, through what, in which store; a
// second decision on the same request loses and says what the store holds.
func TestAttemptThenOutcome(t *testing.T) {
	path, s := fixtureStore(t)
	l, lp := openLog(t)
	mk := &Maker{Who: ann, Via: "vigil approve", Log: l}
	ctx := context.Background()
	if res, err := mk.Make(ctx, s, Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictApprove}}); err != nil || !res.Won {
		t.Fatalf("approve: %+v %v", res, err)
	}
	if res, err := mk.Make(ctx, s, Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictDeny}}); err != nil || res.Won {
		t.Fatalf("deny after approve: %+v %v", res, err)
	}
	recs := readLog(t, lp)
	if got, want := outcomes(recs), "attempt approve\nwon approve\nattempt deny\nlost deny\n"; got != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", got, want)
	}
	for _, r := range recs {
		if r.Who != ann || r.Channel != "vigil approve" || r.Store != path || r.Request != "approval 2" || r.Time.IsZero() {
			t.Errorf("line %+v", r)
		}
	}
	if !strings.HasPrefix(recs[3].Held, "approve") {
		t.Errorf("the lost line does not say what the store holds: %+v", recs[3])
	}
}

// With the run and lease the caller holds, a decision the run would not
// read is refused before anything is written: one refused line with the
// reason, no attempt, the store untouched.
func TestRefusedFromTheCallersData(t *testing.T) {
	_, s := fixtureStore(t)
	l, lp := openLog(t)
	ctx := context.Background()
	q, err := s.Request(ctx, approval1)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Run(ctx, q.RunID)
	if err != nil {
		t.Fatal(err)
	}
	mk := &Maker{Who: ann, Via: "the explorer", Log: l}
	_, err = mk.Make(ctx, s, Ask{Decision: store.Decision{Key: approval1, Verdict: store.VerdictApprove}, Request: &q, Run: &run, Lease: run.Lease})
	var refused *store.RefusedError
	if !errors.As(err, &refused) || refused.Delivery != store.Deferred || !strings.Contains(refused.Reason, "paused") {
		t.Fatalf("a decision on a paused run's request: %v", err)
	}
	recs := readLog(t, lp)
	if len(recs) != 1 || recs[0].Outcome != audit.Refused || !strings.Contains(recs[0].Held, "paused") || recs[0].Who != ann {
		t.Errorf("lines %+v", recs)
	}
	undecided(t, s, approval1)
}

// A store read-only to this person (a serve viewer) is refused with a line.
func TestReadOnlyRefused(t *testing.T) {
	path, _ := fixtureStore(t)
	opened, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	ro := store.Complete(opened)
	defer ro.Close()
	l, lp := openLog(t)
	_, err = (&Maker{Who: ann, Via: "ssh x", Log: l}).Make(context.Background(), ro, Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictApprove}})
	var refused *store.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("a read-only store: %v", err)
	}
	if recs := readLog(t, lp); len(recs) != 1 || recs[0].Outcome != audit.Refused {
		t.Errorf("lines %+v", recs)
	}
	undecided(t, ro, approval2)
}

// A log that cannot be had decides nothing; Unlogged (the far agent, whose
// caller's log holds the record) decides without.
func TestNoLogNoDecision(t *testing.T) {
	_, s := fixtureStore(t)
	ctx := context.Background()
	d := Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictApprove}}
	cannot := &Maker{Who: ann, Via: "the explorer", OpenLog: func() (*audit.Log, error) {
		return nil, errors.New("audit log: cannot find a state directory")
	}}
	if _, err := cannot.Make(ctx, s, d); err == nil || !strings.Contains(err.Error(), "not decided: audit log: cannot find a state directory") {
		t.Errorf("no state directory: %v", err)
	}
	if _, err := (&Maker{Who: ann}).Make(ctx, s, d); !errors.Is(err, ErrNoLog) {
		t.Errorf("no log at all: %v", err)
	}
	undecided(t, s, approval2)

	dir := t.TempDir() // a log that cannot be opened for writing: a directory stands at its path
	if _, err := (&Maker{Who: ann, OpenLog: func() (*audit.Log, error) { return audit.Open(dir) }}).Make(ctx, s, d); err == nil ||
		!strings.HasPrefix(err.Error(), "not decided: audit log") {
		t.Errorf("a log that cannot be opened: %v", err)
	}
	undecided(t, s, approval2)

	closed, _ := openLog(t) // the attempt line cannot be written
	closed.Close()
	if _, err := (&Maker{Who: ann, Log: closed}).Make(ctx, s, d); err == nil || !strings.HasPrefix(err.Error(), "not decided: audit log") {
		t.Errorf("an attempt line not written: %v", err)
	}
	undecided(t, s, approval2)

	if res, err := (&Maker{Who: ann, Unlogged: true}).Make(ctx, s, d); err != nil || !res.Won {
		t.Errorf("unlogged: %+v %v", res, err)
	}
}

// The per-user default is opened for each decision, created on the first
// (0600 in a 0700 directory) under $XDG_STATE_HOME.
func TestLocalLog(t *testing.T) {
	_, s := fixtureStore(t)
	state := filepath.Join(t.TempDir(), "state")
	env := map[string]string{"XDG_STATE_HOME": state, "USER": "ann"}
	mk := Local(func(k string) string { return env[k] }, "vigil approve")
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the state directory exists before any decision")
	}
	if res, err := mk.Make(context.Background(), s, Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictApprove}}); err != nil || !res.Won {
		t.Fatalf("%+v %v", res, err)
	}
	p := filepath.Join(state, "vigil", audit.FileName)
	recs := readLog(t, p)
	if outcomes(recs) != "attempt approve\nwon approve\n" || !strings.HasPrefix(recs[1].Who.Name, "ann@") {
		t.Errorf("lines %+v", recs)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory %v %v", fi, err)
	}
}

// unknownSource is a store whose compare-and-set the link took with it.
type unknownSource struct{ store.Source }

type linkTookIt struct{}

func (linkTookIt) Error() string               { return "the link dropped with the decision in flight" }
func (linkTookIt) Is(target error) bool        { return target == audit.ErrOutcomeUnknown }
func (unknownSource) Path() string             { return "ssh://far/srv/runs.sqlite3" }
func (unknownSource) ReadOnly() (bool, string) { return false, "" }
func (unknownSource) Decide(context.Context, store.Decision) (store.DecideResult, error) {
	return store.DecideResult{}, linkTookIt{}
}

// A decision whose fate is unknown is said so; a store named by URL puts
// the link before the command in the channel.
func TestUnknownOutcomeOverALink(t *testing.T) {
	l, lp := openLog(t)
	_, err := (&Maker{Who: ann, Via: "the explorer", Log: l}).Make(context.Background(), unknownSource{}, Ask{Decision: store.Decision{Key: approval2, Verdict: store.VerdictApprove}})
	if !errors.Is(err, audit.ErrOutcomeUnknown) {
		t.Fatalf("err %v", err)
	}
	recs := readLog(t, lp)
	if outcomes(recs) != "attempt approve\nunknown approve\n" || recs[1].Held != "" ||
		recs[1].Channel != "ssh://far/srv/runs.sqlite3 (the explorer)" || recs[1].Store != "ssh://far/srv/runs.sqlite3" {
		t.Errorf("lines %+v", recs)
	}
}

// In a set of stores a decision is recorded under the member it lands in,
// with that store's own id.
func TestSetMemberNamed(t *testing.T) {
	a, sa := fixtureStore(t)
	b, sb := fixtureStore(t)
	set, err := union.New([]union.Member{{Name: a, Source: sa}, {Name: b, Source: sb}})
	if err != nil {
		t.Fatal(err)
	}
	prefix := set.Stores()[1].Prefix
	l, lp := openLog(t)
	k := store.RequestKey{Kind: store.Approval, ID: prefix + "/2"}
	if res, err := (&Maker{Who: ann, Via: "vigil approve", Log: l}).Make(context.Background(), set.Source(), Ask{Decision: store.Decision{Key: k, Verdict: store.VerdictApprove}}); err != nil || !res.Won {
		t.Fatalf("%+v %v", res, err)
	}
	recs := readLog(t, lp)
	if len(recs) != 2 || recs[1].Store != b || recs[1].Request != "approval 2" || recs[1].Outcome != audit.Won {
		t.Errorf("lines %+v", recs)
	}
	undecided(t, sa, approval2)
}

// A store that keeps its decider (vigil's gate store) records the person
// and channel the Maker decides for: a colleague deciding through serve is
// named in the row the hook answers from, and a loser is told that name.
func TestTheStoreKeepsWhoDecided(t *testing.T) {
	p := filepath.Join(t.TempDir(), gate.FileName)
	h, err := gate.OpenHook(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	id, err := h.Ask(ctx, gate.Request{Agent: gate.AgentClaudeCode, Event: "PreToolUse", SessionID: "s1",
		Tool: "Bash", Input: `{"command":"git push"}`})
	if err != nil {
		t.Fatal(err)
	}
	src, err := gate.Open(p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	key := store.RequestKey{Kind: store.Approval, ID: fmt.Sprint(id)}
	log, _ := openLog(t)
	bob := &Maker{Who: audit.Who{Name: "bob@desk"}, Via: "ssh 10.0.0.5:51234 (vigil serve)", Log: log}
	res, err := bob.Make(ctx, store.Complete(src), Ask{Decision: store.Decision{Key: key, Verdict: store.VerdictApprove}})
	if err != nil || !res.Won {
		t.Fatalf("bob: %+v %v", res, err)
	}
	row, err := h.Get(ctx, id)
	if want := "bob@desk via ssh 10.0.0.5:51234 (vigil serve)"; err != nil || row.DecidedBy != want {
		t.Fatalf("the row says decided by %q (%v), want %q", row.DecidedBy, err, want)
	}
	late, err := (&Maker{Who: ann, Via: "vigil deny", Log: log}).Make(ctx, store.Complete(src),
		Ask{Decision: store.Decision{Key: key, Verdict: store.VerdictDeny}})
	if err != nil || late.Won || !strings.HasPrefix(late.DecidedBy, "bob@desk") {
		t.Fatalf("ann was told %+v %v", late, err)
	}
}
