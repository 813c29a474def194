package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pushOnly disables every timer-driven path (safety tick, re-checks), so
// whatever reaches the consumer came straight from file-system events. Only
// for plain files: a SQLite reader needs the re-checks (the commit-before-
// visible race happens at synchronous=NORMAL too when the writer is
// descheduled between its write() and publishing the commit).
func pushOnly(o Options) Options {
	o.SafetyPoll = time.Hour
	o.RecheckMin = time.Hour
	return o
}

// noSafety disables only the safety tick: events and the re-checks they arm
// are the whole mechanism.
func noSafety(o Options) Options {
	o.SafetyPoll = time.Hour
	return o
}

// startTail starts a watcher on db and a consumer that tails it. With
// dataVersion, the tail's PRAGMA data_version is the Version probe, as the
// store layer will set it up.
func startTail(t *testing.T, db string, o Options, dataVersion bool) (*Watcher, *tail, *consumer) {
	t.Helper()
	tl := newTail(db)
	t.Cleanup(tl.shutdown)
	o.Path = db
	if dataVersion {
		o.Version = tl.dataVersion
	}
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	c := startConsumer(t, w, tailHandlers(tl))
	// Initial load after the watch exists, as the store layer will do it.
	if _, err := tl.refresh(context.Background()); err != nil && !strings.Contains(err.Error(), "unable to open") {
		t.Fatal(err)
	}
	return w, tl, c
}

// A lone commit reaches the reader promptly, by events alone.
func TestPushDeliversEachCommit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agent.db")
	wr := startWriter(t, db, "NORMAL", "a")
	wr.insert()
	w, tl, _ := startTail(t, db, noSafety(Options{}), true)
	if w.Mode() != Push {
		t.Fatalf("mode = %v, want push", w.Mode())
	}
	var lat []time.Duration
	for range 30 {
		time.Sleep(15 * time.Millisecond) // pacing: lone commits, outside the coalescing window
		id, ret := wr.insert()
		eventually(t, 5*time.Second, func() bool { _, ok := tl.seenAt("a", id); return ok }, "row %d not seen", id)
		at, _ := tl.seenAt("a", id)
		lat = append(lat, at.Sub(ret))
	}
	p50, max := percentile(lat, 50), percentile(lat, 100)
	t.Logf("commit -> reader latency over %d lone commits: p50 %v, max %v; %+v", len(lat), p50, max, w.Stats())
	if p50 > 4*time.Millisecond {
		t.Errorf("median latency %v: lone commits are not delivered at once", p50)
	}
	if st := w.Stats(); st.EventsKept < uint64(len(lat)) {
		t.Errorf("fewer events than commits: %+v", st)
	}
}

// A 2 000-commits/s writer produces a bounded number of signals.
func TestBurstIsCoalesced(t *testing.T) {
	const n, coalesce = 2000, 20 * time.Millisecond
	dir := t.TempDir()
	db := filepath.Join(dir, "agent.db")
	wr := startWriter(t, db, "NORMAL", "a")
	wr.do("insert 1", 10*time.Second)
	w, tl, c := startTail(t, db, noSafety(Options{Coalesce: coalesce}), false)
	c.settle(600*time.Millisecond, 5*time.Second)
	before := c.count(Changed)
	start := time.Now()
	wr.do(fmt.Sprintf("rate 2000 %d %s", n, filepath.Join(dir, "w.log")), time.Minute)
	eventually(t, 10*time.Second, func() bool { return tl.count("a") == n+1 }, "only %d of %d rows seen", tl.count("a"), n+1)
	elapsed := time.Since(start)
	signals := c.count(Changed) - before
	// One signal a window, and a quarter more for windows a loaded machine
	// splits (65 against 63 at load 5 beside the whole suite); a watcher
	// that does not coalesce gives one a commit, hundreds more.
	bound := int(elapsed/coalesce)*5/4 + 12
	t.Logf("%d commits in %v -> %d Changed signals (bound %d); %+v", n, elapsed.Round(time.Millisecond), signals, bound, w.Stats())
	if signals > bound || signals > n/4 {
		t.Errorf("%d signals for %d commits in %v: not coalesced (bound %d)", signals, n, elapsed, bound)
	}
	if signals < 2 {
		t.Errorf("%d signals: expected several refreshes during a %v burst", signals, elapsed)
	}
}

