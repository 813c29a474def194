package codex

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vigil-run/vigil/store"
)

// seenLog is what the watcher saw of the rollouts: each one's size and
// inode at its last look, and a log of which rollouts each look found
// changed, numbered by gen (the watch version). Once a watcher calls
// touched, Changes stats only the rollouts logged since its cursor's gen
// instead of every rollout of a tree of months. A cursor from Head, from
// another store, or older than the log compares every rollout.
type seenLog struct {
	mu      sync.Mutex
	watched bool
	gen     uint64
	files   map[string]seenFile
	log     []seenChange
	logFrom uint64 // the gen before the log's first entry
}

type seenFile struct {
	size int64
	ino  uint64
	gen  uint64 // when it was last found changed
}

// seenChange is a rollout a look found changed; "" is the listing (a
// directory came or went: rollouts may have).
type seenChange struct {
	path string
	gen  uint64
}

const seenLogMax = 4096

// note records what a stat found (gone: none), logging a change. Callers
// hold mu.
func (l *seenLog) note(p string, fi os.FileInfo, gone bool) {
	was, known := l.files[p]
	switch {
	case gone && !known:
		return
	case !gone && known && was.size == fi.Size() && was.ino == store.Inode(fi):
		return
	}
	l.gen++
	if gone {
		delete(l.files, p)
	} else {
		if l.files == nil {
			l.files = map[string]seenFile{}
		}
		l.files[p] = seenFile{size: fi.Size(), ino: store.Inode(fi), gen: l.gen}
	}
	l.logged(p)
}

func (l *seenLog) logged(p string) {
	l.log = append(l.log, seenChange{p, l.gen})
	if n := len(l.log); n > seenLogMax {
		drop := n - seenLogMax/2
		l.logFrom = l.log[drop-1].gen
		l.log = append([]seenChange(nil), l.log[drop:]...)
	}
}

// since is what changed after gen: the rollouts, and whether the listing
// did; ok is false when the log cannot say (not watched, no gen, older
// than the log).
func (l *seenLog) since(gen uint64) (now uint64, paths []string, listing, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.watched || gen == 0 || gen < l.logFrom {
		return l.gen, nil, false, false
	}
	seen := map[string]bool{}
	for i := len(l.log) - 1; i >= 0 && l.log[i].gen > gen; i-- {
		switch p := l.log[i].path; {
		case p == "":
			listing = true
		case !seen[p]:
			seen[p] = true
			paths = append(paths, p)
		}
	}
	return l.gen, paths, listing, true
}

// version looks at every rollout. Its stats are made without holding the
// log: a touched meanwhile is not kept waiting, and what it saw of a
// rollout (newer) is kept.
func (s *Store) version() (uint64, error) {
	l := &s.seen
	l.mu.Lock()
	from := l.gen
	l.mu.Unlock()
	files := s.files()
	stats := make([]os.FileInfo, len(files))
	for i, p := range files {
		stats[i], _ = os.Stat(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	listed := make(map[string]bool, len(files))
	for i, p := range files {
		listed[p] = true
		if l.files[p].gen > from {
			continue // touched since this look began
		}
		l.note(p, stats[i], stats[i] == nil)
	}
	for p, f := range l.files {
		if !listed[p] && f.gen <= from {
			l.note(p, nil, true)
		}
	}
	return l.gen, nil
}

// touched looks at the paths events named: a rollout is stat'ed; a
// directory (a new day) logs the listing as changed.
func (s *Store) touched(named []string) (uint64, error) {
	l := &s.seen
	if l.mu.Lock(); !l.watched {
		l.mu.Unlock()
		v, err := s.version() // the first look: every rollout
		l.mu.Lock()
		l.watched = true
		l.mu.Unlock()
		return v, err
	}
	defer l.mu.Unlock()
	for _, p := range named {
		if !rolloutName(p) {
			l.gen++
			l.logged("")
			continue
		}
		fi, err := os.Stat(p)
		l.note(p, fi, err != nil)
	}
	return l.gen, nil
}

func rolloutName(p string) bool {
	b := filepath.Base(p)
	return strings.Contains(b, "rollout-") && strings.HasSuffix(b, ".jsonl")
}
