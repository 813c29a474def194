package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/agentcli"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/internal/testkit/modelserver"
)

// opencodeAsk is a real `opencode serve` (bash set to "ask" in its
// opencode.json) whose session's model runs `echo ok > approved.txt`: the
// call waits in the server's pending map (Permission.ask in
// packages/opencode/src/permission) until someone replies.
type opencodeAsk struct {
	*agentcli.Served
	bin     string
	srv     *modelserver.Server
	session string
	perm    map[string]any // the request as GET /permission lists it
}

func startOpencodeAsk(t *testing.T) *opencodeAsk {
	t.Helper()
	a := agentcli.Need(t, "opencode")
	bin := vigilBinary(t)
	srv := modelserver.Start(t, modelserver.Script{{Match: "[vigil:main]", Turns: []modelserver.Turn{
		{Calls: []modelserver.Call{{Name: "bash", Args: map[string]any{"command": "echo ok > approved.txt", "description": "write approved.txt"}}}},
		{Text: "Done."},
	}}})
	a.Prepare = agentcli.OpencodePermissions(map[string]any{"bash": "ask", "edit": "allow"})
	o := &opencodeAsk{Served: a.Serve(t, srv.URL, 240*time.Second), bin: bin, srv: srv}
	o.session = o.Prompt(t, "Write ok. [vigil:main]")
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var perms []map[string]any
		o.get(t, "/permission", &perms)
		if len(perms) == 1 {
			o.perm = perms[0]
			return o
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no permission request waited in opencode serve (%d model requests)", len(srv.Requests()))
	return nil
}

func (o *opencodeAsk) id() string { return o.perm["id"].(string) }

func (o *opencodeAsk) post(t *testing.T, path string, body, into any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := http.Post(o.URL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if into != nil && json.Unmarshal(out, into) != nil {
		t.Fatalf("POST %s: %s %s", path, res.Status, out)
	}
	return res.StatusCode
}

func (o *opencodeAsk) get(t *testing.T, path string, into any) {
	t.Helper()
	res, err := http.Get(o.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// env is vigil's environment beside the server: its HOME (so the gate
// store, the audit log and opencode's database are the run's), the
// database named, the server found through VIGIL_OPENCODE_URL.
func (o *opencodeAsk) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + o.Home, "USER=vigil-test",
		"XDG_STATE_HOME=" + filepath.Join(o.Home, ".local", "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(o.Home, ".config"),
		"VIGIL_STORE=" + filepath.Join(o.Home, ".local", "share", "opencode", "opencode.db"),
		"VIGIL_OPENCODE_URL=" + o.URL}
}

func (o *opencodeAsk) vigil(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(o.bin, args...)
	cmd.Env = o.env()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// toolState waits until the gated call has left "running" in opencode's
// database and returns its state (status, error).
func (o *opencodeAsk) toolState(t *testing.T) (status, errText string) {
	t.Helper()
	db := filepath.Join(o.Home, ".local", "share", "opencode", "opencode.db")
	call := o.perm["tool"].(map[string]any)["callID"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		err = conn.QueryRow(`SELECT json_extract(data, '$.state.status'), COALESCE(json_extract(data, '$.state.error'), '') FROM part
			WHERE session_id = ? AND json_extract(data, '$.callID') = ?`, o.session, call).Scan(&status, &errText)
		conn.Close()
		if err == nil && status != "running" && status != "pending" {
			return status, errText
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the call %s never finished: %q", call, status)
	return
}

func (o *opencodeAsk) audit(t *testing.T) []audit.Record {
	t.Helper()
	return auditlog.Read(t, filepath.Join(o.Home, ".local", "state", "vigil", audit.FileName))
}

// (a) vigil approve answers the request in the server ("once"): the
// command runs, and the audit log names who decided.
func TestGateRealOpencodeApprove(t *testing.T) {
	o := startOpencodeAsk(t)
	if _, err := os.Stat(filepath.Join(o.Work, "approved.txt")); err == nil {
		t.Fatal("approved.txt was written while the call waited")
	}
	out, code := o.vigil(t, "approve", o.id())
	if code != 0 || !strings.Contains(out, "approved approval:"+o.id()) || !strings.Contains(out, "exec bash: echo ok > approved.txt") {
		t.Fatalf("vigil approve: exit %d: %s", code, out)
	}
	if st, e := o.toolState(t); st != "completed" {
		t.Fatalf("the call after approve: %s %s", st, e)
	}
	if b, err := os.ReadFile(filepath.Join(o.Work, "approved.txt")); err != nil || strings.TrimSpace(string(b)) != "ok" {
		t.Fatalf("approved.txt after approve: %q %v", b, err)
	}
	recs := o.audit(t)
	last := recs[len(recs)-1]
	if len(recs) != 2 || recs[0].Outcome != audit.Attempt || last.Outcome != audit.Won || last.Verdict != "approve" ||
		!strings.HasPrefix(last.Who.Name, "vigil-test@") || last.Channel != "vigil approve" {
		t.Errorf("audit log %+v", recs)
	}
	// Answered once: a second decision is told what won (the claim in the
	// gate store), not sent again.
	out, code = o.vigil(t, "deny", o.id())
	if code != ExitDecision || !strings.Contains(out, "already decided: approve (by vigil (vigil-test))") {
		t.Errorf("a second decision: exit %d: %s", code, out)
	}
}

// (b) vigil deny --reason: the command does not run, and opencode hands
// the reason to the model as the rejection's feedback (CorrectedError).
func TestGateRealOpencodeDeny(t *testing.T) {
	o := startOpencodeAsk(t)
	out, code := o.vigil(t, "deny", o.id(), "--reason", "not on a Friday")
	if code != 0 || !strings.Contains(out, "denied approval:"+o.id()) {
		t.Fatalf("vigil deny: exit %d: %s", code, out)
	}
	st, e := o.toolState(t)
	if st != "error" || !strings.HasSuffix(e, "with the following feedback: not on a Friday") {
		t.Errorf("the call in the session after deny: %s %q", st, e)
	}
	if _, err := os.Stat(filepath.Join(o.Work, "approved.txt")); err == nil {
		t.Error("approved.txt exists after a deny")
	}
	if out, code := o.vigil(t, "show", o.session); code != 0 || !strings.Contains(out, "not on a Friday") {
		t.Errorf("vigil show of the session does not show the rejection's reason: exit %d:\n%s", code, out)
	} else {
		t.Logf("vigil show:\n%s", out)
	}
	call := o.perm["tool"].(map[string]any)["callID"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, ok := o.srv.ToolResult(call); ok {
			if !strings.Contains(r, "not on a Friday") {
				t.Errorf("the model was sent %q", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the model was sent no result for the denied call")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// (d) Two deciders race, as two processes: exactly one wins, the other is
// told what won, and opencode does what the winner said.
func TestGateRealOpencodeRace(t *testing.T) {
	o := startOpencodeAsk(t)
	type result struct {
		out  string
		code int
	}
	res := make([]result, 2)
	var wg sync.WaitGroup
	for i, args := range [][]string{{"approve", o.id()}, {"deny", o.id(), "--reason", "no"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].out, res[i].code = o.vigil(t, args...)
		}()
	}
	wg.Wait()
	won, lost := -1, -1
	for i, r := range res {
		switch {
		case r.code == 0:
			won = i
		case r.code == ExitDecision && strings.Contains(r.out, "approval:"+o.id()+" was already decided"):
			lost = i
		}
	}
	if won < 0 || lost < 0 || won == lost {
		t.Fatalf("want one winner and one told it lost: %+v", res)
	}
	if want := []string{"approve", "deny"}[won]; !strings.Contains(res[lost].out, "already decided: "+want) {
		t.Errorf("the loser was told %q, the winner was %d", res[lost].out, won)
	}
	st, _ := o.toolState(t)
	if ran := st == "completed"; ran != (won == 0) {
		t.Errorf("the call ended %s, but the winner was %v", st, res[won].out)
	}
	var outcomes []string
	for _, r := range o.audit(t) {
		outcomes = append(outcomes, r.Outcome)
	}
	if all := strings.Join(outcomes, " "); strings.Count(all, audit.Won) != 1 || strings.Count(all, audit.Lost) != 1 {
		t.Errorf("audit outcomes %v: want one won, one lost", outcomes)
	}
}

// A request answered in opencode itself (its TUI replies through the same
// route) shows decided by opencode to a vigil process that did not see it
// wait, once any vigil process did (`vigil runs` here lists it waiting and
// remembers it in the gate store): no second reply is sent, and the
// decider is told what opencode decided, read from the tool call.
func TestGateRealOpencodeAnsweredThere(t *testing.T) {
	o := startOpencodeAsk(t)
	if out, code := o.vigil(t, "runs", "--json"); code != 0 || !strings.Contains(out, o.session) {
		t.Fatalf("vigil runs: exit %d: %s", code, out)
	}
	if code := o.post(t, "/permission/"+o.id()+"/reply", map[string]any{"reply": "once"}, nil); code != http.StatusOK {
		t.Fatalf("opencode's own reply: %d", code)
	}
	if st, _ := o.toolState(t); st != "completed" {
		t.Errorf("the call ended %s after opencode's own approval", st)
	}
	out, code := o.vigil(t, "deny", o.id())
	if code != ExitDecision || !strings.Contains(out, "already decided: approve (by opencode)") {
		t.Errorf("vigil deny after opencode answered: exit %d: %s", code, out)
	}
}

// vigil races opencode itself (its TUI replies through the same route):
// exactly one answer lands — the server takes an id once
// (Permission.reply) and vigil's claim does not send twice — and vigil,
// when it loses, says that opencode answered.
func TestGateRealOpencodeRaceWithOpencode(t *testing.T) {
	o := startOpencodeAsk(t)
	var wg sync.WaitGroup
	var out string
	var code, tui int
	wg.Add(2)
	go func() {
		defer wg.Done()
		out, code = o.vigil(t, "approve", o.id())
	}()
	go func() {
		defer wg.Done()
		tui = o.post(t, "/permission/"+o.id()+"/reply", map[string]any{"reply": "reject", "message": "from the TUI"}, nil)
	}()
	wg.Wait()
	vigilWon, tuiWon := code == 0, tui == http.StatusOK
	if vigilWon == tuiWon {
		t.Fatalf("vigil exit %d (%s), opencode's reply %d: want exactly one answer taken", code, out, tui)
	}
	st, e := o.toolState(t)
	if vigilWon && st != "completed" || tuiWon && !strings.HasSuffix(e, "from the TUI") {
		t.Errorf("the call ended %s %q; vigil won %v", st, e, vigilWon)
	}
	if tuiWon && !strings.Contains(out, "(by opencode)") && !strings.Contains(out, "not waiting in the opencode server") {
		t.Errorf("vigil lost to opencode and said: exit %d: %s", code, out)
	}
	t.Logf("vigil: exit %d: %s; opencode's reply: %d", code, strings.TrimSpace(out), tui)
}
