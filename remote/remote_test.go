package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// fakeSSH is an "ssh" that runs the remote command with sh on this
// machine: the link is a pipe to a process, as ssh's is.
func fakeSSH(t *testing.T) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakessh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nfor last; do :; done\nexec sh -c \"$last\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{p}
}

// script is a far-side "vigil" that is a shell script.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vigil")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"ssh://build1/srv/runs.sqlite3":          {Host: "build1", Path: "/srv/runs.sqlite3"},
		"ssh://ci@build1:2200/~/runs.sqlite3":    {User: "ci", Host: "build1", Port: "2200", Path: "~/runs.sqlite3"},
		"ssh://build1//srv/x.sqlite3":            {Host: "build1", Path: "/srv/x.sqlite3"},
		"ssh://[::1]:22/tmp/a b.sqlite3":         {Host: "::1", Port: "22", Path: "/tmp/a b.sqlite3"},
		"ssh://h/home/me/.local/share/leviath/x": {Host: "h", Path: "/home/me/.local/share/leviath/x"},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"ssh://h", "ssh:///x", "ssh://u:pw@h/x", "http://h/x"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestShellQuote(t *testing.T) {
	c := &Client{t: Target{Host: "h", Path: "~/my runs/it's.sqlite3"}, opt: Options{SSH: []string{"ssh"}, RemoteVigil: "vigil"}}
	a := c.argv()
	if got := a[len(a)-1]; got != `vigil agent --stdio --store ~/'my runs/it'\''s.sqlite3'` {
		t.Errorf("remote command %s", got)
	}
}

// A far side without vigil, with an old vigil, with another protocol: one
// line each that says which.
func TestDialRefusals(t *testing.T) {
	ssh := fakeSSH(t)
	tg := Target{Host: "far", Path: "/x.sqlite3"}
	for _, c := range []struct{ vigil, want string }{
		{"/nonexistent/vigil", "vigil is not installed on far"},
		{script(t, `echo 'vigil: unknown command "agent", and no store file of that name' >&2; exit 2`), "has no agent command"},
		{script(t, `echo '{"hello":{"proto":3,"vigil":"v9.0.0","instance":"x"}}'; cat >/dev/null`), "runs vigil v9.0.0, which speaks protocol 3; this vigil speaks 1–2"},
		{script(t, `echo '{"error":"/x.sqlite3: no such file"}'; exit 1`), "ssh://far/x.sqlite3: /x.sqlite3: no such file"},
		{script(t, `echo hello there`), "did not answer as vigil agent"},
		// A command that exits 0 at once is not an agent that "ended
		// before answering (exit -1)".
		{"/bin/true", `"/bin/true" exited 0 without answering: it is not vigil agent`},
	} {
		_, err := Dial(context.Background(), tg, Options{SSH: ssh, RemoteVigil: c.vigil})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", c.vigil, err, c.want)
		}
	}
}

// An ssh that a signal ends says so, rather than "exit -1".
func TestDialSSHKilled(t *testing.T) {
	_, err := Dial(context.Background(), Target{Host: "far", Path: "/x.sqlite3"},
		Options{SSH: []string{script(t, `kill -9 $$`)}, RemoteVigil: "vigil"})
	if err == nil || !strings.Contains(err.Error(), "ended before answering (signal: killed)") {
		t.Errorf("%v; want the signal named", err)
	}
}

// A decision in flight when the link drops is unknown, not retried; the
// store is offline until the link is made again, and a cursor of the old
// agent answers Reset.
func TestDecisionInFlightIsUnknown(t *testing.T) {
	ssh := fakeSSH(t)
	// An agent that says hello, answers Head, and never answers a
	// decision; each start writes a line to count the connections.
	dir := t.TempDir()
	far := script(t, `echo start >> `+dir+`/starts
echo '{"hello":{"proto":1,"vigil":"test","instance":"'$$'","format":"io-harness"}}'
while read -r line; do
  case "$line" in
  *'"Head"'*) id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); echo '{"id":'$id',"result":{"instance":"'$$'","epoch":1,"seq":0}}';;
  *'"Decide"'*) echo "$line" >> `+dir+`/decisions;;
  *'"Requests"'*) id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); echo '{"id":'$id',"result":[]}';;
  esac
done`)
	var logMu sync.Mutex
	var logged []string
	c, err := Dial(context.Background(), Target{Host: "far", Path: "/x"}, Options{SSH: ssh, RemoteVigil: far,
		BackoffMin: 100 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		Log: func(l string) { logMu.Lock(); logged = append(logged, l); logMu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := c.Source()
	cur, err := src.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "2"}, Verdict: store.VerdictApprove})
		done <- err
	}()
	// The decision has left when the far side has it.
	waitFile(t, filepath.Join(dir, "decisions"))
	c.mu.Lock()
	c.conn.cmd.Process.Kill()
	c.mu.Unlock()
	var unknown *UnknownError
	select {
	case err := <-done:
		if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "unknown") {
			t.Fatalf("a decision cut off by the link: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the decision did not return when the link dropped (offline %q)", c.Offline())
	}
	if off := c.Offline(); !strings.Contains(off, "the link dropped") {
		t.Errorf("offline %q", off)
	}
	if _, err := src.Runs(context.Background()); err == nil || !strings.Contains(err.Error(), "far is offline") {
		t.Errorf("a read while offline: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Offline() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("not reconnected: %s", c.Offline())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ch, _, err := src.Changes(context.Background(), cur)
	if err != nil || !ch.Reset {
		t.Errorf("the old agent's cursor after reconnecting: %+v %v", ch, err)
	}
	// Read again once the link is back, and said.
	deadline = time.Now().Add(5 * time.Second)
	for {
		logMu.Lock()
		all := strings.Join(logged, "\n")
		logMu.Unlock()
		if strings.Contains(all, "approval 2 was in flight when the link dropped: the store no longer lists it") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decision in flight was not read again:\n%s", all)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "decisions"))
	if n := strings.Count(string(b), "Decide"); n != 1 {
		t.Errorf("the decision was sent %d times", n)
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
