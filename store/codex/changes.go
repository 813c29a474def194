package codex

import (
	"context"
	"io"
	"os"

	"github.com/vigil-run/vigil/store"
)

// Cursor is how far each rollout has been read: its inode, the offset
// after its last whole line, and the fold of it so far (nil until the
// file first grows after Head: Head reads no rollout). Changes never
// changes a Cursor; it returns a new one.
type Cursor struct {
	files  map[string]fileCur
	reason string // why the cursor before this one could not be followed
	// partial: HeadNewest's, following the newest rollouts alone until
	// WholeHead.
	partial bool
	// seen and gen: the watcher's log Changes read this cursor against
	// (none: every rollout is stat'ed).
	seen *seenLog
	gen  uint64
}

type fileCur struct {
	ino uint64
	off int64
	ses *session
}

func (c *Cursor) CursorFormat() string { return Format }

// ResetReason says why Changes returned this cursor with Reset.
func (c *Cursor) ResetReason() string { return c.reason }

// Head is a cursor at the end of every rollout's last whole line.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	c := &Cursor{files: map[string]fileCur{}}
	for _, p := range s.files() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.follow(p)
	}
	return c, nil
}

// follow takes a rollout from the end of its last whole line now.
func (c *Cursor) follow(p string) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		c.files[p] = fileCur{ino: store.Inode(fi), off: wholeEnd(f, fi.Size())}
	}
}

// wholeEnd is the offset after the last newline at or before size. It
// reads back from the end a little first (a rollout's lines are mostly
// short), then in larger steps.
func wholeEnd(f *os.File, size int64) int64 {
	buf := make([]byte, 64<<10)
	for end, step := size, int64(4<<10); end > 0; step = int64(len(buf)) {
		start := max(end-step, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && err != io.EOF {
			return 0
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return start + int64(i) + 1
			}
		}
		end = start
	}
	return 0
}

// Changes reads the bytes appended to each rollout since cur, and the
// rollouts that are new. A rollout that shrank or was replaced is a Reset.
func (s *Store) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		return nil, nil, store.Errorf(s.path, store.ErrUnsupported, nil, "not a cursor of this Codex source")
	}
	if c.partial {
		return nil, cur, errPartial
	}
	// Once watched, only the rollouts the watcher saw change since this
	// cursor's look are stat'ed (and, when a directory came or went, the
	// rollouts the cursor does not know); the gen is taken before the
	// stats, so a write after them is seen by the next call.
	var gen uint64
	var paths []string
	relisted, logged := false, false
	if c.seen == &s.seen {
		gen, paths, relisted, logged = s.seen.since(c.gen)
	} else {
		gen, _, _, _ = s.seen.since(0)
	}
	next := &Cursor{files: make(map[string]fileCur, len(c.files)), seen: &s.seen, gen: gen}
	look := s.files()
	if logged {
		for p, fc := range c.files {
			next.files[p] = fc
		}
		look = paths
		if relisted {
			for _, p := range s.files() {
				if _, known := c.files[p]; !known {
					look = append(look, p)
				}
			}
		}
	}
	ch := &store.Changes{}
	for _, p := range look {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		fc, known := c.files[p]
		if known {
			// A stat says whether a rollout moved; only one that did is
			// opened.
			fi, err := os.Stat(p)
			if err != nil {
				delete(next.files, p)
				continue // gone between the listing and now: the next call says
			}
			if store.Inode(fi) != fc.ino || fi.Size() < fc.off {
				return s.reset(ctx, p+" was replaced or cut short")
			}
			if fi.Size() == fc.off {
				next.files[p] = fc
				continue
			}
		}
		f, err := os.Open(p)
		if err != nil {
			delete(next.files, p)
			continue // gone between the listing and now: the next call says
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			delete(next.files, p)
			continue
		}
		ino := store.Inode(fi)
		if known && (ino != fc.ino || fi.Size() < fc.off) {
			f.Close()
			return s.reset(ctx, p+" was replaced or cut short")
		}
		if known && fi.Size() == fc.off {
			f.Close()
			next.files[p] = fc
			continue
		}
		fc, err = s.follow(f, p, fc, known)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		fc.ino = ino
		fc.ses.emit(ch)
		next.files[p] = fc
	}
	return ch, next, nil
}

