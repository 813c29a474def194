package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// maxDrain bounds one non-blocking drain of the event channel.
const maxDrain = 4096

// maxQueue bounds the queue of undelivered signals when the consumer stops
// reading; the oldest informational signals are dropped first.
const maxQueue = 64

// run is the watcher's only goroutine (fsnotify has its own reader).
func (w *Watcher) run() {
	defer close(w.exited)
	defer func() {
		if w.fw != nil {
			w.closeErr = w.fw.Close()
			w.fw = nil
		}
		if w.ticker != nil {
			w.ticker.Stop()
		}
		close(w.out)
	}()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		now := time.Now()
		if w.canRead(now) {
			w.drain(now)
		}
		w.maybeDeliver(now)

		var evC <-chan fsnotify.Event
		var errC <-chan error
		if w.fw != nil {
			errC = w.fw.Errors
			if w.canRead(now) {
				evC = w.fw.Events
			}
		}
		var outC chan<- Signal
		var head Signal
		if len(w.queue) > 0 {
			outC = w.out
			head = w.queue[0]
		}
		var timerC <-chan time.Time
		if d, ok := w.nextDeadline(now); ok {
			timer.Reset(d.Sub(now))
			timerC = timer.C
		}

		select {
		case <-w.done:
			timer.Stop()
			return
		case outC <- head:
			w.sent(time.Now())
		case ev, ok := <-evC:
			if !ok {
				w.fallback(time.Now(), "file notifications stopped unexpectedly")
			} else {
				w.handleEvent(ev, time.Now())
			}
		case err, ok := <-errC:
			if !ok {
				w.fallback(time.Now(), "file notifications stopped unexpectedly")
			} else {
				w.handleError(err, time.Now())
			}
		case <-w.wake:
			w.takeAck(time.Now())
		case <-timerC:
			w.onTimer(time.Now())
		case <-w.tickerC:
			w.onTick(time.Now())
		case v := <-w.whole:
			w.wholeBusy = false
			w.onVersion(time.Now(), v)
		}
		timer.Stop()
	}
}

// windowEnd is when the coalescing window after the last delivery closes.
// After a refresh that found nothing there is none: no burst is running, and
// a commit still in its fsync should be picked up the moment it shows.
func (w *Watcher) windowEnd() time.Time {
	if !w.lastFound {
		return w.lastDeliv
	}
	return w.lastDeliv.Add(w.opts.Coalesce)
}

// backoff is the next re-check delay: half as long again, so the first
// re-checks come every few milliseconds (a commit's fsync takes that long)
// before they spread out.
func backoff(d time.Duration) time.Duration { return d + d/2 }

// readFrom is when events may be read again: after the coalescing window,
// and for Coalesce after write events were held back (held), so that the
// rest of the burst merges in the kernel while the re-check watches Version.
func (w *Watcher) readFrom() time.Time {
	end := w.windowEnd()
	if h := w.heldAt.Add(w.opts.Coalesce); h.After(end) {
		return h
	}
	return end
}

// canRead: the event channel is read only when no Changed is outstanding and
// the coalescing window after the last delivery has passed. Otherwise events
// wait (and merge) in the kernel.
func (w *Watcher) canRead(now time.Time) bool {
	return w.fw != nil && !w.outstanding && !now.Before(w.readFrom())
}

func (w *Watcher) nextDeadline(now time.Time) (time.Time, bool) {
	var d time.Time
	ok := false
	if !w.outstanding && (w.dirty || w.fw != nil) {
		end := w.readFrom()
		if w.dirty {
			end = w.windowEnd() // what is pending is delivered then, read or not
		}
		if now.Before(end) {
			d, ok = end, true
		}
	}
	if w.recheckOn && (!ok || w.recheckAt.Before(d)) {
		d, ok = w.recheckAt, true
	}
	return d, ok
}

// drain reads whatever is queued on the event channel without blocking.
func (w *Watcher) drain(now time.Time) {
	for range maxDrain {
		if w.fw == nil {
			return
		}
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				w.fallback(now, "file notifications stopped unexpectedly")
				return
			}
			w.handleEvent(ev, now)
		case err, ok := <-w.fw.Errors:
			if !ok {
				w.fallback(now, "file notifications stopped unexpectedly")
				return
			}
			w.handleError(err, now)
		default:
			return
		}
	}
}