// With synchronous=FULL the event (frames written) precedes visibility (after
// the fsync). The re-check must find each row well before the next commit.
func TestCommitBeforeVisibleRace(t *testing.T) {
	t.Run("stat", func(t *testing.T) { testCommitBeforeVisible(t, false) })
	t.Run("data_version", func(t *testing.T) { testCommitBeforeVisible(t, true) })
}

func testCommitBeforeVisible(t *testing.T, dataVersion bool) {
	db := filepath.Join(t.TempDir(), "agent.db")
	wr := startWriter(t, db, "FULL", "a")
	wr.insert()
	_, tl, c := startTail(t, db, noSafety(Options{}), dataVersion)
	var lat []time.Duration
	for range 15 {
		time.Sleep(40 * time.Millisecond) // sparse commits; each must be found before the next
		id, ret := wr.insert()
		eventually(t, 2*time.Second, func() bool { _, ok := tl.seenAt("a", id); return ok },
			"row %d not seen before the next commit", id)
		at, _ := tl.seenAt("a", id)
		lat = append(lat, at.Sub(ret))
	}
	empty := 0
	for _, r := range c.records() {
		if r.Kind == Changed && r.Events > 0 && r.found == 0 {
			empty++
		}
	}
	t.Logf("sync=FULL latency p50 %v max %v; event-triggered refreshes that found nothing (the race): %d",
		percentile(lat, 50), percentile(lat, 100), empty)
	if max := percentile(lat, 100); max > time.Second {
		t.Errorf("max latency %v", max)
	}
}

// wal_checkpoint(TRUNCATE) empties the -wal; tailing continues.
func TestCheckpointTruncate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agent.db")
	wr := startWriter(t, db, "NORMAL", "a")
	wr.do("insert 20", 10*time.Second)
	_, tl, _ := startTail(t, db, noSafety(Options{}), true)
	eventually(t, 5*time.Second, func() bool { return tl.count("a") == 20 }, "initial rows")
	f := wr.do("checkpoint", 10*time.Second)
	if f[0] != "0" {
		t.Fatalf("checkpoint busy: %v", f)
	}
	if fi, err := os.Stat(db + "-wal"); err != nil || fi.Size() != 0 {
		t.Fatalf("-wal not truncated: %v %v", fi, err)
	}
	for range 10 {
		id, _ := wr.insert()
		eventually(t, 5*time.Second, func() bool { _, ok := tl.seenAt("a", id); return ok }, "row %d after checkpoint", id)
	}
}

// Deleting db, -wal and -shm gives Gone; a new writer creating the database
// gives Replaced, and the new rows are read from id 1 again.
func TestDeleteAndRecreate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agent.db")
	a := startWriter(t, db, "NORMAL", "a")
	a.do("insert 5", 10*time.Second)
	w, tl, c := startTail(t, db, noSafety(Options{}), false)
	eventually(t, 5*time.Second, func() bool { return tl.count("a") == 5 }, "rows of a")
	a.stop()
	removeDB(t, db)
	eventually(t, 5*time.Second, func() bool { return c.count(Gone) == 1 }, "no Gone after deletion")

	b := startWriter(t, db, "NORMAL", "b")
	for range 5 {
		b.insert()
	}
	eventually(t, 5*time.Second, func() bool { return tl.count("b") == 5 }, "rows of the new db: %d", tl.count("b"))
	ks := c.kinds()
	if len(ks) < 2 || ks[0] != Gone || ks[1] != Replaced {
		t.Fatalf("signals %v, want gone then replaced", ks)
	}
	for _, r := range c.records() {
		if r.Kind != Changed {
			t.Logf("%v", r.Signal)
		}
	}
	if w.Mode() != Push {
		t.Errorf("mode %v", w.Mode())
	}
}

