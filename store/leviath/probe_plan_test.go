package leviath

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The probe (version, every second) goes through the run directories'
// names only when the listing or the set of ended runs was replaced: an
// idle probe of ten thousand runs looks at the live ones alone. What it
// sums still moves with an append to a live run and with a run directory
// added.
func TestIdleProbeGoesThroughNoRunDirectory(t *testing.T) {
	fx, s := openFx(t)
	head(t, s) // a refresh: the store knows which runs ended
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(fx.runs, old, old); err != nil { // a listing that can be reused
		t.Fatal(err)
	}
	v := func() uint64 {
		t.Helper()
		n, err := s.version()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := v()
	planned := s.namesPlanned.Load()
	if planned == 0 {
		t.Fatal("the first probe went through no run directory")
	}
	for range 3 {
		if v() != first {
			t.Fatal("the version moved with nothing written")
		}
	}
	if n := s.namesPlanned.Load() - planned; n != 0 {
		t.Errorf("three idle probes went through %d run directories, want 0", n)
	}
	live := fx.gens[idRoot]
	live.appendBytes(live.progressFrame(t0+900, live.appendD("conversation", turnE("More."))))
	appended := v()
	if appended == first {
		t.Fatal("an append to a live run did not move the version")
	}
	if err := os.Mkdir(filepath.Join(fx.runs, "new-1785428000-0b0b0b0b0b0b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if v() == appended {
		t.Error("a new run directory did not move the version")
	}
}
