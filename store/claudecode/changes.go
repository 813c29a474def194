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
// is never changed once made.
type cursor struct {
	files map[string]fileCursor
	live  string
	// partial: HeadNewest's, following the newest sessions alone until
	// WholeHead.
	partial bool
}

// follow takes a transcript from where it ends now.
func (c *cursor) follow(path string) {
	if fi, err := os.Stat(path); err == nil {
		c.files[path] = fileCursor{ino: store.Inode(fi), off: lastNewline(path, fi.Size())}
	}
}

func (*cursor) CursorFormat() string { return Format }

func (s *Store) head() *cursor {
	c := &cursor{files: map[string]fileCursor{}, live: liveKey(liveSessions(s.lay.registry(), time.Now()))}
	for _, e := range s.scan() {
		c.follow(e.path)
	}
	return c
}

// Changes reads what was appended to each transcript since cur, a new
// transcript whole, and the registry; O(new bytes) but for a transcript's
// first growth after Head, whose fold is rebuilt once.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*cursor)
	if !ok || c == nil {
		return nil, nil, store.Errorf(s.path, store.ErrUnsupported, nil, "not a Claude Code cursor")
	}
	if c.partial {
		return nil, cur, errPartial
	}
	now := time.Now()
	live := liveSessions(s.lay.registry(), now)
	next := &cursor{files: make(map[string]fileCursor, len(c.files)), live: liveKey(live)}
	for k, v := range c.files {
		next.files[k] = v
	}
	ch := &store.Changes{}
	changed := map[string]bool{}
	entries, differ := s.changedSince(c)
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		present[e.path] = true
	}
	for p := range c.files {
		if !present[p] { // a transcript removed: what was shown of it goes
			return &store.Changes{Reset: true}, s.head(), nil
		}
	}
	for _, e := range entries {
		seen, differs := differ[e.path]
		if !differs {
			continue
		}
		fc, known := c.files[e.path]
		if known && (seen.ino != fc.ino || seen.size < fc.off) {
			// The tree may be older than the cursor (read on past what the
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
		next.files[e.path] = fileCursor{ino: seen.ino, off: off, fold: &f}
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
	if next.live != c.live {
		ch.LeasesChanged, ch.Leases = true, map[string]store.Lease{}
		for id, l := range live {
			ch.Leases[id] = l
		}
		for _, e := range entries {
			changed[e.id] = true // liveness moves every run's status
		}
	}
	depth := depths(entries)
	for _, e := range entries {
		if changed[e.id] {
			r := s.run(e, live)
			r.Depth = depth[e.id]
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