// rename(new, db) over the watched file gives Replaced (and no Gone), and the
// reader follows the new file.
func TestAtomicRenameReplace(t *testing.T) {
	dir := t.TempDir()
	db, other := filepath.Join(dir, "agent.db"), filepath.Join(dir, "new.db")
	a := startWriter(t, db, "NORMAL", "a")
	a.do("insert 3", 10*time.Second)
	a.stop()
	b := startWriter(t, other, "NORMAL", "b")
	b.do("insert 5", 10*time.Second)
	b.stop()
	if _, err := os.Stat(other + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("new.db still has a -wal: %v", err)
	}

	_, tl, c := startTail(t, db, noSafety(Options{}), false)
	if tl.count("a") != 3 {
		t.Fatalf("initial rows: %d", tl.count("a"))
	}
	if err := os.Rename(other, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return c.count(Replaced) == 1 }, "no Replaced after rename")
	eventually(t, 5*time.Second, func() bool { return tl.count("b") == 5 }, "rows of the new file: %d", tl.count("b"))
	if ks := c.kinds(); len(ks) != 1 {
		t.Errorf("signals %v, want only replaced", ks)
	}
}

// Polling fallback: forced by DisableNotify (stat probe) and by Poll
// (data_version probe). ModeChanged comes first; commits are still seen.
func TestPollingFallback(t *testing.T) {
	cases := []struct {
		name   string
		opts   func(*tail) Options
		reason string
		n      int
	}{
		{"DisableNotify", func(*tail) Options {
			return Options{DisableNotify: true, FallbackPoll: 100 * time.Millisecond}
		}, "disabled: polling every 100ms", 5},
		{"Poll", func(tl *tail) Options {
			return Options{Poll: 50 * time.Millisecond, Version: tl.dataVersion}
		}, "polling every 50ms", 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "agent.db")
			wr := startWriter(t, db, "NORMAL", "a")
			wr.insert()
			tl := newTail(db)
			t.Cleanup(tl.shutdown)
			o := tc.opts(tl)
			o.Path = db
			w, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			c := startConsumer(t, w, tailHandlers(tl))
			tl.refresh(context.Background())
			for range tc.n {
				id, _ := wr.insert()
				eventually(t, 5*time.Second, func() bool { _, ok := tl.seenAt("a", id); return ok }, "row %d", id)
			}
			recs := c.records()
			if recs[0].Kind != ModeChanged || recs[0].Mode != Poll || !strings.Contains(recs[0].Reason, tc.reason) {
				t.Fatalf("first signal %v, want ModeChanged(polling) %q", recs[0].Signal, tc.reason)
			}
			if w.Mode() != Poll {
				t.Errorf("Mode() = %v", w.Mode())
			}
			st := w.Stats()
			if st.EventsRead != 0 || st.ProbeHits == 0 {
				t.Errorf("polling read events or never probed: %+v", st)
			}
			if o.Version != nil && st.Rechecks != 0 {
				t.Errorf("polling an exact Version needs no re-checks: %+v", st)
			}
			t.Logf("%s: %q; %+v", tc.name, recs[0].Reason, w.Stats())
		})
	}
}

// An UPDATE of an existing row (no new rowid) is signalled, and a reader
// comparing data_version notices it.
func TestUpdateInPlace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "agent.db")
	wr := startWriter(t, db, "NORMAL", "a")
	wr.do("insert 3", 10*time.Second)
	_, tl, c := startTail(t, db, noSafety(Options{}), true)
	eventually(t, 5*time.Second, func() bool { return tl.count("a") == 3 }, "rows")
	c.settle(300*time.Millisecond, 5*time.Second)
	dv0, err := tl.dataVersion()
	if err != nil {
		t.Fatal(err)
	}
	n0, idx0 := c.count(Changed), len(c.records())
	if f := wr.do("update 2", 10*time.Second); f[0] != "1" {
		t.Fatalf("update affected %v rows", f[0])
	}
	eventually(t, 5*time.Second, func() bool { return c.count(Changed) > n0 }, "no Changed after an UPDATE")
	dv1, err := tl.dataVersion()
	if err != nil {
		t.Fatal(err)
	}
	if dv1 == dv0 {
		t.Errorf("data_version unchanged (%d) after the UPDATE", dv0)
	}
	for _, r := range c.records()[idx0:] {
		if r.Kind == Changed && r.found != 0 {
			t.Errorf("signal after UPDATE found %d new rows", r.found)
		}
	}
}

