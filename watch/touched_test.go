package watch

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// probes records the calls a store's probes get: Touched with what events
// named, Version (the whole look) by count.
type probes struct {
	mu      sync.Mutex
	gen     uint64
	whole   int
	touched [][]string
}

func (p *probes) version() (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.whole++
	p.gen++
	return p.gen, nil
}

func (p *probes) touch(named []string) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.touched = append(p.touched, named)
	if len(named) > 0 {
		p.gen++
	}
	return p.gen, nil
}

func (p *probes) state() (int, [][]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.whole, slices.Clone(p.touched)
}

// After an event the store is told which file it named (Touched), and is
// not asked to look at everything; the safety tick still is.
func TestTouchedIsToldWhatEventsNamed(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "p"), 0o755))
	file := filepath.Join(dir, "p", "s.jsonl")
	appendTo(t, file, "{}\n")
	p := &probes{}
	w, err := New(pushOnly(Options{Path: dir, Version: p.version, Touched: p.touch, SafetyPoll: time.Hour}))
	must(err)
	defer w.Close()
	wholeAtStart, _ := p.state()
	if wholeAtStart != 0 {
		t.Errorf("New looked at everything %d times before the first frame could be drawn", wholeAtStart)
	}

	appendTo(t, file, "{}\n")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed {
		t.Fatalf("after a write: %v", s)
	}
	w.Ack(true)
	whole, touched := p.state()
	if whole != wholeAtStart {
		t.Errorf("an event made the store look at everything (%d whole looks, %d at the start)", whole, wholeAtStart)
	}
	if len(touched) == 0 || !slices.Contains(touched[0], file) {
		t.Fatalf("Touched was told %v, not the file written", touched)
	}
	// The re-checks after the Ack name nothing: nothing new, no signal.
	if s, quiet := quietFor(w, 300*time.Millisecond); !quiet {
		t.Fatalf("a re-check that named nothing signalled: %v", s)
	}
}

// Where events may have been missed (an overflow), the next probe is the
// whole one: Touched cannot be told what was lost.
func TestTouchedGivesWayAfterLostEvents(t *testing.T) {
	dir := t.TempDir()
	appendTo(t, filepath.Join(dir, "s.jsonl"), "{}\n")
	var fw *fsnotify.Watcher
	h := defaultHooks()
	h.newNotifier = func() (*fsnotify.Watcher, error) {
		var err error
		fw, err = fsnotify.NewWatcher()
		return fw, err
	}
	p := &probes{}
	w, err := newWatcher(pushOnly(Options{Path: dir, Version: p.version, Touched: p.touch, SafetyPoll: time.Hour}), h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wholeAtStart, _ := p.state()
	fw.Errors <- fsnotify.ErrEventOverflow
	if s := recv(t, w, 5*time.Second); s.Kind != Changed {
		t.Fatalf("overflow: %v", s)
	}
	if whole, _ := p.state(); whole == wholeAtStart {
		t.Fatal("after lost events the probe was not the whole one")
	}
}

// The safety tick's Version of a store that takes Touched runs beside the
// watcher's loop: while it is under way an event is still read, Touched
// told of it and the change delivered.
func TestTouchedIsNotHeldByTheSafetyTick(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	appendTo(t, file, "{}\n")
	p := &probes{}
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := func() (uint64, error) {
		once.Do(func() { close(started) })
		<-release
		return p.version()
	}
	o := pushOnly(Options{Path: dir, Version: slow, Touched: p.touch})
	o.SafetyPoll = 20 * time.Millisecond
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { close(release); w.Close() }()
	<-started
	appendTo(t, file, "{}\n")
	if s := recv(t, w, 5*time.Second); s.Kind != Changed {
		t.Fatalf("while the safety tick's Version ran: %v", s)
	}
	if _, touched := p.state(); len(touched) == 0 || !slices.Contains(touched[len(touched)-1], file) {
		t.Fatalf("Touched was told %v while the safety tick's Version ran", touched)
	}
}
