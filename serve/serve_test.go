package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/views"
)

func approvalOf(t *testing.T, path, id string) store.Request {
	t.Helper()
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err := s.Request(context.Background(), store.RequestKey{Kind: store.Approval, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// selectApproval2 focuses the approval queue on approval 2 and waits out
// the misfire guard.
func selectApproval2(tm *term) {
	tm.typ("6")
	tm.typ("j")
	time.Sleep(views.QuietCeiling + 200*time.Millisecond)
}

// A viewer sees the queue but cannot decide: the keys say why, and the
// store is not written. An approver on another session decides, and the
// viewer's screen shows it within a second, with who decided.
func TestViewerCannotApproverCan(t *testing.T) {
	ts := startServer(t, nil)
	viewer := openTerm(t, ts, ts.viewer, 120, 40)
	approver := openTerm(t, ts, ts.approve, 120, 40)
	viewer.waitFor("Coordinate the v2.0 release", 10*time.Second)
	approver.waitFor("Coordinate the v2.0 release", 10*time.Second)
	// Until a key is pressed the sessions share one explorer; the first
	// key gives each its own, which names who it is.
	viewer.waitFor("viewer view: any key for your own", time.Second)
	approver.waitFor("approver view: any key for your own", time.Second)
	if n := ts.srv.Watching(); len(n) != 2 {
		t.Errorf("mirrors %v: want one per role", n)
	}

	selectApproval2(viewer)
	viewer.waitFor("vera@laptop (viewer)", 2*time.Second)
	viewer.typ("a")
	viewer.waitFor("you are a viewer (vera@laptop)", 2*time.Second)
	viewer.typ("y")
	time.Sleep(200 * time.Millisecond)
	if q := approvalOf(t, ts.store, "2"); q.Resolved {
		t.Fatalf("a viewer's keys decided approval 2: %+v", q)
	}

	selectApproval2(approver)
	approver.waitFor("alice@desk (approver)", 2*time.Second)
	approver.typ("a")
	approver.typ("y")
	approver.waitFor("✓ approved: approval 2", 3*time.Second)
	decided := time.Now()
	if q := approvalOf(t, ts.store, "2"); !q.Resolved || q.Decision != string(store.VerdictApprove) {
		t.Fatalf("approval 2 after the approver's keys: %+v", q)
	}
	// The viewer's queue drops it: five waiting become four.
	viewer.waitFor("4 waiting", time.Second)
	if d := time.Since(decided); d > time.Second {
		t.Errorf("the viewer saw the decision after %s", d)
	}

	// The store's column keeps what io-harness expects; the audit log says who.
	q := approvalOf(t, ts.store, "2")
	if q.DecidedBy != "" && q.DecidedBy != "human" && q.DecidedBy != "attached" {
		t.Errorf("decided_by %q", q.DecidedBy)
	}
	recs := auditlog.Read(t, ts.srv.AuditPath())
	var won, refused bool
	for _, r := range recs {
		if r.Request == "approval 2" && r.Outcome == audit.Won {
			won = true
			if r.Who.Name != "alice@desk" || r.Who.Fingerprint != gossh.FingerprintSHA256(ts.approve.signer.PublicKey()) ||
				!strings.HasPrefix(r.Channel, "ssh 127.0.0.1:") || r.Time.IsZero() || r.Store != ts.store {
				t.Errorf("audit record %+v", r)
			}
		}
		if r.Outcome == audit.Refused && r.Who.Name == "vera@laptop" {
			refused = true
		}
	}
	if !won {
		t.Errorf("no audit line for the approval that won: %+v", recs)
	}
	_ = refused // the viewer's keys never reach Decide: the pane refuses first
}

// A key in neither file, a password, keyboard-interactive: refused, one
// line each in the server's log that says what was tried.
func TestRefusals(t *testing.T) {
	ts := startServer(t, nil)
	stranger := newUser(t, "mallory")
	if _, err := dial(ts, stranger); err == nil {
		t.Fatal("a key in neither file was let in")
	}
	l := waitLog(t, ts, "refused 127.0.0.1:")
	if !strings.Contains(l, gossh.FingerprintSHA256(stranger.signer.PublicKey())) || !strings.Contains(l, "not in --authorized-keys or --approvers") {
		t.Errorf("refusal line %q", l)
	}

	_, err := gossh.Dial("tcp", ts.addr, &gossh.ClientConfig{User: "bob", Auth: []gossh.AuthMethod{gossh.Password("hunter2"),
		gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil })},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err == nil {
		t.Fatal("a password was let in")
	}
	l = waitLog(t, ts, `user "bob"`)
	if !strings.Contains(l, "accepts public keys only") {
		t.Errorf("password refusal line %q", l)
	}
	if n := strings.Count(ts.log.String(), "refused"); n != 2 {
		t.Errorf("%d refusal lines for two connections:\n%s", n, ts.log.String())
	}

	// A session without a terminal.
	c, err := dial(ts, ts.approve)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.CombinedOutput("")
	if err == nil || !strings.Contains(string(out), "needs a terminal") {
		t.Errorf("a session without a terminal: %v %q", err, out)
	}
	l = waitLog(t, ts, "no terminal requested")
	if !strings.Contains(l, "alice@desk") {
		t.Errorf("line %q", l)
	}
}

// The rate limit refuses the connection past the allowance, with a line.
func TestRateLimit(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.RatePerMinute = 2 })
	for i := 0; i < 2; i++ {
		c, err := dial(ts, ts.viewer)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		c.Close()
	}
	if _, err := dial(ts, ts.viewer); err == nil {
		t.Fatal("a third connection within the minute was let in")
	}
	waitLog(t, ts, "more than 2 connections a minute from 127.0.0.1")
}

// A session nobody types in is closed after the idle timeout.
func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
	tm := openTerm(t, ts, ts.viewer, 80, 24)
	tm.waitText("closed after 300ms without a key pressed", 5*time.Second)
	waitLog(t, ts, "closed: idle for")
	// A watching session gets its terminal back too, before the line: the
	// main screen, the cursor, no mouse reporting.
	out := tm.out.String()
	back, line := strings.LastIndex(out, "\x1b[?1049l"), strings.Index(out, "closed after 300ms")
	if back < 0 || back > line || !strings.Contains(out[max(back-60, 0):line], "\x1b[?1002l") {
		t.Fatalf("the watching session's terminal was not given back before the idle line: %q", tail(out, 300))
	}
}