// Directory mode: a runs directory whose run subdirectories appear after the
// start; appends to their journals are signalled.
func TestDirectoryMode(t *testing.T) {
	runs := t.TempDir()
	w, err := New(pushOnly(Options{Path: runs, Names: []string{"run.lvr"}}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	total := int64(0)
	scan := func(context.Context) (int, error) {
		var sum int64
		subs, _ := filepath.Glob(filepath.Join(runs, "*", "run.lvr"))
		for _, p := range subs {
			if fi, err := os.Stat(p); err == nil {
				sum += fi.Size()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		grew := sum != total
		total = sum
		if grew {
			return 1, nil
		}
		return 0, nil
	}
	size := func() int64 { mu.Lock(); defer mu.Unlock(); return total }
	c := startConsumer(t, w, handlers{refresh: scan})
	want := int64(0)
	for _, run := range []string{"r1", "r2"} {
		if err := os.Mkdir(filepath.Join(runs, run), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			line := fmt.Sprintf("{\"run\":%q,\"step\":%d}\n", run, i)
			appendTo(t, filepath.Join(runs, run, "run.lvr"), line)
			want += int64(len(line))
			eventually(t, 5*time.Second, func() bool { return size() == want }, "%s step %d not seen (%d of %d bytes)", run, i, size(), want)
		}
		appendTo(t, filepath.Join(runs, run, "notes.txt"), "ignored\n")
	}
	if w.Mode() != Push || c.count(Changed) == 0 {
		t.Fatalf("mode %v, %d signals", w.Mode(), c.count(Changed))
	}
	t.Logf("%+v", w.Stats())
}

// The directory holding the database is removed (Gone) and recreated: the
// watch is re-added on the safety tick (Replaced) and events flow again.
func TestDirectoryRemovedAndBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	appendTo(t, db, "v1")
	w, err := New(Options{Path: db, SafetyPoll: 50 * time.Millisecond, RecheckMin: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := startConsumer(t, w, handlers{})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return c.count(Gone) == 1 }, "no Gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, db, "v2")
	eventually(t, 5*time.Second, func() bool { return c.count(Replaced) == 1 }, "no Replaced")
	kept := w.Stats().EventsKept
	appendTo(t, db+"-wal", "frame")
	eventually(t, 5*time.Second, func() bool { return w.Stats().EventsKept > kept }, "no events after the directory came back")
	if ks := c.kinds(); len(ks) != 2 || ks[0] != Gone || ks[1] != Replaced {
		t.Errorf("signals %v", ks)
	}
	for _, r := range c.records() {
		if r.Kind != Changed {
			t.Logf("%v", r.Signal)
		}
	}
}

// While a Changed is unacknowledged the event channel is not read at all, so
// the kernel merges events; after the Ack exactly one signal covers them.
func TestHandshakeCoalescesInKernel(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	appendTo(t, db, "")
	w, err := New(pushOnly(Options{Path: db}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	appendTo(t, db+"-wal", "frame")
	s := recv(t, w, 5*time.Second)
	if s.Kind != Changed || s.Events < 1 {
		t.Fatalf("first signal %v", s)
	}
	if lag := time.Since(s.At); lag > time.Second {
		t.Errorf("signal At is %v old", lag)
	}
	e0 := w.Stats().EventsRead
	f, err := os.OpenFile(db+"-wal", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		f.WriteString("frame")
	}
	f.Close()
	if s, quiet := quietFor(w, 200*time.Millisecond); !quiet {
		t.Fatalf("got %v while a Changed was outstanding", s)
	}
	if e := w.Stats().EventsRead; e != e0 {
		t.Fatalf("the event channel was read while busy: %d -> %d events", e0, e)
	}
	w.Ack(true)
	s = recv(t, w, 5*time.Second)
	if s.Kind != Changed || s.Events < 1 {
		t.Fatalf("after Ack: %v", s)
	}
	if s2, quiet := quietFor(w, 100*time.Millisecond); !quiet {
		t.Fatalf("second signal %v without an Ack", s2)
	}
	read := w.Stats().EventsRead - e0
	t.Logf("201 writes while busy -> %d events read after the Ack", read)
	if read > 20 {
		t.Errorf("%d events read for 201 writes: the kernel did not merge them", read)
	}
}

// Ack(false) re-checks with back-off 2, 3, 4.5 … 256 ms and then stops; a
// new event cancels the back-off, and the chain starts over after it.
func TestRecheckBackoff(t *testing.T) {
	full := 0 // re-checks in a whole chain from RecheckMin to RecheckMax
	for d := 2 * time.Millisecond; d <= 256*time.Millisecond; d = backoff(d) {
		full++
	}
	db := filepath.Join(t.TempDir(), "x.db")
	appendTo(t, db, "")
	// No Version: each re-check asks the consumer to refresh.
	w, err := New(Options{Path: db, SafetyPoll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// chain acks every signal with false and counts the re-checks after the
	// last event-triggered one, until 'stopAfter' re-checks or silence.
	chain := func(stopAfter int) int {
		n := 0
		for {
			w.Ack(false)
			s, quiet := quietFor(w, 700*time.Millisecond)
			if quiet {
				return n
			}
			if s.Kind != Changed {
				t.Fatalf("unexpected %v", s)
			}
			if s.Events > 0 {
				n = 0 // a late event of the same write restarts the chain
				continue
			}
			n++
			if n == stopAfter {
				return n
			}
		}
	}

	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Events == 0 {
		t.Fatalf("first signal %v", s)
	}
	if n := chain(-1); n != full {
		t.Fatalf("%d re-checks after Ack(false), want %d (2…256 ms)", n, full)
	}

	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Events == 0 {
		t.Fatalf("signal %v", s)
	}
	chain(6) // the next re-check is now tens of ms away
	w.Ack(false)
	appendTo(t, db+"-wal", "frame")
	s := recv(t, w, 5*time.Second)
	if s.Events == 0 {
		t.Fatalf("the back-off was not cancelled by an event: %v", s)
	}
	if n := chain(-1); n != full {
		t.Fatalf("%d re-checks after the new event, want a full chain of %d", n, full)
	}
	if st := w.Stats(); st.Rechecks < uint64(full+6+full) {
		t.Errorf("Stats.Rechecks = %d", st.Rechecks)
	}
}

// With a Version probe, re-checks call it instead of asking for a refresh:
// the consumer only hears about a change that really became visible, also
// one whose event was folded into a refresh that found something else. A
// write whose Version is unchanged is held back until Version moves.
func TestGatedRecheck(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	appendTo(t, db, "")
	var ver atomic.Uint64
	w, err := New(Options{Path: db, SafetyPoll: time.Hour, Version: func() (uint64, error) { return ver.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	// The first write is delivered: there is no refresh yet to compare with.
	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Events == 0 {
		t.Fatalf("first signal %v", s)
	}
	r0 := w.Stats().Rechecks
	w.Ack(true)
	// Leftover events of the same write are held (the version never
	// changes), and so is nothing else: no signal at all.
	if s, quiet := quietFor(w, 700*time.Millisecond); !quiet {
		t.Fatalf("signal %v without a version change", s)
	}
	full := uint64(0)
	for d := 2 * time.Millisecond; d <= 256*time.Millisecond; d = backoff(d) {
		full++
	}
	if n := w.Stats().Rechecks - r0; n < full {
		t.Errorf("%d probe re-checks after an Ack, want at least %d", n, full)
	}

	// A write the version does not show yet (frames before the commit is
	// visible) is held; once the version moves, the re-check says so.
	held := w.Stats().Held
	appendTo(t, db+"-wal", "frame")
	if s, quiet := quietFor(w, 30*time.Millisecond); !quiet {
		t.Fatalf("signal %v for a write the version does not show", s)
	}
	if w.Stats().Held == held {
		t.Fatalf("the write was not held: %+v", w.Stats())
	}
	ver.Add(1)
	if s := recv(t, w, 2*time.Second); s.Kind != Changed {
		t.Fatalf("signal %v", s)
	}
	w.Ack(true)
	if s, quiet := quietFor(w, 700*time.Millisecond); !quiet {
		t.Fatalf("signal %v without a change", s)
	}

	// The refresh found the commit that fired the event; the next one became
	// visible just after it read, and its event was merged into the first.
	ver.Add(1)
	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Events == 0 {
		t.Fatalf("signal %v", s)
	}
	ver.Add(1)
	w.Ack(true)
	if s := recv(t, w, 2*time.Second); s.Events != 0 {
		t.Fatalf("signal %v: want the re-check's, with no events", s)
	}
	w.Ack(false)
	if s, quiet := quietFor(w, 700*time.Millisecond); !quiet {
		t.Fatalf("signal %v without a change", s)
	}

	// Anything but a write is never held: a removed WAL is delivered with
	// the version unchanged.
	os.Remove(db + "-wal")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Events == 0 {
		t.Fatalf("signal %v for a removed WAL", s)
	}
	w.Ack(false)
}

// Which events count (file mode).
func TestEventFilter(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "agent.db")
	appendTo(t, db, "")
	w := &Watcher{dir: dir, file: db, base: "agent.db", present: true,
		names: map[string]bool{"agent.db": true, "agent.db-wal": true, "agent.db-journal": true}}
	w.ident, _ = os.Stat(db)
	cases := []struct {
		name string
		op   fsnotify.Op
		keep bool
	}{
		{"agent.db-wal", fsnotify.Write, true},
		{"agent.db-wal", fsnotify.Create, true},
		{"agent.db-wal", fsnotify.Remove, true},
		{"agent.db-journal", fsnotify.Remove, true},
		{"agent.db", fsnotify.Write, true},
		{"agent.db-wal", fsnotify.Write | fsnotify.Chmod, true},
		{"agent.db-wal", fsnotify.Chmod, false},
		{"agent.db", fsnotify.Chmod, false},
		{"agent.db-shm", fsnotify.Write, false},
		{"agent.db-shm", fsnotify.Create, false},
		{"harness.log", fsnotify.Write, false},
		{"other.db", fsnotify.Create, false},
	}
	for _, tc := range cases {
		before := w.nEventsKept.Load()
		w.handleEvent(fsnotify.Event{Name: filepath.Join(dir, tc.name), Op: tc.op}, time.Now())
		if kept := w.nEventsKept.Load() > before; kept != tc.keep {
			t.Errorf("%s %v: kept=%v, want %v", tc.name, tc.op, kept, tc.keep)
		}
	}
	if len(w.queue) != 0 {
		t.Errorf("identity signals for an unchanged file: %v", w.queue)
	}
}

// Watch setup failures fall back to polling, with a reason, never silently.
func TestFallbackWhenWatchCannotBeAdded(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	appendTo(t, db, "")
	h := defaultHooks()
	h.add = func(*fsnotify.Watcher, string) error {
		return fmt.Errorf("add %s: %w", dir, syscall.ENOSPC)
	}
	w, err := newWatcher(Options{Path: db, FallbackPoll: 20 * time.Millisecond}, h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s := recv(t, w, 5*time.Second)
	if s.Kind != ModeChanged || s.Mode != Poll || s.Reason != "inotify watch limit reached (fs.inotify.max_user_watches): polling every 20ms" {
		t.Fatalf("first signal %v", s)
	}
	if w.Mode() != Poll {
		t.Fatalf("mode %v", w.Mode())
	}
	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed {
		t.Fatalf("polling did not see the write: %v", s)
	}
}

// Errors on fsnotify's error channel: overflow means "changed"; anything else
// is fatal for the watch and switches to polling.
func TestNotifyErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	appendTo(t, db, "")
	var fw *fsnotify.Watcher
	h := defaultHooks()
	h.newNotifier = func() (*fsnotify.Watcher, error) {
		var err error
		fw, err = fsnotify.NewWatcher()
		return fw, err
	}
	w, err := newWatcher(pushOnly(Options{Path: db, FallbackPoll: 20 * time.Millisecond}), h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	fw.Errors <- fsnotify.ErrEventOverflow
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Mode != Push {
		t.Fatalf("overflow: %v", s)
	}
	w.Ack(false)
	if st := w.Stats(); st.Overflows != 1 {
		t.Errorf("overflows %d", st.Overflows)
	}

	fw.Errors <- errors.New("boom")
	var s Signal
	for s = recv(t, w, 5*time.Second); s.Kind == Changed; s = recv(t, w, 5*time.Second) {
		w.Ack(false)
	}
	if s.Kind != ModeChanged || s.Mode != Poll || !strings.Contains(s.Reason, "boom") || !strings.HasSuffix(s.Reason, "polling every 20ms") {
		t.Fatalf("after a fatal error: %v", s)
	}
	if w.Mode() != Poll {
		t.Fatalf("mode %v", w.Mode())
	}
	// Drain the Changed that follows the switch, then check polling works.
	for {
		s, quiet := quietFor(w, 300*time.Millisecond)
		if quiet {
			break
		}
		if s.Kind == Changed {
			w.Ack(false)
		}
	}
	appendTo(t, db+"-wal", "frame")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed || s.Mode != Poll {
		t.Fatalf("polling after fallback: %v", s)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// Close stops every goroutine and closes every descriptor, in every mode.
func TestCloseLeavesNothing(t *testing.T) {
	for _, mode := range []string{"push", "poll", "dir"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "x.db")
			appendTo(t, db, "")
			if err := os.Mkdir(filepath.Join(dir, "run1"), 0o755); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			g0, fd0 := runtime.NumGoroutine(), countFDs(t)

			o := Options{Path: db, SafetyPoll: 10 * time.Millisecond}
			switch mode {
			case "poll":
				o.Poll = 10 * time.Millisecond
			case "dir":
				o.Path = dir
			}
			w, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan struct{})
			go func() {
				defer close(got)
				for s := range w.C() {
					if s.Kind == Changed {
						w.Ack(false)
					}
				}
			}()
			for i := range 20 {
				appendTo(t, db+"-wal", strconv.Itoa(i))
				appendTo(t, filepath.Join(dir, "run1", "run.lvr"), strconv.Itoa(i))
			}
			eventually(t, 5*time.Second, func() bool { return w.Stats().Changed > 0 }, "no signal")
			if g := runtime.NumGoroutine(); g <= g0 {
				t.Fatalf("goroutines %d -> %d while running: the check cannot see leaks", g0, g)
			}
			if mode != "poll" && countFDs(t) <= fd0 {
				t.Fatalf("no inotify descriptor while running: the check cannot see leaks")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			<-got // C is closed
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			eventually(t, 5*time.Second, func() bool { return runtime.NumGoroutine() <= g0 },
				"goroutines %d, before %d", runtime.NumGoroutine(), g0)
			if fd := countFDs(t); fd != fd0 {
				t.Fatalf("descriptors %d after Close, %d before", fd, fd0)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := New(Options{Path: filepath.Join(t.TempDir(), "nodir", "x.db")}); err == nil {
		t.Error("missing directory accepted")
	}
	// A missing file in an existing directory is fine: Gone, then Replaced.
	db := filepath.Join(t.TempDir(), "later.db")
	w, err := New(pushOnly(Options{Path: db}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if s := recv(t, w, 5*time.Second); s.Kind != Gone {
		t.Fatalf("first signal %v", s)
	}
	appendTo(t, db, "")
	if s := recv(t, w, 5*time.Second); s.Kind != Replaced {
		t.Fatalf("after creation: %v", s)
	}
}

func TestStrings(t *testing.T) {
	if Push.String() != "push" || Poll.String() != "polling" {
		t.Errorf("modes: %v %v", Push, Poll)
	}
	for k, want := range map[Kind]string{Changed: "changed", Gone: "gone", Replaced: "replaced", ModeChanged: "mode-changed"} {
		if k.String() != want {
			t.Errorf("%d: %q", int(k), k.String())
		}
	}
}