func (w *Watcher) markDirty(now time.Time, c cause, events int) {
	w.dirtyMust = true
	if !w.dirty {
		w.dirty = true
		w.dirtyAt = now
		w.dirtyCause = c
	} else if c > w.dirtyCause {
		w.dirtyCause = c
	}
	w.dirtyEvents += events
	if c == causeEvent {
		// A new event cancels the back-off: it triggers now, and the chain
		// starts again after its Ack.
		w.recheckOn = false
	}
}

// markWrite marks a write to a watched file (file mode): alone, it may be
// held back when Version shows nothing new (maybeDeliver).
func (w *Watcher) markWrite(now time.Time) {
	must := w.dirty && w.dirtyMust
	w.markDirty(now, causeEvent, 1)
	w.dirtyMust = must
}

func (w *Watcher) maybeDeliver(now time.Time) {
	if !w.dirty || w.outstanding || now.Before(w.windowEnd()) {
		return
	}
	if w.gated() {
		// The value before the consumer's refresh: a re-check after the Ack
		// compares against it, so a commit that becomes visible after the
		// refresh has read can never be missed.
		v := w.probeNamed()
		if w.hold(now, v) {
			return
		}
		w.gate, w.gateSet = v, true
	}
	w.enqueue(Signal{Kind: Changed, At: w.dirtyAt, Events: w.dirtyEvents})
	w.outstanding = true
	w.delivered = false
	w.outCause = w.dirtyCause
	w.outDelay = w.recheckDly
	w.dirty = false
	w.dirtyEvents = 0
	w.recheckOn = false
}

// hold holds back pending write events (file mode, nothing else pending)
// when Version v is still the one before the last refresh: that refresh
// read everything visible, so nothing new is (a commit whose frames are
// written but not yet shown, a checkpoint, a rolled-back transaction). A
// re-check soon after, and on back-off, watches Version for the commit to
// show; a writer committing a thousand steps a transaction fired a dozen
// empty refreshes a commit before.
func (w *Watcher) hold(now time.Time, v probeValue) bool {
	if w.dirMode || w.dirtyMust || !w.gateSet || v.err || w.gate.err || v != w.gate {
		return false
	}
	w.nHeld.Add(1)
	w.dirty, w.dirtyEvents = false, 0
	w.heldAt = now
	if first := w.opts.RecheckMin / 4; !w.recheckOn || w.recheckAt.After(w.heldAt.Add(first)) {
		w.armRecheck(w.heldAt, first)
	}
	return true
}

func (w *Watcher) enqueue(s Signal) {
	s.Mode = w.Mode()
	if s.At.IsZero() {
		s.At = time.Now()
	}
	if len(w.queue) >= maxQueue {
		for i, q := range w.queue {
			if q.Kind != Changed {
				w.queue = append(w.queue[:i], w.queue[i+1:]...)
				break
			}
		}
	}
	w.queue = append(w.queue, s)
}

// sent records that the consumer received the head of the queue.
func (w *Watcher) sent(now time.Time) {
	head := w.queue[0]
	w.queue = w.queue[1:]
	if len(w.queue) == 0 {
		w.queue = nil
	}
	if head.Kind == Changed {
		w.delivered = true
		w.lastDeliv = now
		w.nChanged.Add(1)
	}
}

func (w *Watcher) takeAck(now time.Time) {
	w.ackMu.Lock()
	n, found := w.acks, w.ackFound
	w.acks, w.ackFound = 0, false
	if n > 0 {
		w.lastFound = found
	}
	w.ackMu.Unlock()
	if n == 0 || !w.outstanding || !w.delivered {
		return // a stray Ack: nothing was delivered
	}
	w.outstanding = false
	w.delivered = false
	if w.dirty {
		return // something is already pending; its own Ack re-arms
	}
	if w.Mode() == Poll && w.opts.Version != nil {
		// Polling an exact probe: the next tick sees whatever became
		// visible after this refresh. Nothing to re-check.
		return
	}
	delay := w.opts.RecheckMin
	if !found && w.outCause == causeRecheck {
		delay = backoff(w.outDelay)
	}
	w.armRecheck(now, delay)
}

// gated: re-checks call Version instead of asking the consumer to refresh.
func (w *Watcher) gated() bool { return w.opts.Version != nil && w.Mode() == Push }