// The host key is generated once, mode 0600, and the same key is used on
// the next start; one readable by others is refused.
func TestHostKey(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state", HostKeyName)
	s1, _, created, err := loadHostKey(p)
	if err != nil || !created {
		t.Fatal(err, created)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	s2, _, created, err := loadHostKey(p)
	if err != nil || created || string(s1.PublicKey().Marshal()) != string(s2.PublicKey().Marshal()) {
		t.Fatal("the host key changed between starts", err, created)
	}
	os.Chmod(p, 0o644)
	if _, _, _, err := loadHostKey(p); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a world-readable host key: %v", err)
	}
}

// A line that is not a key makes the file an error.
func TestKeyFileOptions(t *testing.T) {
	if _, _, err := parseAuthorizedKeys([]byte("# c\nnot a key\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
}

// With several stores, `ssh host NAME` picks one by base name, path or
// number; an unknown name says which are served.
func TestPickStore(t *testing.T) {
	s := &Server{cfg: Config{Stores: []string{"/srv/a/runs.sqlite3", "/srv/b/other.sqlite3"}}, names: []string{"runs.sqlite3", "other.sqlite3"}}
	for cmd, want := range map[string]int{"": 0, "other.sqlite3": 1, "2": 1, "/srv/a/runs.sqlite3": 0} {
		var args []string
		if cmd != "" {
			args = []string{cmd}
		}
		if i, err := s.pick(args); err != nil || i != want {
			t.Errorf("%q: %d %v", cmd, i, err)
		}
	}
	if _, err := s.pick([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "these are served: runs.sqlite3, other.sqlite3") {
		t.Errorf("unknown: %v", err)
	}
}

// The decision history names who decided through vigil serve: another
// session's run summary says it, from the audit log, while the store's
// own column keeps what io-harness writes.
func TestSummaryNamesTheDecider(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.approve, 120, 40)
	a.waitFor("Coordinate the v2.0 release", 10*time.Second)
	selectApproval2(a)
	a.waitFor("alice@desk (approver)", 2*time.Second)
	a.typ("a")
	a.typ("y")
	a.waitFor("✓ approved: approval 2", 3*time.Second)

	v := openTerm(t, ts, ts.viewer, 200, 60)
	v.waitFor("Coordinate the v2.0 release", 10*time.Second)
	v.typ("2") // the agents of the open tree
	v.typ("j") // #5, which asked for approval 2
	time.Sleep(200 * time.Millisecond)
	v.typ("i")
	v.waitFor("decided: approve by alice@desk ("+gossh.FingerprintSHA256(ts.approve.signer.PublicKey())[:12], 5*time.Second)
}

// --read-only: nobody decides, and every session says why.
func TestServeReadOnly(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ReadOnly = true })
	if ts.srv.AuditPath() != "" {
		t.Error("a read-only server opened an audit log")
	}
	a := openTerm(t, ts, ts.approve, 120, 40)
	a.waitFor("Coordinate the v2.0 release", 10*time.Second)
	selectApproval2(a)
	a.typ("a")
	a.waitFor("the server is read-only", 3*time.Second)
	if q := approvalOf(t, ts.store, "2"); q.Resolved {
		t.Fatalf("decided on a read-only server: %+v", q)
	}
}
