package leviath

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The watcher's safety tick calls Version every second, so its cost is an
// idle explorer's: on 10 000 runs, three stats each, a tenth of a core.
// The files of a run in a terminal status (is_terminal_run: Leviath writes
// nothing more to it) are not stat'ed; a live run's append, and a run
// directory added or removed, still move it.
func TestVersionSkipsEndedRuns(t *testing.T) {
	fx, s := openFx(t)
	head(t, s) // a refresh: the store knows which runs ended
	v := func() uint64 {
		t.Helper()
		n, err := s.version()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := v()
	ended := fx.gens[idChangelog]
	if ended.meta.status != "complete" {
		t.Fatalf("the changelog run is %q", ended.meta.status)
	}
	later := time.Unix(t0+3600, 0)
	if err := os.Chtimes(filepath.Join(ended.dir, "meta.json"), later, later); err != nil {
		t.Fatal(err)
	}
	if v() != before {
		t.Error("a file of a completed run was stat'ed")
	}
	live := fx.gens[idRoot]
	live.appendBytes(live.progressFrame(t0+900, live.appendD("conversation", turnE("More."))))
	after := v()
	if after == before {
		t.Fatal("an append to a live run did not move the version")
	}
	if err := os.Mkdir(filepath.Join(fx.runs, "new-1785428000-0b0b0b0b0b0b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if v() == after {
		t.Error("a new run directory did not move the version")
	}
}