func (w *Watcher) armRecheck(now time.Time, delay time.Duration) {
	if delay > w.opts.RecheckMax {
		w.recheckOn = false
		return
	}
	w.recheckOn = true
	w.recheckAt = now.Add(delay)
	w.recheckDly = delay
}

func (w *Watcher) onTimer(now time.Time) {
	if w.recheckOn && !now.Before(w.recheckAt) {
		w.recheckOn = false
		w.nRechecks.Add(1)
		if w.gated() {
			// A cheap re-check: Version against its value before the last
			// refresh. Unchanged: nothing became visible; back off further.
			if v := w.probeNamed(); v == w.gate {
				w.armRecheck(now, backoff(w.recheckDly))
				return
			}
			w.nProbeHits.Add(1)
		}
		w.markDirty(now, causeRecheck, 0)
	}
	// The end of a coalescing window needs no action here: the loop drains
	// and delivers at the top.
}

func (w *Watcher) onTick(now time.Time) {
	if w.fw != nil {
		w.checkWatch(now)
	}
	w.checkIdentity(now, "")
	if w.opts.Touched != nil && w.opts.Version != nil && w.Mode() == Push {
		// Version looks at every file of a store that takes Touched: on a
		// goroutine of its own, so that the events meanwhile are read and
		// the lines they name delivered, not held until it ends.
		if !w.wholeBusy {
			w.wholeBusy = true
			w.named, w.namedLost = nil, false // what it covers
			w.nProbes.Add(1)
			w.wholeWait.Add(1)
			go func() {
				defer w.wholeWait.Done()
				v := probeValue{}
				if n, err := w.opts.Version(); err != nil {
					v.err = true
				} else {
					v.v = n
				}
				select {
				case w.whole <- v:
				case <-w.done:
				}
			}()
		}
		return
	}
	w.onVersion(now, w.probe())
}

// onVersion takes the safety tick's Version: a change since the last one
// is delivered.
func (w *Watcher) onVersion(now time.Time, v probeValue) {
	if v != w.version {
		w.version = v
		w.nProbeHits.Add(1)
		w.markDirty(now, causeProbe, 0)
	}
}

func (w *Watcher) handleEvent(ev fsnotify.Event, now time.Time) {
	w.nEventsRead.Add(1)
	if ev.Op == fsnotify.Chmod || ev.Op == 0 {
		return
	}
	name := filepath.Clean(ev.Name)
	if name == w.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.dirLost(now)
		}
		return
	}
	parent, base := filepath.Dir(name), filepath.Base(name)
	structural := ev.Op&(fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0
	if !w.dirMode {
		if parent != w.dir || !w.names[base] {
			return
		}
		w.nEventsKept.Add(1)
		w.note(name)
		if base == w.base && structural {
			w.checkIdentity(now, hint(ev.Op))
		}
		if structural {
			w.markDirty(now, causeEvent, 1)
		} else {
			w.markWrite(now)
		}
		return
	}

	keep := false
	switch level := w.level(parent); {
	case level >= 0 && level < w.opts.Depth:
		if ev.Has(fsnotify.Create) {
			if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
				w.addSub(now, name)
				w.addTree(now, name, level+1)
				keep = true
			}
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			keep = true // a run directory (or a file) vanished
		}
		keep = keep || w.nameOK(base)
	case level == w.opts.Depth:
		keep = w.nameOK(base)
	}
	if keep {
		w.nEventsKept.Add(1)
		w.note(name)
		w.markDirty(now, causeEvent, 1)
	}
}

func (w *Watcher) nameOK(base string) bool { return w.names == nil || w.names[base] }

func hint(op fsnotify.Op) string {
	switch {
	case op.Has(fsnotify.Rename):
		return "was moved away"
	case op.Has(fsnotify.Remove):
		return "was removed"
	}
	return ""
}

func (w *Watcher) handleError(err error, now time.Time) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// Events were lost: treat as a change, and re-add any subdirectory
		// whose Create we may have missed.
		w.nOverflows.Add(1)
		w.lostNames()
		if w.dirMode {
			w.rescan(now)
		}
		w.markDirty(now, causeEvent, 1)
		return
	}
	w.fallback(now, "file notification error ("+err.Error()+")")
}

