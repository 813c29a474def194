package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/union"
)

// fixtureSet is the explorer on two fixture stores, alpha and beta, on the
// fixture's clock (the frames are the same on every machine).
func fixtureSet(t *testing.T, w, h int) (*driver, *union.Set, [2]string) {
	t.Helper()
	var paths [2]string
	var ms []union.Member
	for i, name := range []string{"alpha.sqlite3", "beta.sqlite3"} {
		dir := t.TempDir()
		p, err := fixture.Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		paths[i] = filepath.Join(dir, name)
		for _, suf := range []string{"", "-wal", "-shm"} {
			if err := os.Rename(p+suf, paths[i]+suf); err != nil && suf == "" {
				t.Fatal(err)
			}
		}
		src, err := store.Open(paths[i], store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := paths[i]
		ms = append(ms, union.Member{Name: path, Source: src, Reopen: func() (store.Source, error) { return store.Open(path, store.Options{}) }})
	}
	set, err := union.New(ms)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	d := &driver{t: t, clock: fixture.Now, wait: cmdTimeout}
	d.m = New(Options{Source: set.Source(), Reopen: func() (store.Source, error) { return set.Source(), nil },
		NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return d.clock }, StoreLabel: "alpha.sqlite3 beta.sqlite3"})
	t.Cleanup(d.m.Close)
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(d.m.Init())
	return d, set, paths
}

// Two stores at the three sizes: the store column, the merged queue, and
// with beta gone, beta alone marked offline.
func TestGoldenSeveralStores(t *testing.T) {
	for _, size := range fitSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d, _, _ := fixtureSet(t, size[0], size[1])
			d.press("6")
			golden.RequireEqual(t, d.screen())
		})
	}
	for _, size := range fitSizes {
		t.Run(fmt.Sprintf("offline-%dx%d", size[0], size[1]), func(t *testing.T) {
			d, set, paths := fixtureSet(t, size[0], size[1])
			w, err := set.Wakeups()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			keep := filepath.Join(t.TempDir(), "beta.sqlite3")
			for _, suf := range []string{"", "-wal", "-shm"} {
				os.Rename(paths[1]+suf, keep+suf)
			}
			deadline := time.Now().Add(10 * time.Second)
			for set.Stores()[1].Offline == "" {
				if time.Now().After(deadline) {
					t.Fatal("beta never went offline")
				}
				select {
				case <-w.C():
				case <-time.After(50 * time.Millisecond):
				}
			}
			d.send(tickMsg(d.clock))
			golden.RequireEqual(t, d.screen())
		})
	}
}
