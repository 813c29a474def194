package gate

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-run/vigil/store"
)

func newHook(t *testing.T) (*Hook, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "state", "vigil", FileName)
	h, err := OpenHook(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, p
}

func ask(t *testing.T, h *Hook) string {
	t.Helper()
	id, err := h.Ask(context.Background(), Request{Agent: AgentClaudeCode, Event: "PreToolUse", SessionID: "s1", AgentID: "a1",
		Tool: "Bash", Input: `{"command":"echo hi > out.txt"}`, ToolUseID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

func open(t *testing.T, p string) store.Source {
	t.Helper()
	src, err := store.Open(p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if src.Format() != Format {
		t.Fatalf("opened as %s", src.Format())
	}
	return src
}

func TestCreatedInWAL(t *testing.T) {
	_, p := newHook(t)
	out, err := exec.Command("sqlite3", p, "PRAGMA journal_mode").CombinedOutput()
	if err != nil {
		t.Skipf("sqlite3: %v %s", err, out)
	}
	if strings.TrimSpace(string(out)) != "wal" {
		t.Errorf("journal mode %q", out)
	}
}

func TestRequestShowsAsApproval(t *testing.T) {
	h, p := newHook(t)
	id := ask(t, h)
	src := open(t, p)
	ctx := context.Background()
	qs, err := src.Requests(ctx, true)
	if err != nil || len(qs) != 1 {
		t.Fatalf("requests %v %v", qs, err)
	}
	q := qs[0]
	if q.ID != id || q.Kind != store.Approval || q.Act != "exec" || q.Target != "Bash: echo hi > out.txt" ||
		q.Content != `{"command":"echo hi > out.txt"}` || q.RunID != "a1" || !q.Waits() {
		t.Errorf("request %+v", q)
	}
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 2 || runs[0].ID == runs[1].ID {
		t.Fatalf("runs %+v %v", runs, err)
	}
	for _, r := range runs {
		if (r.ID == "a1") != (r.ParentID == "s1") || r.Status != store.StatusRunning {
			t.Errorf("run %+v", r)
		}
	}
}

// Two deciders race, each with its own connection: exactly one wins, the
// other is told what won.
func TestDecideRace(t *testing.T) {
	h, p := newHook(t)
	id := ask(t, h)
	a, b := open(t, p), open(t, p)
	var wg sync.WaitGroup
	res := make([]store.DecideResult, 2)
	errs := make([]error, 2)
	for i, src := range []store.Source{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := []store.Verdict{store.VerdictApprove, store.VerdictDeny}[i]
			res[i], errs[i] = src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: v, Text: "no"})
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || res[0].Won == res[1].Won {
		t.Fatalf("results %+v errors %v", res, errs)
	}
	w, l := res[0], res[1]
	if l.Won {
		w, l = l, w
	}
	if l.Decision != w.Decision || l.DecidedBy == "" {
		t.Errorf("the loser was told %+v, the winner wrote %+v", l, w)
	}
	row, err := h.Get(context.Background(), mustID(id))
	if err != nil || row.State != map[string]string{"approve": StateApproved, "deny": StateDenied}[w.Decision] {
		t.Errorf("row %+v %v", row, err)
	}
}

func mustID(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// A decision while a foreign process (Python's sqlite3) holds a read
// transaction open on the file still lands (WAL), and the foreign reader
// sees it afterwards.
func TestDecideBesideForeignReader(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	h, p := newHook(t)
	id := ask(t, h)
	src := open(t, p)
	py := exec.Command("python3", "-c", `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN")
print(c.execute("SELECT state FROM gate_requests WHERE id=?", (int(sys.argv[2]),)).fetchone()[0], flush=True)
sys.stdin.readline()
print(c.execute("SELECT state FROM gate_requests WHERE id=?", (int(sys.argv[2]),)).fetchone()[0], flush=True)
c.execute("COMMIT")
print(c.execute("SELECT state, reason FROM gate_requests WHERE id=?", (int(sys.argv[2]),)).fetchone(), flush=True)
`, p, id)
	in, _ := py.StdinPipe()
	stdout, _ := py.StdoutPipe()
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var lines []string
	if !sc.Scan() || sc.Text() != "waiting" {
		t.Fatalf("python read %q", sc.Text())
	}
	lines = append(lines, sc.Text())
	res, err := src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictDeny, Text: "not now"})
	if err != nil || !res.Won {
		t.Fatalf("decide beside a reader: %+v %v", res, err)
	}
	in.Write([]byte("\n"))
	in.Close()
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := py.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || lines[1] != "waiting" || lines[2] != "('denied', 'not now')" {
		t.Errorf("the foreign reader saw %q", lines)
	}
}

// A waiting request whose hook process is gone reads as withdrawn, and a
// decision on it is refused with that reason (and written down).
func TestGoneHookWithdraws(t *testing.T) {
	h, p := newHook(t)
	id := ask(t, h)
	if _, err := h.db.Exec("UPDATE gate_requests SET pid = 2147483646 WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	src := open(t, p)
	ctx := context.Background()
	q, err := src.Request(ctx, store.RequestKey{Kind: store.Approval, ID: id})
	if err != nil || !q.Resolved || q.Decision != StateWithdrawn || !strings.Contains(q.StandingReason, "stopped waiting") {
		t.Fatalf("request %+v %v", q, err)
	}
	if w, _ := src.Requests(ctx, true); len(w) != 0 {
		t.Errorf("still waiting: %+v", w)
	}
	_, err = src.Decide(ctx, store.Decision{Key: q.Key(), Verdict: store.VerdictApprove})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "withdrawn") {
		t.Fatalf("late approve: %v", err)
	}
	if row, _ := h.Get(ctx, mustID(id)); row.State != StateWithdrawn {
		t.Errorf("row %+v", row)
	}
}

// An expired request refuses a late decision with the reason, and the
// hook's own End loses to a decision made first.
func TestExpiredRefusesAndEndLoses(t *testing.T) {
	h, p := newHook(t)
	ctx := context.Background()
	id := ask(t, h)
	if ok, err := h.End(ctx, mustID(id), StateExpired, "no decision within 1s"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	src := open(t, p)
	_, err := src.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id}, Verdict: store.VerdictApprove})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || ref.Reason != "expired: no decision within 1s" {
		t.Fatalf("late approve: %v", err)
	}
	id2 := ask(t, h)
	if res, err := src.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: id2}, Verdict: store.VerdictApprove}); err != nil || !res.Won {
		t.Fatal(res, err)
	}
	if ok, err := h.End(ctx, mustID(id2), StateWithdrawn, "x"); ok || err != nil {
		t.Errorf("End after a decision: %v %v", ok, err)
	}
}

func TestPath(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	if p := Path(func(k string) string { return env[k] }); p != "/h/.local/state/vigil/gate.db" {
		t.Error(p)
	}
	env["XDG_STATE_HOME"] = "/x"
	if p := Path(func(k string) string { return env[k] }); p != "/x/vigil/gate.db" {
		t.Error(p)
	}
}

// A request whose agent process is gone reads as withdrawn even while its
// hook lives.
func TestGoneAgentWithdraws(t *testing.T) {
	h, p := newHook(t)
	id, err := h.Ask(context.Background(), Request{Agent: AgentClaudeCode, Event: "PreToolUse", SessionID: "s", Tool: "Bash",
		Input: "{}", AgentPID: 2147483646})
	if err != nil {
		t.Fatal(err)
	}
	q, err := open(t, p).Request(context.Background(), store.RequestKey{Kind: store.Approval, ID: strconv.FormatInt(id, 10)})
	if err != nil || q.Decision != StateWithdrawn || !strings.Contains(q.StandingReason, "its process 2147483646 is gone") {
		t.Fatalf("request %+v %v", q, err)
	}
}
