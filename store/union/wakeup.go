package union

import (
	"sync"
	"time"

	"github.com/vigil-run/vigil/watch"
)

// Wakeups is one wakeup for the set: each store's own (its file watcher,
// or its link's notices) merged. What a store's watcher says of its file
// is the store's alone: gone marks that store offline and replaced opens
// it again at the next Changes, while the reader hears only Changed.
func (s *Set) Wakeups() (watch.Wakeup, error) {
	w := &wakeup{out: make(chan watch.Signal, 16), done: make(chan struct{})}
	for _, m := range s.ms {
		src, _ := m.source()
		var one watch.Wakeup
		var err error
		if m.Wakeups != nil {
			one, err = m.Wakeups()
		} else {
			spec := src.Watch()
			one, err = watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Touched: spec.Touched, Depth: spec.Depth, Poll: m.Poll})
		}
		if err != nil {
			m.mu.Lock()
			m.problem = "cannot watch the store: " + err.Error()
			m.mu.Unlock()
			continue
		}
		w.ws = append(w.ws, one)
		w.wg.Add(1)
		go w.forward(m, one)
	}
	w.wg.Add(1)
	go w.retry(s)
	return w, nil
}

// retryMin and retryMax bound the back-off of the wakeups that read again
// a store whose last read failed: nothing else may wake the reader while
// the other stores are quiet.
var retryMin, retryMax = time.Second, 16 * time.Second

// retry wakes the reader while a store's last read failed, 1 s after the
// failure, doubling to 16 s while it keeps failing.
func (w *wakeup) retry(s *Set) {
	defer w.wg.Done()
	d := retryMin
	for {
		select {
		case <-w.done:
			return
		case <-time.After(d):
		}
		failing := false
		for _, m := range s.ms {
			m.mu.Lock()
			failing = failing || m.problem != ""
			m.mu.Unlock()
		}
		if !failing {
			d = retryMin
			continue
		}
		w.send(watch.Signal{Kind: watch.Changed, Mode: w.Mode(), At: time.Now()})
		d = min(d*2, retryMax)
	}
}

type wakeup struct {
	out  chan watch.Signal
	ws   []watch.Wakeup
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

func (w *wakeup) forward(m *member, one watch.Wakeup) {
	defer w.wg.Done()
	for {
		var sig watch.Signal
		var ok bool
		select {
		case sig, ok = <-one.C():
			if !ok {
				return
			}
		case <-w.done:
			return
		}
		switch sig.Kind {
		case watch.Gone:
			m.mu.Lock()
			m.gone = "store gone: " + orText(sig.Reason, "deleted or moved") + " — waiting for it to come back"
			m.mu.Unlock()
			sig = watch.Signal{Kind: watch.Changed, Mode: sig.Mode, At: sig.At}
		case watch.Replaced:
			m.mu.Lock()
			m.gone, m.reopen = "", true
			m.mu.Unlock()
			sig = watch.Signal{Kind: watch.Changed, Mode: sig.Mode, At: sig.At}
		case watch.ModeChanged:
			sig.Reason = m.prefix + ": " + sig.Reason
		}
		w.send(sig)
	}
}

// send passes a signal on; a Changed already waiting stands for another.
func (w *wakeup) send(sig watch.Signal) {
	if sig.Kind == watch.Changed {
		select {
		case w.out <- sig:
		case <-w.done:
		default:
		}
		return
	}
	select {
	case w.out <- sig:
	case <-w.done:
	case <-time.After(time.Second):
	}
}

func (w *wakeup) C() <-chan watch.Signal { return w.out }

// Ack goes to every store's wakeup: each paces its own re-checks.
func (w *wakeup) Ack(found bool) {
	for _, one := range w.ws {
		one.Ack(found)
	}
}

// Mode is push only while every store is noticed by push.
func (w *wakeup) Mode() watch.Mode {
	for _, one := range w.ws {
		if one.Mode() != watch.Push {
			return one.Mode()
		}
	}
	return watch.Push
}

func (w *wakeup) Close() error {
	w.once.Do(func() {
		close(w.done)
		for _, one := range w.ws {
			one.Close()
		}
		w.wg.Wait()
	})
	return nil
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