// follow folds what was appended to p since fc, on a copy of fc's fold;
// a rollout not read before is first folded up to fc's offset, quietly:
// that much was there at Head.
func (s *Store) follow(f *os.File, p string, fc fileCur, known bool) (fileCur, error) {
	var ses *session
	switch {
	case !known:
		ses, fc.off = newSession(), 0
	case fc.ses == nil:
		ses = newSession()
		if _, err := s.foldFrom(f, p, ses, 0, fc.off, nil); err != nil {
			return fc, err
		}
		ses.seen()
	default:
		ses = fc.ses.clone()
	}
	if _, err := f.Seek(fc.off, io.SeekStart); err != nil {
		return fc, store.Errorf(p, store.ErrIO, err, "%v", err)
	}
	off, err := s.foldFrom(f, p, ses, fc.off, -1, nil)
	if err != nil {
		return fc, err
	}
	fc.off, fc.ses = off, ses
	return fc, nil
}

func (s *Store) reset(ctx context.Context, why string) (*store.Changes, store.Cursor, error) {
	h, err := s.Head(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.(*Cursor).reason = why
	return &store.Changes{Reset: true}, h, nil
}

// seen marks what was folded by Head's time as handed out: a reader that
// took its cursor with Head loaded it already. A turn not committed then
// was among its steps as a placeholder at most: its row goes out when it
// commits.
func (ses *session) seen() {
	for i := range ses.turns {
		ses.turns[i].sent = ses.committed(i)
		ses.turns[i].heldSent = ses.held(i)
		ses.turns[i].usageSent = ses.turns[i].usage != nil
	}
	ses.spawnsSent, ses.dirty = len(ses.spawns), false
	ses.trim()
}

// emit adds what the fold holds that was not handed out yet. A turn's
// usage goes out as it arrives (a provider call, a context sample); its
// timeline row once it commits, so that a committed row, once sent, never
// changes. Before that, a turn whose call runs goes out once as a pending
// placeholder, which its committed row (a larger row id) replaces.
func (ses *session) emit(ch *store.Changes) {
	if ses.id == "" {
		return // no session_meta yet
	}
	if ses.dirty {
		ch.Runs = append(ch.Runs, ses.run(false))
		ses.dirty = false
	}
	for i := range ses.turns {
		t := &ses.turns[i]
		if !t.usageSent {
			if pc, ok := ses.call(t); ok {
				ch.Calls = append(ch.Calls, pc)
				cs, _ := ses.sample(t)
				ch.Context = append(ch.Context, cs)
				t.usageSent = true
			}
		}
	}
	for i := range ses.turns {
		t := &ses.turns[i]
		if t.sent {
			continue
		}
		if !ses.committed(i) {
			if !t.heldSent && ses.held(i) {
				ch.Steps = append(ch.Steps, stepRow(ses.pendingStep(t)))
				t.heldSent = true
			}
			break
		}
		ch.Steps = append(ch.Steps, stepRow(ses.step(t)))
		t.sent = true
	}
	ch.AgentEvents = append(ch.AgentEvents, ses.spawnEvents(ses.spawns[ses.spawnsSent:])...)
	ses.spawnsSent = len(ses.spawns)
	ses.trim()
}

func stepRow(st store.Step) store.StepRow {
	return store.StepRow{RowID: st.RowID, RunID: st.RunID, Number: st.Number, Kind: st.Kind, Decision: st.Decision,
		ToolCall: st.ToolCall, ResultHead: st.ResultHead, Tokens: st.Tokens, Pending: st.Pending}
}

// trim drops the turns handed out whole, and their results, keeping the
// newest turn (a late token count is matched against it): the fold a
// cursor holds stays as small as what is still open.
func (ses *session) trim() {
	n := 0
	for n < len(ses.turns)-1 && ses.turns[n].sent && ses.turns[n].usageSent {
		for _, c := range ses.turns[n].calls {
			delete(ses.results, c.id)
		}
		n++
	}
	ses.turns = ses.turns[n:]
}

// watch is the rollout itself, or the directory tree of rollouts to the
// depth walk reads (Codex nests its sessions by date, sessions/YYYY/MM/DD):
// a line appended to any rollout is an event naming it, which Touched
// stats alone; Version, the safety tick's, stats every rollout.
func (s *Store) watch() store.WatchSpec {
	if s.one != "" {
		return store.WatchSpec{Path: s.one, Version: s.version}
	}
	return store.WatchSpec{Path: s.root, Version: s.version, Touched: s.touched, Depth: walkDepth}
}
