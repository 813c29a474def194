package livetail

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/watch"
)

// countingSource counts the Changes calls made on the store itself.
type countingSource struct {
	store.Source
	changes *atomic.Int64
}

func (c countingSource) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c.changes.Add(1)
	return c.Source.Changes(ctx, cur)
}

// Ten sessions on one hub: each sees every committed step exactly once,
// woken by the hub, and the store is read by one Changes stream, not ten.
func TestHubFansOutOneTail(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	h, err := New(func() (store.Source, error) {
		src, err := store.Open(path, store.Options{ReadOnly: true})
		return countingSource{src, &calls}, err
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	const sessions, commits = 10, 5
	type seen struct {
		mu   sync.Mutex
		rows map[string]int
	}
	got := make([]*seen, sessions)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{}, sessions)
	for i := range got {
		got[i] = &seen{rows: map[string]int{}}
		sub := h.Subscribe()
		cur := h.Head()
		wg.Add(1)
		go func(s *seen) {
			defer wg.Done()
			defer sub.Close()
			ready <- struct{}{}
			for {
				select {
				case <-ctx.Done():
					return
				case sig, ok := <-sub.C():
					if !ok {
						return
					}
					if sig.Kind != watch.Changed {
						continue
					}
					ch, next, err := h.Changes(cur)
					if err != nil {
						t.Error(err)
						return
					}
					cur = next
					s.mu.Lock()
					for _, st := range ch.Steps {
						s.rows[st.Decision]++
					}
					s.mu.Unlock()
				}
			}
		}(got[i])
	}
	for range sessions {
		<-ready
	}
	w, err := harness.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := calls.Load()
	for n := 1; n <= commits; n++ {
		if err := w.CheckpointStep(ctx, "4", harness.StepRecord{Step: 4 + n, Decision: fmt.Sprintf("fan-%d", n), Result: "ok"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; i < sessions; {
		got[i].mu.Lock()
		n := len(got[i].rows)
		got[i].mu.Unlock()
		if n == commits {
			i++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d saw %v", i, got[i].rows)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, s := range got {
		for k, n := range s.rows {
			if n != 1 {
				t.Errorf("session %d saw %s %d times", i, k, n)
			}
		}
	}
	// One stream: a pull or two per commit, its re-checks and the watcher's
	// safety polls (more of those on a loaded machine), whatever the number
	// of sessions; a stream per session would be sessions×commits and more.
	if n := calls.Load() - before; n > 5*commits || n >= sessions*commits {
		t.Errorf("%d Changes calls on the store for %d commits and %d sessions", n, commits, sessions)
	}
	cancel()
	wg.Wait()
}

// A cursor of an earlier epoch, or one the log no longer reaches, loads
// the store again.
func TestHubOldCursorResets(t *testing.T) {
	path, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(func() (store.Source, error) { return store.Open(path, store.Options{ReadOnly: true}) }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	e, s := h.Mark()
	ch, _, _, err := h.Since(e-1, s)
	if err != nil || !ch.Reset {
		t.Errorf("another epoch: %+v %v", ch, err)
	}
	ch, _, _, err = h.Since(e, s+5)
	if err != nil || !ch.Reset {
		t.Errorf("past the end: %+v %v", ch, err)
	}
	ch, _, _, err = h.Since(e, s)
	if err != nil || ch.Reset || !ch.Empty() {
		t.Errorf("at the end: %+v %v", ch, err)
	}
}
