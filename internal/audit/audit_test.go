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
	for _, r := range []Record{
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{Won: true}, nil, now),
		Of("/s/b", d, "", who, "ssh x", store.DecideResult{Won: true}, nil, now),
		Of("/s/a", store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "3"}}, "", who, "ssh x",
			store.DecideResult{Decision: "deny", DecidedBy: "bob"}, nil, now),
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{}, &store.RefusedError{Key: d.Key, Reason: "run ended"}, now),
		Of("/s/a", d, "", who, "ssh x", store.DecideResult{}, errors.New("disk full"), now),
	} {
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
	if len(lines) != 6 {
		t.Errorf("%d lines", len(lines))
	}
	w, err := Winners(p, "/s/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || w["approval 2"].Who != who || !strings.Contains(w["approval 2"].Describe(), "alice@desk (SHA256:abc) via ssh x") {
		t.Errorf("winners %+v", w)
	}
	if w, _ := Winners(filepath.Join(t.TempDir(), "none"), "/s/a"); len(w) != 0 {
		t.Error("a missing log has winners")
	}
}
