package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/union"
)

// loadCounted counts a store's whole loads (Runs).
type loadCounted struct {
	store.Source
	loads atomic.Int32
}

func (s *loadCounted) Runs(ctx context.Context) ([]store.Run, error) {
	s.loads.Add(1)
	return s.Source.Runs(ctx)
}

// Another store is put at beta's path while the explorer shows alpha and
// beta: beta alone is loaded again (its old runs gone from the list, the
// new one's there, its approval in the queue), alpha is not read whole
// again and the explorer is not reopened.
func TestSeveralStoresOneReplacedIsReloadedAlone(t *testing.T) {
	dir := t.TempDir()
	alphaPath, betaPath := filepath.Join(dir, "alpha.sqlite3"), filepath.Join(dir, "beta.sqlite3")
	pyStore(t, alphaPath, "build alpha")
	pyStore(t, betaPath, "ship beta")
	asrc, err := store.Open(alphaPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	alpha := &loadCounted{Source: asrc}
	bsrc, err := store.Open(betaPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := union.New([]union.Member{{Name: alphaPath, Source: alpha},
		{Name: betaPath, Source: bsrc, Reopen: func() (store.Source, error) { return store.Open(betaPath, store.Options{}) }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	var reopens atomic.Int32
	d := &driver{t: t, clock: time.Now(), wait: cmdTimeout}
	d.m = New(Options{Source: set.Source(), Reopen: func() (store.Source, error) { reopens.Add(1); return set.Source(), nil },
		NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return d.clock }})
	t.Cleanup(d.m.Close)
	d.send(tea.WindowSizeMsg{Width: 120, Height: 32})
	d.run(d.m.Init())
	d.contains("build alpha", "ship beta")
	w, err := set.Wakeups()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := alpha.loads.Load()

	other := filepath.Join(t.TempDir(), "gamma.sqlite3")
	pyStore(t, other, "deploy gamma")
	pyExec(t, other, `db.execute("INSERT INTO runs (goal, file, status, outcome, started_at) VALUES ('third gamma', 'f', 'completed', 'done', '2026-12-01T09:00:00Z')")`)
	for _, suf := range []string{"-wal", "-shm"} {
		os.Remove(betaPath + suf)
	}
	if err := os.Rename(other, betaPath); err != nil {
		t.Fatal(err)
	}
	// The set's watcher sees the other file at beta's path.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(d.screen(), "deploy gamma") {
		if time.Now().After(deadline) {
			t.Fatalf("beta's new store never shown:\n%s", d.screen())
		}
		select {
		case <-w.C():
			w.Ack(true)
		case <-time.After(50 * time.Millisecond):
		}
		d.refresh()
	}
	d.send(tickMsg(d.clock))
	d.contains("build alpha", "deploy gamma", "third gamma", "beta read whole again")
	d.advance(6 * time.Second)
	d.send(tickMsg(d.clock))
	d.contains("2 stores")
	d.lacks("ship beta")
	if n := alpha.loads.Load() - before; n != 0 {
		t.Errorf("alpha was loaded whole %d times because beta was replaced", n)
	}
	if n := reopens.Load(); n != 0 {
		t.Errorf("the explorer reopened the set %d times", n)
	}
	if n := set.Reloads(); n["beta"] != 1 || n["alpha"] != 0 {
		t.Errorf("reloads %v", n)
	}
	// beta's new approval is in the one queue, alpha's is still there.
	d.press("6")
	d.contains("approval beta/1  wri… #beta/2 deploy gam", "approval alpha/1", "Timeline · #beta/2 deploy gamma")
}
