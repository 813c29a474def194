package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/tui"
)

// explorerSpy records how the explorer was started.
type explorerSpy struct {
	mu    sync.Mutex
	opts  []tui.Options
	paths []string
	runs  [][]store.Run
	// during runs while the explorer is "open".
	during func(opt tui.Options) error
}

func (s *explorerSpy) explore(ctx context.Context, _ *app, opt tui.Options) error {
	runs, _ := opt.Source.Runs(ctx)
	s.mu.Lock()
	s.opts = append(s.opts, opt)
	s.paths = append(s.paths, opt.Source.Path())
	s.runs = append(s.runs, runs)
	s.mu.Unlock()
	if s.during != nil {
		return s.during(opt)
	}
	return nil
}

func TestExplorerOptions(t *testing.T) {
	t.Parallel()
	p := fixtureStore(t)
	spy := &explorerSpy{}
	h := newHarness(t)
	h.explore = spy.explore
	h.env = append(h.env, "NO_COLOR=1")

	h.run(p, "--run", "4", "--poll", "150ms", "--read-only").wantCode(t, 0)
	o := spy.opts[0]
	if spy.paths[0] != p || o.Run != "4" || o.Poll != 150*time.Millisecond || !o.NoColor || o.Reopen == nil {
		t.Fatalf("explorer started with %+v on %s", o, spy.paths[0])
	}
	if ro, _ := o.Source.ReadOnly(); !ro {
		t.Error("--read-only did not open the store read-only")
	}
	again, err := o.Reopen()
	if err != nil || again.Path() != p {
		t.Fatalf("Reopen: %v, %v", again, err)
	}

	// --store and $VIGIL_STORE name the store too.
	h.run("--store", p).wantCode(t, 0)
	h.env = append(h.env, "VIGIL_STORE="+p)
	h.run().wantCode(t, 0)
	if len(spy.paths) != 3 || spy.paths[1] != p || spy.paths[2] != p {
		t.Fatalf("opened %v", spy.paths)
	}
	if ro, _ := spy.opts[2].Source.ReadOnly(); ro {
		t.Error("opened read-only without --read-only")
	}

	r := h.run(p, "--run", "99")
	r.wantCode(t, ExitError)
	r.oneLine(t, "no such run: 99")
}

func TestDemoExplorer(t *testing.T) {
	t.Parallel()
	spy := &explorerSpy{}
	var storePath string
	spy.during = func(opt tui.Options) error {
		// The demo is live while the explorer is open: a decision made
		// here reaches it.
		waitFor(t, 30*time.Second, "a request from the demo", func() bool {
			reqs, err := opt.Source.Requests(context.Background(), true)
			return err == nil && len(reqs) > 0
		})
		return nil
	}
	h := newHarness(t)
	h.explore = spy.explore
	var out, errb syncBuffer
	a := h.app(&out, &errb)
	a.demoReady = func(p string) { storePath = p }
	code := a.run(context.Background(), []string{"demo", "--speed", "20", "--seed", "3"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if len(spy.opts) != 1 {
		t.Fatalf("explorer started %d times", len(spy.opts))
	}
	// The first thing on screen is the live run.
	o := spy.opts[0]
	var live store.Run
	for _, r := range spy.runs[0] {
		if r.ID == o.Run {
			live = r
		}
	}
	if o.Run == "" || !live.IsRoot() || live.Status != store.StatusRunning {
		t.Fatalf("explorer opened on run %q (%+v)", o.Run, live)
	}
	if !strings.Contains(o.StoreLabel, "demo") {
		t.Errorf("store label %q", o.StoreLabel)
	}
	// Quitting stopped the demo and removed its temporary store.
	if storePath == "" {
		t.Fatal("no demo store")
	}
	if _, err := os.Stat(filepath.Dir(storePath)); !os.IsNotExist(err) {
		t.Fatalf("the temporary store is still there: %v", err)
	}
}

func TestDemoKeptStore(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "kept.sqlite3")
	spy := &explorerSpy{}
	h := newHarness(t)
	h.explore = spy.explore
	h.run("demo", "--store", p, "--speed", "50").wantCode(t, 0)
	s, err := ioharness.OpenReadOnly(p)
	if err != nil {
		t.Fatalf("the kept store: %v", err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background())
	if err != nil || len(runs) == 0 {
		t.Fatalf("kept store has %d runs (%v)", len(runs), err)
	}
	// A store that exists is never written over.
	r := h.run("demo", "--store", p)
	r.wantCode(t, ExitError)
	r.oneLine(t, p+": a file already exists there")
	// --no-tui too: one line, nothing printed before it (it printed the
	// store's banner first).
	r = h.run("demo", "--store", p, "--no-tui")
	r.wantCode(t, ExitError)
	r.oneLine(t, p+": a file already exists there")
	if r.stdout != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
}

func TestDemoNoTUI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var out, errb syncBuffer
	a := h.app(&out, &errb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- a.run(ctx, []string{"demo", "--no-tui", "--speed", "50"}) }()
	waitFor(t, 10*time.Second, "demo log lines", func() bool { return strings.Count(out.String(), "\n") >= 5 })
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("demo --no-tui did not stop")
	}
	contains(t, out.String(), "started: ")
	if !sanitize.Safe(out.String()) {
		t.Error("the demo log holds control characters")
	}
	contains(t, errb.String(), "vigil: demo store ", "--store ")
}