// fallback switches to polling for good after notifications failed.
func (w *Watcher) fallback(now time.Time, why string) {
	if w.Mode() == Poll {
		return
	}
	w.lostNames()
	w.startPolling(now, w.opts.FallbackPoll, fmt.Sprintf("%s: polling every %v", why, w.opts.FallbackPoll))
	w.markDirty(now, causeProbe, 0) // whatever happened meanwhile was not seen
}

// dirLost handles the watched directory itself being removed or moved: the
// kernel has dropped the watch.
func (w *Watcher) dirLost(now time.Time) {
	w.lost = true
	w.lostNames()
	w.checkIdentity(now, "")
	w.tryReadd(now)
}

// checkWatch (push mode, on the tick) notices a lost directory watch even when
// the event saying so was lost, re-adds it when the directory is back, and in
// directory mode adds subdirectories whose Create was missed.
func (w *Watcher) checkWatch(now time.Time) {
	if !w.lost {
		watched := false
		for _, p := range w.fw.WatchList() {
			if p == w.dir {
				watched = true
				break
			}
		}
		w.lost = !watched
	}
	if w.lost {
		w.tryReadd(now)
		return
	}
	if w.dirMode {
		w.rescan(now)
	}
}

func (w *Watcher) tryReadd(now time.Time) {
	fi, err := os.Stat(w.dir)
	if err != nil || !fi.IsDir() {
		return
	}
	if err := w.hooks.add(w.fw, w.dir); err != nil {
		if isGoneErr(err) {
			return
		}
		w.fallback(now, describe(err))
		return
	}
	w.lost = false
	if w.dirMode {
		w.listedAt, w.listedSub = time.Time{}, nil // the watches may have gone with it: list again
		w.rescan(now)
	}
	w.checkIdentity(now, "")
	w.markDirty(now, causeProbe, 0) // events were missed while unwatched
}

// addSubdirs adds the subdirectories at start, to Depth.
func (w *Watcher) addSubdirs() error {
	return w.addSubdirsOf(w.dir, 0)
}

