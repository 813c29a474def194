package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/watch"
)

// reopenDriver is a driver whose Reopen opens the path again, as vigil's.
func reopenDriver(t *testing.T, path string) *driver {
	t.Helper()
	var mu sync.Mutex
	var opened []store.Source
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range opened {
			s.Close()
		}
	})
	d := openDriver(t, path, 120, 40, func(o *Options) {
		o.Reopen = func() (store.Source, error) {
			s, err := ioharness.Open(path)
			if err == nil {
				mu.Lock()
				opened = append(opened, s)
				mu.Unlock()
			}
			return s, err
		}
	})
	// Reopens and reads of a store that changed under them reconnect:
	// on a loaded machine they may take longer than the usual wait, and a
	// read taken for a timer would be lost. The retry timers are longer
	// still, so they are never mistaken for a read.
	d.wait = retryMin - 100*time.Millisecond
	return d
}

func (d *driver) signal(k watch.Kind, reason string) {
	d.send(signalMsg{watch.Signal{Kind: k, Reason: reason}})
}

// retry fires the back-off timer of the last failure, as if it had run out.
func (d *driver) retry() { d.send(retryMsg{try: d.m.tries}) }

// shell runs a command in another process (in-place edits of the store
// must not open it here: this process holds SQLite connections to it).
func shell(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// A store deleted, then put back empty, then written whole again: the
// explorer marks what it shows as not current as soon as the store is gone,
// keeps retrying the reopen that failed on the empty file — on every later
// signal and on a back-off timer — and shows the new store once it can be
// read, current again.
func TestFailedReopenIsRetried(t *testing.T) {
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.sqlite3")
	func() {
		w, err := harness.Create(other)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.StartRun(context.Background(), "the store written again", "/w")
	}()
	d := reopenDriver(t, path)
	d.contains("Coordinate the v2.0 release", "live")
	d.lacks("NOT CURRENT")

	shell(t, "rm", path)
	d.signal(watch.Gone, "runs.sqlite3 was removed")
	d.contains("NOT CURRENT", "store gone", "as last read")
	d.lacks("· live")

	shell(t, "touch", path) // emptied: a file, but no store yet
	d.signal(watch.Replaced, "runs.sqlite3 appeared")
	d.contains("NOT CURRENT", "store unavailable")
	if why := d.m.NotCurrent(); !strings.Contains(why, "empty") {
		t.Errorf("not current because %q: want the reason (the file is empty)", why)
	}
	d.retry()
	d.contains("NOT CURRENT", "store unavailable")

	shell(t, "cp", other, path) // rewritten, in place
	d.signal(watch.Changed, "")
	d.contains("the store written again")
	d.lacks("NOT CURRENT", "Coordinate the v2.0 release")
}

// The back-off timer alone (no signal) retries a reopen that failed.
func TestFailedReopenIsRetriedOnTheTimer(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.sqlite3")
	shell(t, "cp", path, good)
	d := reopenDriver(t, path)
	shell(t, "truncate", "-s", "0", path)
	d.signal(watch.Replaced, "runs.sqlite3 was replaced by a different file")
	d.contains("NOT CURRENT", "store unavailable")
	first := d.m.tries
	shell(t, "cp", good, path)
	d.retry()
	if d.m.tries != 0 || d.m.stale != "" {
		t.Fatalf("after the timer: %d failures in a row, stale %q (first failure %d)", d.m.tries, d.m.stale, first)
	}
	d.contains("Coordinate the v2.0 release")
	d.lacks("NOT CURRENT")
}

// A store truncated in place reads as damaged and is marked not current;
// put back, it reads again and the mark goes, without a reopen.
func TestTruncatedThenRestoredStore(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.sqlite3")
	shell(t, "cp", path, backup)
	fi, _ := os.Stat(path)
	d := reopenDriver(t, path)
	gen := d.m.src.gen
	shell(t, "truncate", "-s", strconv.FormatInt(fi.Size()/2, 10), path)
	d.refresh()
	d.contains("NOT CURRENT", "cannot read the store")
	if why := d.m.NotCurrent(); !strings.Contains(why, "damaged") {
		t.Errorf("not current because %q: want it to say the store is damaged", why)
	}
	shell(t, "cp", backup, path)
	d.refresh()
	if why := d.m.NotCurrent(); why != "" {
		t.Fatalf("put back, the store is still not current: %s", why)
	}
	d.lacks("NOT CURRENT", "damaged")
	d.contains("Coordinate the v2.0 release")
	if d.m.src.gen != gen {
		t.Errorf("the store was reopened (generation %d → %d): the same store came back", gen, d.m.src.gen)
	}
}

// Another store copied over this one in place — as long or longer, so no
// table got shorter — is recognised as another store: the explorer opens
// it again and shows it, instead of folding its rows into the old picture.
func TestStoreCopiedOverInPlace(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.sqlite3")
	func() {
		w, err := harness.Create(other)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ctx := context.Background()
		for i := 0; i < 30; i++ {
			run, _ := w.StartRun(ctx, fmt.Sprintf("another store's run %d", i), "/w")
			for j := 1; j <= 5; j++ {
				w.CheckpointStep(ctx, run, harness.StepRecord{Step: j, Decision: "elsewhere"})
			}
		}
	}()
	d := reopenDriver(t, path)
	d.contains("Coordinate the v2.0 release")
	shell(t, "cp", other, path)
	d.refresh()
	d.contains("another store's run 29")
	d.lacks("Coordinate the v2.0 release", "NOT CURRENT")
	if d.m.src.gen == 0 {
		t.Error("the store copied over was not opened again")
	}
}

// The reopen path beside a live writer in this process and foreign
// parties: the store renamed away and back (Gone, then Replaced: the same
// inode returns) and a Reset are opened again while an embedded harness
// commits every 20 ms. The writer's WAL is never unlinked, the explorer
// follows the writer after each reopen, and every commit is in the file
// after it closes.
func TestReopenBesideALiveWriter(t *testing.T) {
	cli := foreign.SQLite3(t)
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := w.StartRun(ctx, "written while vigil reopens", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: 1, Decision: "first"}); err != nil {
		t.Fatal(err)
	}
	wal := foreign.WatchWAL(t, path)
	d := reopenDriver(t, path)

	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 1
		defer func() { done <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: n + 1, Decision: fmt.Sprintf("step %d", n+1)}); err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()
	look := func(when string) {
		t.Helper()
		cli.MustExec(t, path, "SELECT count(*) FROM steps")
		wal.Check(t, when)
	}
	for round := 0; round < 3; round++ {
		away := path + ".away"
		if err := os.Rename(path, away); err != nil {
			t.Fatal(err)
		}
		d.signal(watch.Gone, "runs.sqlite3 was moved away")
		d.contains("NOT CURRENT")
		if err := os.Rename(away, path); err != nil {
			t.Fatal(err)
		}
		d.signal(watch.Replaced, "runs.sqlite3 appeared")
		look(fmt.Sprintf("round %d: after the reopen", round))
		d.lacks("NOT CURRENT")
		d.send(changesMsg{from: from{d.m.src.gen}, ch: &store.Changes{Reset: true}, next: d.m.cursor})
		look(fmt.Sprintf("round %d: after the reopen on a reset", round))
		time.Sleep(60 * time.Millisecond)
		d.refresh()
		look(fmt.Sprintf("round %d: after a refresh", round))
	}
	close(stop)
	n := <-done
	d.refresh()
	if _, ok := d.m.st.model.Run(run); !ok {
		t.Fatal("the explorer lost the writer's run")
	}
	last := fmt.Sprintf("step %d", n)
	shown := false
	d.m.st.agent = agentView{}
	d.run(d.m.selectAgent(run))
	for i := 0; i < d.m.st.agent.Len(); i++ {
		s, _ := d.m.st.agent.Step(i)
		shown = shown || s.Decision == last
	}
	if !shown {
		t.Errorf("after the reopens the explorer does not follow the writer: %q is not on its timeline", last)
	}
	wal.Check(t, "before the writer closes")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := cli.MustExec(t, path, "SELECT count(*) FROM steps WHERE run_id = "+run)
	if got != strconv.Itoa(n) {
		t.Errorf("the file holds %s of the writer's %d committed steps", got, n)
	}
}
