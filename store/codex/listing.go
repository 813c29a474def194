package codex

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// listing keeps each directory of the sessions tree as last read, so that
// finding the rollouts again (every Changes, every Version) lists only the
// directories whose entries changed. A new or removed entry moves its
// directory's mtime; an append to a rollout does not, so a tree of months
// is listed once and then stat'ed, directory by directory. A directory
// whose mtime is within a timestamp's granularity of its listing is read
// again: an entry made in that instant may not have moved it.
type listing struct {
	mu    sync.Mutex
	dirs  map[string]dirList
	files []string // every rollout, by name, as of the last call
}

type dirList struct {
	mtime, listed time.Time
	subdirs       []string // full paths, in name order
	rollouts      []string // full paths
}

// granularity is how far apart two writes must be for their mtimes to
// differ on any file system vigil reads.
const granularity = 2 * time.Second

// rollouts lists the rollout-named regular files under root, walkDepth
// directories deep at most, ordered by name (names carry the start time).
// The slice is shared: callers must not change it.
func (l *listing) rollouts(root string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirs == nil {
		l.dirs = map[string]dirList{}
	}
	seen := make(map[string]bool, len(l.dirs))
	changed := false
	var out []string
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		seen[dir] = true
		fi, err := os.Stat(dir)
		if err != nil {
			changed = changed || l.dirs[dir].listed != time.Time{}
			delete(l.dirs, dir)
			return
		}
		d, ok := l.dirs[dir]
		if !ok || !fi.ModTime().Equal(d.mtime) || d.listed.Sub(d.mtime) <= granularity {
			d, changed = readDirList(dir, fi.ModTime()), true
			l.dirs[dir] = d
		}
		out = append(out, d.rollouts...)
		if depth < walkDepth {
			for _, sub := range d.subdirs {
				visit(sub, depth+1)
			}
		}
	}
	visit(root, 0)
	for dir := range l.dirs {
		if !seen[dir] {
			delete(l.dirs, dir)
			changed = true
		}
	}
	if changed || l.files == nil {
		sort.Slice(out, func(i, j int) bool { return filepath.Base(out[i]) < filepath.Base(out[j]) })
		l.files = out
	}
	return l.files
}

// readDirList reads a directory's subdirectories and rollout-named regular
// files (a symlink is neither, as filepath.WalkDir has it).
func readDirList(dir string, mtime time.Time) dirList {
	d := dirList{mtime: mtime, listed: time.Now()}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return d
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			d.subdirs = append(d.subdirs, p)
		case e.Type().IsRegular() && strings.Contains(e.Name(), "rollout-") && strings.HasSuffix(e.Name(), ".jsonl"):
			d.rollouts = append(d.rollouts, p)
		}
	}
	return d
}