// addSubdirsOf adds the subdirectories of dir (at level, w.dir being 0)
// and theirs, to Depth.
func (w *Watcher) addSubdirsOf(dir string, level int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if level > 0 && isGoneErr(err) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := w.hooks.add(w.fw, p); err != nil {
			if isGoneErr(err) {
				continue
			}
			return err
		}
		if level+1 < w.opts.Depth {
			if err := w.addSubdirsOf(p, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// addTree adds the subdirectories of a directory that appeared at level:
// they may have been made before its watch was.
func (w *Watcher) addTree(now time.Time, p string, level int) {
	if w.fw == nil || level >= w.opts.Depth {
		return
	}
	if err := w.addSubdirsOf(p, level); err != nil {
		w.fallback(now, describe(err))
	}
}

// level is how deep p lies below the watched directory (0: it is the
// directory; -1: not below it).
func (w *Watcher) level(p string) int {
	rel, err := filepath.Rel(w.dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return -1
	}
	if rel == "." {
		return 0
	}
	return strings.Count(rel, string(filepath.Separator)) + 1
}

func (w *Watcher) addSub(now time.Time, p string) {
	if w.fw == nil {
		return
	}
	if err := w.hooks.add(w.fw, p); err != nil && !isGoneErr(err) {
		w.fallback(now, describe(err))
	}
}

// rescan adds every subdirectory that has no watch (missed Create events).
//
// A new entry moves the directory's mtime, so a directory whose mtime is
// the one the last whole rescan saw, and older than that rescan by more
// than a timestamp's granularity, has nothing to add: it is not listed.
// The safety tick rescans every second, and listing a runs directory of
// ten thousand runs each time was most of an idle explorer's cost.
func (w *Watcher) rescan(now time.Time) {
	if w.fw == nil {
		return
	}
	fi, serr := os.Stat(w.dir)
	if serr == nil && fi.ModTime().Equal(w.listedMtime) && w.listedAt.Sub(fi.ModTime()) > 2*time.Second && w.opts.Depth <= 1 {
		return // (deeper, a subdirectory's own mtime says: rescanBelow)
	}
	began := time.Now()
	w.nListings.Add(1)
	watched := map[string]bool{}
	for _, p := range w.fw.WatchList() {
		watched[p] = true
	}
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return
	}
	added := false
	for _, e := range ents {
		p := filepath.Join(w.dir, e.Name())
		if !e.IsDir() || watched[p] {
			continue
		}
		if err := w.hooks.add(w.fw, p); err != nil {
			if isGoneErr(err) {
				continue
			}
			w.fallback(now, describe(err))
			return
		}
		added = true
	}
	if serr == nil {
		w.listedMtime, w.listedAt = fi.ModTime(), began
	}
	if w.opts.Depth > 1 {
		added = w.rescanBelow(now, ents, w.dir, 1) || added
	}
	if added {
		w.lostNames() // what the new watches' directories got meanwhile
		w.markDirty(now, causeProbe, 0)
	}
}

// rescanBelow rescans the subdirectories (ents of dir, at level) that may
// hold directories of their own (Depth > 1): each listed again only when
// its mtime moved since its last listing, as rescan does the top.
func (w *Watcher) rescanBelow(now time.Time, ents []os.DirEntry, dir string, level int) bool {
	if level >= w.opts.Depth {
		return false
	}
	if w.listedSub == nil {
		w.listedSub = map[string][2]time.Time{}
	}
	watched := map[string]bool{}
	for _, p := range w.fw.WatchList() {
		watched[p] = true
	}
	added := false
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		fi, serr := os.Stat(sub)
		if last, ok := w.listedSub[sub]; serr == nil && ok && fi.ModTime().Equal(last[0]) && last[1].Sub(fi.ModTime()) > 2*time.Second {
			continue
		}
		began := time.Now()
		w.nListings.Add(1)
		inner, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		for _, d := range inner {
			p := filepath.Join(sub, d.Name())
			if !d.IsDir() || watched[p] {
				continue
			}
			if err := w.hooks.add(w.fw, p); err != nil {
				if isGoneErr(err) {
					continue
				}
				w.fallback(now, describe(err))
				return added
			}
			added = true
		}
		if serr == nil {
			w.listedSub[sub] = [2]time.Time{fi.ModTime(), began}
		}
		added = w.rescanBelow(now, inner, sub, level+1) || added
	}
	return added
}

func isGoneErr(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// identity states of the watched file (directory mode: the directory).
const (
	identUnknown = iota
	identPresent
	identAbsent
)

func (w *Watcher) statIdentity() (int, os.FileInfo) {
	p := w.file
	if w.dirMode {
		p = w.dir
	}
	fi, err := os.Stat(p)
	switch {
	case err == nil:
		return identPresent, fi
	case isGoneErr(err):
		return identAbsent, nil
	}
	return identUnknown, nil
}

// checkIdentity compares the file at the path with the one seen last and
// emits Gone or Replaced.
func (w *Watcher) checkIdentity(now time.Time, how string) {
	st, fi := w.statIdentity()
	name := w.base
	if w.dirMode {
		name = w.dir
	}
	switch {
	case st == identUnknown:
		return
	case st == identPresent && !w.present:
		w.present, w.ident = true, fi
		w.enqueue(Signal{Kind: Replaced, Reason: name + " appeared", At: now})
		w.markDirty(now, causeProbe, 0)
	case st == identPresent:
		if w.ident != nil && !os.SameFile(w.ident, fi) {
			w.ident = fi
			w.enqueue(Signal{Kind: Replaced, Reason: name + " was replaced by a different file", At: now})
			w.markDirty(now, causeProbe, 0)
			return
		}
		w.ident = fi
	case w.present: // st == identAbsent
		w.present, w.ident = false, nil
		reason := name + " " + how
		if how == "" {
			reason = name + " is gone"
		}
		if _, err := os.Stat(w.dir); err != nil {
			reason = "directory " + w.dir + " is gone"
		}
		w.enqueue(Signal{Kind: Gone, Reason: reason, At: now})
	}
}

// describe turns an error from setting up notifications into one line.
func describe(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "inotify watch limit reached (fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE):
		return "inotify instance or file limit reached (fs.inotify.max_user_instances)"
	case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.ENOTSUP), errors.Is(err, errors.ErrUnsupported):
		return "file notifications are not supported here"
	case errors.Is(err, fs.ErrPermission):
		return "no permission to watch the directory"
	}
	return "file notifications unavailable (" + err.Error() + ")"
}
