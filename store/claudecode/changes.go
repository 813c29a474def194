package claudecode

import (
	"context"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// fileCursor is how far one transcript has been read: up to its last
// complete line, in the file with that inode, with the fold of what was
// read (nil from Head: rebuilt from the start the first time it grows).
type fileCursor struct {
	ino  uint64
	off  int64
	fold *fold
}

// cursor is every transcript's fileCursor and the live sessions seen. It
// is never changed once made: the next cursor shares its files but for
// those read since.
type cursor struct {
	files layered[fileCursor]
	live  string
	// partial: HeadNewest's, following the newest sessions alone until
	// WholeHead.
	partial bool
	// tree and gen: the view Changes compared the files with, so that the
	// next Changes compares only what the view's log says changed since
	// (none: every transcript).
	tree *tree
	gen  uint64
}

// follow takes a transcript from where it ends now.
func follow(files *layeredEdit[fileCursor], path string) {
	if fi, err := os.Stat(path); err == nil {
		files.set(path, fileCursor{ino: store.Inode(fi), off: lastNewline(path, fi.Size())}, false)
	}
}

func (*cursor) CursorFormat() string { return Format }

func (s *Store) head() *cursor {
	files := layered[fileCursor]{}.edit()
	for _, e := range s.scan() {
		follow(files, e.path)
	}
	return &cursor{files: files.done(), live: liveKey(liveSessions(s.lay.registry(), time.Now()))}
}

// Changes reads what was appended to each transcript since cur, a new
// transcript whole, and the registry; O(new bytes) but for a transcript's
// first growth after Head, whose fold is rebuilt once. Once a watcher
// keeps the tree, only what it saw change since cur is looked at.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*cursor)
	if !ok || c == nil {
		return nil, nil, store.Errorf(s.path, store.ErrUnsupported, nil, "not a Claude Code cursor")
	}
	if c.partial {
		return nil, cur, errPartial
	}
	if c.tree != &s.tree {
		c = &cursor{files: c.files, live: c.live} // another store's view: compare every transcript
	}
	now := time.Now()
	live := liveSessions(s.lay.registry(), now)
	v, differ, gone := s.changedSince(c)
	if gone { // a transcript removed: what was shown of it goes
		return &store.Changes{Reset: true}, s.head(), nil
	}
	next := &cursor{live: liveKey(live), tree: &s.tree, gen: v.gen}
	ch := &store.Changes{}
	changed := map[string]bool{}
	files := c.files.edit()
	for _, p := range differ {
		e := v.entries[v.index[p]]
		seen, _ := v.files.get(p)
		fc, known := c.files.get(p)
		if known && (seen.ino != fc.ino || seen.size < fc.off) {
			// The view may be older than the cursor (read on past what the
			// last look saw): only the file as it is now can say it was
			// replaced or cut.
			fi, err := os.Stat(e.path)
			if err != nil {
				continue
			}
			seen = fileSeen{size: fi.Size(), ino: store.Inode(fi)}
			if seen.ino != fc.ino || seen.size < fc.off {
				return &store.Changes{Reset: true}, s.head(), nil
			}
			if seen.size == fc.off {
				continue
			}
		}
		f, from := fold{keep: cursorKeep}, int64(0)
		switch {
		case known && fc.fold != nil:
			f, from = fc.fold.clone(), fc.off
		case known:
			f, from = s.refold(e.path, fc.ino, fc.off), fc.off
		}
		emit := func(t *turn) {
			ch.Steps = append(ch.Steps, t.stepRow(e.id))
			ch.Calls = append(ch.Calls, t.providerCall(e.id))
			ch.Context = append(ch.Context, t.contextSample(e.id))
		}
		had := f.lines
		off, err := readLines(e.path, from, func(l []byte) { s.report(e.path, f.feed(l, emit)) })
		if err != nil {
			continue
		}
		if t := f.open; t != nil && lineOf(t.row) > had {
			emit(t) // a turn begun in what was read and still running: its placeholder
		}
		files.set(e.path, fileCursor{ino: seen.ino, off: off, fold: &f}, false)
		if off != from || !known {
			changed[e.id] = true
		}
		if !known && e.parent != "" {
			ev := store.AgentEvent{RunID: e.parent, Kind: store.AgentSpawn, ChildRunID: e.id}
			if e.meta != nil {
				ev.Detail = e.meta.Description
			}
			ch.AgentEvents = append(ch.AgentEvents, ev)
		}
	}
	next.files = files.done()
	if next.live != c.live {
		ch.LeasesChanged, ch.Leases = true, map[string]store.Lease{}
		for id, l := range live {
			ch.Leases[id] = l
		}
		for _, e := range v.entries {
			changed[e.id] = true // liveness moves every run's status
		}
	}
	for _, e := range v.entries {
		if changed[e.id] {
			r := s.run(e, live)
			r.Depth = v.depth[e.id]
			ch.Runs = append(ch.Runs, r)
		}
	}
	return ch, next, nil
}

// cursorKeep caps the texts a cursor's fold holds: the open turn's heads.
const cursorKeep = 4 << 10

// refold is the fold of a transcript up to off (a cursor from Head carries
// none): on from RunStats' count where that stopped at or before off, else
// from the start.
func (s *Store) refold(path string, ino uint64, off int64) fold {
	s.mu.Lock()
	c, ok := s.counted[path]
	s.mu.Unlock()
	f, read := fold{keep: cursorKeep}, int64(0)
	if ok && c.ino == ino && c.off <= off {
		f, read = c.fold.clone(), c.off
		f.counting = false // a tail reports every malformed line
	}
	readLines(path, read, func(l []byte) {
		if read >= off {
			return
		}
		read += int64(len(l)) + 1
		f.feed(l, func(*turn) {})
	})
	return f
}

// lastNewline is the offset after the last newline at or before size.
func lastNewline(path string, size int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		n, _ := f.ReadAt(buf[:end-start], start)
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return start + int64(i) + 1
			}
		}
		end = start
	}
	return 0
}

func liveKey(live map[string]store.Lease) string {
	ids := make([]string, 0, len(live))
	for id, l := range live {
		ids = append(ids, id+"="+l.Owner)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// Watch is the projects (or project) directory; the version probe covers
// the transcripts one and two levels down and the live registry.
func (s *Store) Watch() store.WatchSpec {
	return store.WatchSpec{Path: s.lay.root(), Version: s.version, Touched: s.touched}
}
