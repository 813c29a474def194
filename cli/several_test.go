package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// vigil A B: one explorer over both, its ids prefixed by store; a store
// that does not open is one line naming it; --store with several is a
// usage error.
func TestSeveralStoresExplorer(t *testing.T) {
	t.Parallel()
	a, b := fixtureStore(t), fixtureStore(t)
	spy := &explorerSpy{}
	h := newHarness(t)
	h.explore = spy.explore
	h.run(a, b, "--run", "runs2/4", "--read-only").wantCode(t, 0)
	o := spy.opts[0]
	set, ok := o.Source.(store.StoreSet)
	if !ok || o.Wakeups == nil || o.Reopen == nil || o.Run != "runs2/4" {
		t.Fatalf("explorer started with %+v", o)
	}
	st := set.Stores()
	if len(st) != 2 || st[0].Prefix != "runs" || st[1].Prefix != "runs2" || st[0].Name != a || st[1].Name != b {
		t.Fatalf("stores %+v", st)
	}
	if len(spy.runs[0]) == 0 || len(spy.runs[0])%2 != 0 {
		t.Fatalf("runs of both stores: %d", len(spy.runs[0]))
	}
	per := map[string]int{}
	for _, r := range spy.runs[0] {
		p, _, _ := strings.Cut(r.ID, "/")
		per[p]++
	}
	if per["runs"] != per["runs2"] || per["runs"] == 0 {
		t.Errorf("runs by store %v: want the same fixture in each", per)
	}
	if ro, _ := o.Source.ReadOnly(); !ro {
		t.Error("--read-only did not open every store read-only")
	}

	r := h.run(a, b, "--run", "runs2/99")
	r.wantCode(t, ExitError)
	r.oneLine(t, "no such run: runs2/99")

	r = h.run(a, b, "--run", "4")
	r.wantCode(t, ExitUsage)
	r.oneLine(t, "a run is named store/id", "runs/4")

	missing := filepath.Join(t.TempDir(), "nope.sqlite3")
	r = h.run(a, missing)
	r.wantCode(t, ExitError)
	r.oneLine(t, missing)

	r = h.run(a, b, "--store", a)
	r.wantCode(t, ExitUsage)
	r.oneLine(t, "several stores named and --store")

	r = h.run(a, a)
	r.wantCode(t, ExitUsage)
	r.oneLine(t, "named twice")
	if len(spy.opts) != 1 {
		t.Errorf("the explorer was started %d times; want once", len(spy.opts))
	}
}
