package serve

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/testkit/auditlog"
)

// A key file edited so that it no longer grants a key, or that cannot be
// read at all, grants nothing from then on (not the keys last read): the
// key is refused from its next connection, a session it has open cannot
// decide any more, and the log and the status bars say why. The client is
// golang.org/x/crypto/ssh's.
func TestKeyFileFailsClosed(t *testing.T) {
	ts := startServer(t, nil)
	approvers := filepath.Join(filepath.Dir(ts.store), "approvers")
	sess := openTerm(t, ts, ts.approve, 200, 40)
	watcher := openTerm(t, ts, ts.viewer, 200, 40)
	sess.waitFor("Coordinate the v2.0 release", 10*time.Second)
	selectApproval2(sess)
	sess.waitFor("alice@desk (approver)", 2*time.Second)

	// The standard from= option, for an address the test is not at.
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(approvers, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`from="10.0.0.1" ` + ts.approve.line())
	if c, err := dial(ts, ts.approve); err == nil {
		c.Close()
		t.Fatal(`a key whose only line says from="10.0.0.1" was let in from 127.0.0.1`)
	}
	sess.typ("a")
	sess.typ("y")
	sess.waitFor("no longer decides", 5*time.Second)
	if q := approvalOf(t, ts.store, "2"); q.Resolved {
		t.Fatalf("a key refused by its from= decided approval 2: %+v", q)
	}
	refused := false
	for _, r := range auditlog.Read(t, ts.srv.AuditPath()) {
		if r.Outcome == audit.Won {
			t.Errorf("the audit log has a decision won by a key its file no longer grants: %+v", r)
		}
		refused = refused || r.Outcome == audit.Refused && strings.Contains(r.Held, "no longer decides")
	}
	if !refused {
		t.Error("no refused line in the audit log for the decision of a key its file no longer grants")
	}

	// The file gone: nothing from it, and everyone is told.
	os.Remove(approvers)
	l := waitLog(t, ts, "grants nothing")
	if !strings.Contains(l, "--approvers "+approvers) || !strings.Contains(l, "no such file") {
		t.Errorf("log line %q", l)
	}
	sess.waitFor("--approvers no such file or directory: grants nothing", 10*time.Second)
	watcher.waitFor("--approvers no such file or directory: grants nothing", 10*time.Second)
	if c, err := dial(ts, ts.approve); err == nil {
		c.Close()
		t.Fatal("a key was let in from a key file that is gone")
	}

	// A line that is not a key: the whole file grants nothing.
	write(ts.approve.line() + "ssh-ed25519 AAAA-not-base64 eve\n")
	waitLog(t, ts, "line 2: not a public key")
	if c, err := dial(ts, ts.approve); err == nil {
		c.Close()
		t.Fatal("a key was let in from a key file that does not parse")
	}

	// Fixed, with a from= that allows this address: in again, and the
	// status bars clear.
	write(`from="10.0.0.0/8,127.0.0.1" ` + ts.approve.line())
	c, err := dial(ts, ts.approve)
	if err != nil {
		t.Fatalf(`from="10.0.0.0/8,127.0.0.1" refused 127.0.0.1: %v`, err)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(watcher.scr.String(), "grants nothing") {
		if time.Now().After(deadline) {
			t.Fatalf("the status bar still says the file grants nothing:\n%s", watcher.scr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// An option vigil serve does not enforce: that key is refused, with a
	// line that names it; a negated from= refuses.
	write(`command="/bin/false" ` + ts.approve.line())
	waitLog(t, ts, "option command is not enforced")
	if c, err := dial(ts, ts.approve); err == nil {
		c.Close()
		t.Fatal("a key with command= was let in")
	}
	write(`from="!127.0.0.1,*" ` + ts.approve.line())
	time.Sleep(50 * time.Millisecond)
	if c, err := dial(ts, ts.approve); err == nil {
		c.Close()
		t.Fatal(`from="!127.0.0.1,*" let 127.0.0.1 in`)
	}
}

// from= patterns as sshd matches them with UseDNS no (match.c
// match_host_and_ip, addrmatch.c addr_match_list): networks, addresses,
// wildcards against the address's text, a negation winning wherever it is.
func TestFromPatterns(t *testing.T) {
	for _, c := range []struct {
		pats string
		ip   string
		want bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
		{"10.0.0.0/8", "10.1.2.3", true},
		{"10.0.0.0/8", "11.0.0.1", false},
		{"192.168.1.*", "192.168.1.77", true},
		{"192.168.1.?", "192.168.1.77", false},
		{"*,!10.0.0.5", "10.0.0.5", false},
		{"!10.0.0.5,*", "10.0.0.6", true},
		{"::1", "::1", true},
		{"2001:db8::/32", "2001:db8::7", true},
		{"*.example.com", "127.0.0.1", false}, // hostnames are not resolved
		{"*", "203.0.113.9", true},
	} {
		ko, err := optionsOf([]string{`from="` + c.pats + `"`})
		if err != nil {
			t.Fatalf("%s: %v", c.pats, err)
		}
		if got := fromAllows(ko.from, net.ParseIP(c.ip)); got != c.want {
			t.Errorf("from=%q for %s: %v, want %v", c.pats, c.ip, got, c.want)
		}
	}
	for _, bad := range []string{`from="10.0.0.1/8"`, `from="a,,b"`, `command="x"`, `no-pty`, `restrict`, `expiry-time="20300101"`} {
		if _, err := optionsOf([]string{bad}); err == nil {
			t.Errorf("%s was taken", bad)
		}
	}
	for _, good := range []string{`restrict,pty`, `no-port-forwarding`, `no-agent-forwarding`, `no-X11-forwarding`, `no-user-rc`, `permitopen="h:1"`} {
		if _, err := optionsOf(strings.Split(good, ",")); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}

// A very long key comment is cut short where it is shown and logged.
func TestLongKeyCommentIsCut(t *testing.T) {
	u := newUser(t, strings.Repeat("x", 5051))
	keys, _, err := parseAuthorizedKeys([]byte(u.line()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range keys {
		if n := len([]rune(e[0].who.Name)); n > maxKeyName {
			t.Errorf("a name of %d characters", n)
		}
	}
}
