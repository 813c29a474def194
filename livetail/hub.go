package livetail

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/watch"
)

// Hub is one tail of one store shared by every session that shows it: one
// file watcher and one Changes stream, whose batches are kept in a log
// that each session's cursor is a position in. A session's refresh is a
// slice of that log, read from memory; fifty sessions cost the store what
// one does.
type Hub struct {
	open func() (store.Source, error)
	poll time.Duration

	pullMu sync.Mutex // one Changes stream: pulls never overlap

	mu      sync.Mutex
	src     store.Source
	epoch   int          // bumped when the store is opened again
	cur     store.Cursor // where the shared stream has read to
	base    int64        // the seq before log[0]
	log     []*store.Changes
	err     error // the last pull's failure, until one succeeds
	subs    map[*subscription]struct{}
	watcher *watch.Watcher
	closed  bool

	reads sharedReads // reads made once per log position (shared.go)

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// hubLogCap is how many batches the log keeps: a session further behind
// than this (it has not refreshed through a burst of 4096 commits) loads
// the store again.
const hubLogCap = 4096

// Options tune a hub.
type Options struct {
	// Poll forces polling at this interval instead of file events.
	Poll time.Duration
}

// New opens the store with open and starts following it.
func New(open func() (store.Source, error), opt Options) (*Hub, error) {
	h := &Hub{open: open, poll: opt.Poll, subs: map[*subscription]struct{}{},
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	if err := h.load(); err != nil {
		return nil, err
	}
	h.wg.Add(1)
	go h.run()
	return h, nil
}

// load opens the store (again), takes a cursor at its end and starts a
// new epoch: cursors of the old one answer Reset.
func (h *Hub) load() error {
	src, err := h.open()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cur, err := src.Head(ctx)
	if err != nil {
		src.Close()
		return err
	}
	spec := src.Watch()
	w, werr := watch.New(watch.Options{Path: spec.Path, Names: spec.Names, Version: spec.Version, Touched: spec.Touched, Depth: spec.Depth, Poll: h.poll})
	h.mu.Lock()
	old, oldW := h.src, h.watcher
	h.src, h.cur, h.epoch = src, cur, h.epoch+1
	h.base, h.log, h.err = 0, nil, nil
	h.watcher = nil
	if werr == nil {
		h.watcher = w
	} else {
		h.err = errors.New("cannot watch the store: " + werr.Error())
	}
	h.mu.Unlock()
	if oldW != nil {
		oldW.Close()
	}
	if old != nil {
		// Sessions still reading the old handle get an error, then Reset.
		go func() { time.Sleep(ioGrace); old.Close() }()
	}
	return nil
}

// ioGrace lets reads in flight on a replaced handle finish before it closes.
const ioGrace = 2 * time.Second

// Source is the store the hub reads now.
func (h *Hub) Source() store.Source {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.src
}

// Close stops the tail and closes the store.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.done)
	w := h.watcher
	h.mu.Unlock()
	if w != nil {
		w.Close()
	}
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.closeLocked()
	}
	return h.src.Close()
}

// Poke asks for a pull now (after a decision: the deciding session sees
// it without waiting for the file event).
func (h *Hub) Poke() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *Hub) run() {
	defer h.wg.Done()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		h.mu.Lock()
		w := h.watcher
		h.mu.Unlock()
		var sigs <-chan watch.Signal
		if w != nil {
			sigs = w.C()
		}
		select {
		case <-h.done:
			return
		case <-h.kick:
			h.pull(nil) // no signal of the watcher's to acknowledge
		case <-retry.C:
			h.pull(nil)
		case sig, ok := <-sigs:
			if !ok {
				// The watcher is gone (replaced by a reload): the loop
				// takes the new one.
				continue
			}
			switch sig.Kind {
			case watch.Changed:
				h.pull(w)
			case watch.Gone, watch.ModeChanged:
				h.broadcast(sig)
			case watch.Replaced:
				h.reload(sig)
			}
		}
		h.mu.Lock()
		failed := h.err != nil
		h.mu.Unlock()
		if failed {
			retry.Reset(time.Second)
		}
	}
}

// reload opens the store again after it was replaced; sessions learn it
// from their next refresh (Reset) and load it again.
func (h *Hub) reload(sig watch.Signal) {
	h.pullMu.Lock()
	defer h.pullMu.Unlock()
	if err := h.load(); err != nil {
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
	}
	h.broadcast(watch.Signal{Kind: watch.Changed, Mode: sig.Mode, At: sig.At})
}

