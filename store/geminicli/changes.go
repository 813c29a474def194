package geminicli

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vigil-run/vigil/store"
)

// cursor is how far each chat file has been read: the offset after its last
// complete line, and the inode it was read on. It is a value: Changes makes
// a new one and never touches the one it is given.
type cursor struct {
	files map[string]filePos
}

type filePos struct {
	ino uint64
	off int64
}

func (cursor) CursorFormat() string { return FormatName }

// fileIndex is a light fold of one chat file up to upto, which Changes
// extends with the bytes it reads: it numbers the turns of new lines
// without reading the file again. Its rows and numbers come from the file
// alone, so any cursor reading the same bytes gets the same ones.
type fileIndex struct {
	mu    sync.Mutex
	path  string
	ino   uint64
	upto  int64
	lines int
	conv  *conv
}

// indexOf is path's index on inode ino, a new one if the file was replaced.
func (s *Store) indexOf(path string, ino uint64) *fileIndex {
	s.mu.Lock()
	defer s.mu.Unlock()
	ix := s.index[path]
	if ix == nil || ix.ino != ino {
		ix = &fileIndex{path: path, ino: ino, conv: newConv(true)}
		s.index[path] = ix
	}
	return ix
}

// Head is a cursor at the end of every chat file's last complete line.
func (s *Store) Head(ctx context.Context) (store.Cursor, error) {
	cur := cursor{files: map[string]filePos{}}
	for _, f := range s.files() {
		fi, err := os.Stat(f.path)
		if err != nil {
			continue
		}
		cur.files[f.path] = filePos{ino: store.Inode(fi), off: completeEnd(f.path, fi.Size())}
	}
	return cur, nil
}

// completeEnd is the offset after the file's last newline at or before size.
func completeEnd(path string, size int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		from := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-from], from)
		if err != nil && n < int(end-from) {
			return 0
		}
		if i := strings.LastIndexByte(string(buf[:n]), '\n'); i >= 0 {
			return from + int64(i) + 1
		}
		end = from
	}
	return 0
}

// Changes reads what each chat file gained after cur: only the appended
// complete lines, as timeline rows (a re-appended message comes again
// under its first row id), context samples, provider calls and the run
// whose status they may change. A file that shrank, was replaced, or
// rewound or checkpointed messages already read is a Reset.
func (s *Store) Changes(ctx context.Context, c store.Cursor) (*store.Changes, store.Cursor, error) {
	cur, ok := c.(cursor)
	if !ok {
		next, err := s.Head(ctx)
		return &store.Changes{Reset: true}, next, err
	}
	ch := &store.Changes{}
	next := cursor{files: make(map[string]filePos, len(cur.files))}
	for _, f := range s.files() {
		if err := ctx.Err(); err != nil {
			return nil, cur, err
		}
		fi, err := os.Stat(f.path)
		if err != nil {
			continue
		}
		pos, seen := cur.files[f.path]
		ino := store.Inode(fi)
		if seen && (pos.ino != ino || fi.Size() < pos.off) {
			next, err := s.Head(ctx)
			return &store.Changes{Reset: true}, next, err
		}
		pos.ino = ino
		if fi.Size() == pos.off {
			next.files[f.path] = pos
			continue
		}
		end, reset, err := s.readNew(f, pos, ch)
		if err != nil {
			return nil, cur, err
		}
		if reset {
			next, err := s.Head(ctx)
			return &store.Changes{Reset: true}, next, err
		}
		pos.off = end
		next.files[f.path] = pos
	}
	return ch, next, nil
}

// readNew folds f's complete lines after pos into ch, and says where they
// end and whether they reshaped messages already read.
func (s *Store) readNew(f sessionFile, pos filePos, ch *store.Changes) (int64, bool, error) {
	ix := s.indexOf(f.path, pos.ino)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	fh, err := os.Open(f.path)
	if err != nil {
		return pos.off, false, nil // gone: the next listing drops it
	}
	defer fh.Close()
	// Catch the index up to the cursor first (a cursor from Head on a file
	// no read has folded yet): the turns before it number the new ones.
	if ix.upto < pos.off {
		if _, err := eachLine(fh, ix.upto, pos.off, func(l rawLine) error { ix.take(s, f.path, l); return nil }); err != nil {
			return pos.off, false, store.Errorf(f.path, store.ErrIO, err, "")
		}
	}
	changed := false
	var reshaped bool
	end, err := eachLine(fh, pos.off, -1, func(l rawLine) error {
		rec := ix.take(s, f.path, l)
		if rec == nil {
			return nil
		}
		if rec.RewindTo != nil || (rec.Set != nil && rec.Set.Messages != nil) {
			reshaped = reshaped || ix.conv.reshaped >= l.off
		}
		changed = true
		if !rec.isMessage() || rec.Type != "gemini" {
			return nil
		}
		e := ix.conv.byID[rec.ID]
		if e == nil || ix.conv.sessionID == "" {
			return nil
		}
		full := &entry{msg: rec.message, row: e.row, num: e.num}
		id := ix.conv.sessionID
		ch.Steps = append(ch.Steps, stepRow(id, full))
		ch.Calls = append(ch.Calls, providerCall(id, full))
		if cs, ok := contextSample(id, full); ok {
			ch.Context = append(ch.Context, cs)
		}
		return nil
	})
	if err != nil {
		return pos.off, false, store.Errorf(f.path, store.ErrIO, err, "")
	}
	if reshaped {
		return end, true, nil
	}
	if changed && ix.conv.sessionID != "" {
		r := runOf(ix.conv, f)
		s.mu.Lock()
		s.byRun[r.ID] = f
		s.mu.Unlock()
		ch.Runs = append(ch.Runs, r)
	}
	return end, false, nil
}

// take folds line l into the index when the index has not yet (it may be
// past l, from a later cursor's read) and returns it parsed, nil when
// blank or malformed (a problem, once).
func (ix *fileIndex) take(s *Store, path string, l rawLine) *line {
	fresh := l.off >= ix.upto
	if fresh {
		ix.lines++
		ix.upto = l.end
	}
	if len(strings.TrimSpace(string(l.text))) == 0 {
		return nil
	}
	rec, err := parseLine(l.text)
	if err != nil {
		if fresh {
			s.problem(path, ix.lines, err)
		}
		return nil
	}
	if fresh {
		ix.conv.apply(rec, l.off)
	}
	return rec
}

// Watch is the directory that holds the chats (the watcher adds the
// sub-agent directories as they appear), with a stat-based Version.
func (s *Store) Watch() store.WatchSpec {
	p := s.root
	if s.single != "" {
		return store.WatchSpec{Path: s.single, Names: []string{filepath.Base(s.single)}, Version: s.version}
	}
	if len(s.dirs) == 1 {
		p = s.dirs[0]
	}
	return store.WatchSpec{Path: p, Version: s.version}
}

// version hashes each chat file's name, size, mtime and inode: it moves as
// soon as bytes are appended.
func (s *Store) version() (uint64, error) {
	h := fnv.New64a()
	var b [8]byte
	for _, f := range s.files() {
		fi, err := os.Stat(f.path)
		if err != nil {
			continue
		}
		h.Write([]byte(f.path))
		for _, v := range []uint64{uint64(fi.Size()), uint64(fi.ModTime().UnixNano()), store.Inode(fi)} {
			binary.LittleEndian.PutUint64(b[:], v)
			h.Write(b[:])
		}
	}
	return h.Sum64(), nil
}
