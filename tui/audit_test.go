package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/store"
)

// A decision made with the explorer's keys is in the person's audit log
// (by default under $XDG_STATE_HOME): one attempt line before the store
// is written and one outcome line after, each naming who decided, through
// the explorer, in which store.
func TestExplorerDecisionIsAudited(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("USER", "ann")
	d := newDriver(t, 120, 40)
	focusRequest(d, "approval 2")
	d.press("a", "y")
	d.contains("✓ approved: approval 2")
	b, err := os.ReadFile(filepath.Join(state, "vigil", audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), b)
	}
	for i, want := range []string{audit.Attempt, audit.Won} {
		var r audit.Record
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatal(err)
		}
		if r.Outcome != want || !strings.HasPrefix(r.Who.Name, "ann@") || r.Channel != "the explorer" ||
			r.Store != d.path || r.Request != "approval 2" || r.Verdict != string(store.VerdictApprove) {
			t.Errorf("line %d: %+v; want %s", i, r, want)
		}
	}
}