// pull reads what the store has that the hub has not, appends it to the
// log and wakes every session.
func (h *Hub) pull(w *watch.Watcher) {
	h.pullMu.Lock()
	found, reset := false, false
	var err error
	for {
		h.mu.Lock()
		src, cur := h.src, h.cur
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var ch *store.Changes
		var next store.Cursor
		ch, next, err = src.Changes(ctx, cur)
		cancel()
		if err != nil {
			break
		}
		if ch.Reset {
			reset = true
			break
		}
		h.mu.Lock()
		h.cur, h.err = next, nil
		if !ch.Empty() {
			found = true
			h.log = append(h.log, ch)
			if n := len(h.log) - hubLogCap; n > 0 {
				h.log = append([]*store.Changes(nil), h.log[n:]...)
				h.base += int64(n)
			}
		}
		h.mu.Unlock()
		if !ch.More {
			break
		}
	}
	if err != nil {
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		found = true // sessions show it
	}
	if w != nil {
		w.Ack(found && err == nil)
	}
	h.pullMu.Unlock()
	if reset {
		h.reload(watch.Signal{Kind: watch.Replaced})
		return
	}
	if found {
		h.broadcast(watch.Signal{Kind: watch.Changed, At: time.Now()})
	}
}

func (h *Hub) broadcast(sig watch.Signal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.send(sig)
	}
}

// hubCursor is a position in a hub's log.
type hubCursor struct {
	hub   *Hub
	epoch int
	seq   int64 // batches folded: base+len(log) at the time
}

func (c hubCursor) CursorFormat() string { return "vigil-serve" }

// Head is where the hub has read the store to now, as a cursor for
// Changes: what a reader loads after taking it is no older.
func (h *Hub) Head() store.Cursor { return h.head() }

func (h *Hub) head() hubCursor {
	h.mu.Lock()
	defer h.mu.Unlock()
	return hubCursor{hub: h, epoch: h.epoch, seq: h.base + int64(len(h.log))}
}

// Changes is every batch after cur, merged in order: folding the merge is
// folding each batch in turn (rows are keyed by id; the newest lease
// table wins). A cursor of an earlier epoch, or one the log no longer
// reaches, gets Reset.
func (h *Hub) Changes(cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(hubCursor)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ok || c.hub != h {
		return nil, nil, errors.New("a cursor from another source")
	}
	end := h.base + int64(len(h.log))
	if c.epoch != h.epoch || c.seq < h.base || c.seq > end {
		return &store.Changes{Reset: true}, hubCursor{hub: h, epoch: h.epoch, seq: end}, nil
	}
	if h.err != nil && c.seq == end {
		return nil, nil, h.err
	}
	out := &store.Changes{}
	unwritten := true
	for _, ch := range h.log[c.seq-h.base:] {
		unwritten = unwritten && ch.Unwritten
		out.Runs = append(out.Runs, ch.Runs...)
		out.Steps = append(out.Steps, ch.Steps...)
		out.Context = append(out.Context, ch.Context...)
		out.Requests = append(out.Requests, ch.Requests...)
		out.AgentEvents = append(out.AgentEvents, ch.AgentEvents...)
		out.Calls = append(out.Calls, ch.Calls...)
		if ch.LeasesChanged {
			out.Leases, out.LeasesChanged = ch.Leases, true
		}
	}
	out.Unwritten = unwritten && !out.Empty()
	return out, hubCursor{hub: h, epoch: c.epoch, seq: end}, nil
}

// subscribe is a session's wakeup: the hub's signals, in place of a
// watcher of its own.
func (h *Hub) subscribe() *subscription {
	s := &subscription{hub: h, c: make(chan watch.Signal, 8)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Sessions is how many sessions follow the hub now.
func (h *Hub) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

type subscription struct {
	hub    *Hub
	c      chan watch.Signal
	closed bool
}

func (s *subscription) C() <-chan watch.Signal { return s.c }

// Ack is nothing: the hub acknowledges its own watcher.
func (s *subscription) Ack(bool) {}

func (s *subscription) Mode() watch.Mode {
	s.hub.mu.Lock()
	w := s.hub.watcher
	s.hub.mu.Unlock()
	if w == nil {
		return watch.Poll
	}
	return w.Mode()
}

func (s *subscription) Close() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	delete(s.hub.subs, s)
	s.closeLocked()
	return nil
}

func (s *subscription) closeLocked() {
	if !s.closed {
		s.closed = true
		close(s.c)
	}
}

// send never blocks the hub: a session that has a signal queued already
// refreshes through everything the new one would tell it.
func (s *subscription) send(sig watch.Signal) {
	if s.closed {
		return
	}
	select {
	case s.c <- sig:
	default:
	}
}

// Mark is where the shared tail stands, as numbers a cursor that leaves
// the process carries (vigil agent sends them over its link).
func (h *Hub) Mark() (epoch int, seq int64) {
	c := h.head()
	return c.epoch, c.seq
}

// Since is what the log holds after the mark (epoch, seq), merged, and the
// mark to ask from next; Reset when the mark is of another epoch or too
// far behind.
func (h *Hub) Since(epoch int, seq int64) (*store.Changes, int, int64, error) {
	ch, next, err := h.Changes(hubCursor{hub: h, epoch: epoch, seq: seq})
	if err != nil {
		return nil, 0, 0, err
	}
	c := next.(hubCursor)
	return ch, c.epoch, c.seq, nil
}

// Subscribe is a wakeup for every change the hub reads, in place of a
// watcher of the reader's own: a vigil serve session's, vigil agent's
// change notices.
func (h *Hub) Subscribe() watch.Wakeup { return h.subscribe() }
