package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Lines are appended, each whole; the winners are read back by store, the
// newest line for a request winning, a torn last line skipped.
func TestAppendAndWinners(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", "vigil", FileName)
	l, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	who := Who{Name: "alice@desk", Fingerprint: "SHA256:abc"}
	d := store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "2"}, Verdict: store.VerdictApprove}
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	// Another store once at /s/a, and a line written without an identity:
	// neither names who decided in the store there now.
	old := Of("/s/a", store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "5"}}, "", who, "ssh x", store.DecideResult{Won: true}, nil, now)
	old.StoreID = "old"
	anon := Of("/s/a", store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "6"}}, "", who, "ssh x", store.DecideResult{Won: true}, nil, now)
	for _, r := range []Record{
		old, anon,
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{Won: true}, nil, now),
		Of("/s/b", d, "", who, "ssh x", store.DecideResult{Won: true}, nil, now),
		Of("/s/a", store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "3"}}, "", who, "ssh x",
			store.DecideResult{Decision: "deny", DecidedBy: "bob"}, nil, now),
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{}, &store.RefusedError{Key: d.Key, Reason: "run ended"}, now),
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{}, errors.New("disk full"), now),
	} {
		if r.Store == "/s/a" && r.StoreID == "" && r.Request != "approval 6" {
			r.StoreID = "A"
		}
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-12-01T14:00:00Z","store":"/s/a","request":"approval 9","outcome":"wo`)
	f.Close()
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	b, _ := os.ReadFile(p)
	lines := strings.Split(string(b), "\n")
	for _, want := range []string{`"outcome":"won"`, `"outcome":"lost","held":"deny by bob"`, `"outcome":"refused","held":"approval 2 not decided: run ended"`, `"outcome":"error","held":"disk full"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in\n%s", want, b)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d lines", len(lines))
	}
	w, err := Winners(p, "/s/a", "A")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || w["approval 2"].Who != who || !strings.Contains(w["approval 2"].Describe(), "alice@desk (SHA256:abc) via ssh x") {
		t.Errorf("winners %+v", w)
	}
	if w, _ := Winners(filepath.Join(t.TempDir(), "none"), "/s/a", "A"); len(w) != 0 {
		t.Error("a missing log has winners")
	}
}

// A store's identity is the file, not its name: the same file keeps it
// through writes, a file renamed over it has another.
func TestStoreIDFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "runs.sqlite3")
	os.WriteFile(p, []byte("one"), 0o600)
	id := StoreID(p)
	if id == "" {
		t.Fatal("no identity for a regular file")
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("more")
	f.Close()
	if StoreID(p) != id {
		t.Error("an append changed the identity")
	}
	os.WriteFile(p+".new", []byte("two"), 0o600)
	os.Rename(p+".new", p)
	if StoreID(p) == id {
		t.Error("a file renamed over the store kept its identity")
	}
	if StoreID("ssh://host/x") != "" || StoreID(filepath.Join(dir, "none")) != "" {
		t.Error("a URL or a missing path has an identity")
	}
}
