package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/internal/decision"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
)

// A store replaced at the served path is another store: alice's decision
// in the old one does not name her as the decider of the same request in
// the new one, which bob denied with a local `vigil deny` (its own audit
// log, as the CLI keeps it). Neither the running server (whose tail opened
// the new store) nor a server started afterwards on the same state
// directory may say "by alice@desk".
func TestReplacedStoreDoesNotInheritDeciders(t *testing.T) {
	ts := startServer(t, nil)
	a := openTerm(t, ts, ts.approve, 120, 40)
	a.waitFor("Coordinate the v2.0 release", 10*time.Second)
	selectApproval2(a)
	a.waitFor("alice@desk (approver)", 2*time.Second)
	a.typ("a")
	a.typ("y")
	a.waitFor("✓ approved: approval 2", 5*time.Second)

	// A new store renamed over the old one, as a harness starting afresh
	// (the old one's WAL files gone with it).
	fresh, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{"-wal", "-shm"} {
		os.Remove(ts.store + suf)
	}
	for _, suf := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(fresh+suf, ts.store+suf); err != nil && suf == "" {
			t.Fatal(err)
		}
	}
	bobLog, err := audit.Open(filepath.Join(t.TempDir(), audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer bobLog.Close()
	src, err := store.Open(ts.store, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bob := &decision.Maker{Who: audit.Who{Name: "bob@laptop"}, Via: "vigil deny", Log: bobLog}
	res, err := bob.Make(context.Background(), src, decision.Ask{Decision: store.Decision{
		Key: store.RequestKey{Kind: store.Approval, ID: "2"}, Verdict: store.VerdictDeny, Text: "not now"}})
	src.Close()
	if err != nil || !res.Won {
		t.Fatalf("the local deny: %+v %v", res, err)
	}

	seeDecider := func(ts *testServer) string {
		v := openTerm(t, ts, ts.viewer, 200, 60)
		v.waitFor("Coordinate the v2.0 release", 20*time.Second)
		v.typ("2") // the agents of the open tree
		v.typ("j") // #5, which asked for approval 2
		time.Sleep(200 * time.Millisecond)
		v.typ("i")
		v.waitFor("decided: deny", 20*time.Second)
		for _, l := range strings.Split(v.scr.String(), "\n") {
			if strings.Contains(l, "decided: deny") {
				return l
			}
		}
		return ""
	}
	if l := seeDecider(ts); strings.Contains(l, "alice") {
		t.Errorf("the running server names alice for bob's deny in the new store: %q", strings.TrimSpace(l))
	}
	again := startServer(t, func(c *Config) { c.Stores, c.StateDir = []string{ts.store}, ts.state })
	again.store = ts.store
	if l := seeDecider(again); strings.Contains(l, "alice") {
		t.Errorf("a server started after the replacement names alice for bob's deny: %q", strings.TrimSpace(l))
	}
}
