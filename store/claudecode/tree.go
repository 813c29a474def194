package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
)

// tree is what the store's directories and transcripts held when last
// looked at, so that a history of thousands of sessions is not listed and
// stat'ed whole for every line appended to one of them.
//
//   - A directory is listed again only when its mtime moved (an entry was
//     added or removed) or is too close to the last listing to tell an
//     entry added in the same timestamp tick.
//   - A sub-agent's meta file is read again only when its size or mtime
//     moved.
//   - The view's files are each transcript's size, mtime and inode at the
//     last look, and its gen moves whenever any of it did: gen is the
//     watch version.
//
// Until a watcher calls touched, every read looks at the whole tree first,
// as a reader without a watcher needs. From then on the watcher keeps it
// current (touched after each event, version on its safety tick and
// whenever events may have been missed), and reads use the view as it
// stands. Looking holds look; a view is published whole and never changed
// after, so a read never waits for a look of the whole tree.
type tree struct {
	look  sync.Mutex // held while looking; guards dirs and metas
	dirs  map[string]listing
	metas map[string]metaSeen

	mu   sync.Mutex // guards view
	view treeView
}

// treeView is one look's result. Nothing in it changes once published.
type treeView struct {
	entries []entry // every transcript, in scan's order
	files   map[string]fileSeen
	live    string // the registry's entries
	gen     uint64
	watched bool
	shared  bool // files is the published view's: copy before a change
}

func (t *tree) current() treeView {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view
}

func (t *tree) publish(v treeView) {
	v.shared = true
	t.mu.Lock()
	t.view = v
	t.mu.Unlock()
}

// set records a transcript's state, copying the published files first.
func (v *treeView) set(path string, f fileSeen, gone bool) {
	if v.shared || v.files == nil {
		files := make(map[string]fileSeen, len(v.files)+1)
		for k, x := range v.files {
			files[k] = x
		}
		v.files, v.shared = files, false
	}
	if gone {
		delete(v.files, path)
	} else {
		v.files[path] = f
	}
	v.gen++
}

type listing struct {
	mod, at time.Time // the directory's mtime, and when it was listed
	ents    []dirent
}

type dirent struct {
	name string
	dir  bool
}

type metaSeen struct {
	size int64
	mod  time.Time
	meta *agentMeta // nil: unreadable or not JSON
}

type fileSeen struct {
	size int64
	mod  time.Time
	ino  uint64
}

// listTrust is how long after its mtime a listing must have been taken
// to be trusted while the mtime stays: an entry added in the same
// timestamp tick as the one listed leaves the mtime as it was.
const listTrust = 2 * time.Second

// list is a directory's entries, sorted by name; nil when it is not
// there. Callers hold t.look.
func (t *tree) list(dir string) []dirent {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		delete(t.dirs, dir)
		return nil
	}
	if l, ok := t.dirs[dir]; ok && l.mod.Equal(fi.ModTime()) && l.at.Sub(l.mod) > listTrust {
		return l.ents
	}
	at := time.Now()
	des, err := os.ReadDir(dir)
	if err != nil {
		delete(t.dirs, dir)
		return nil
	}
	ents := make([]dirent, len(des))
	for i, d := range des {
		ents[i] = dirent{d.Name(), d.IsDir() || d.Type()&os.ModeSymlink != 0 && isDir(filepath.Join(dir, d.Name()))}
	}
	if t.dirs == nil {
		t.dirs = map[string]listing{}
	}
	t.dirs[dir] = listing{mod: fi.ModTime(), at: at, ents: ents}
	return ents
}

// meta is a sub-agent's meta file, read again only when it changed.
func (t *tree) meta(path string) *agentMeta {
	fi, err := os.Stat(path)
	if err != nil {
		delete(t.metas, path)
		return nil
	}
	if m, ok := t.metas[path]; ok && m.size == fi.Size() && m.mod.Equal(fi.ModTime()) {
		return m.meta
	}
	seen := metaSeen{size: fi.Size(), mod: fi.ModTime()}
	if b, err := os.ReadFile(path); err == nil {
		var m agentMeta
		if json.Unmarshal(b, &m) == nil {
			seen.meta = &m
		}
	}
	if t.metas == nil {
		t.metas = map[string]metaSeen{}
	}
	t.metas[path] = seen
	return seen.meta
}

// look stats one transcript and moves gen when it changed; false when it
// is gone.
func (v *treeView) look(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		if _, ok := v.files[path]; ok {
			v.set(path, fileSeen{}, true)
		}
		return false
	}
	now := fileSeen{size: fi.Size(), mod: fi.ModTime(), ino: store.Inode(fi)}
	if was, ok := v.files[path]; !ok || was != now {
		v.set(path, now, false)
	}
	return true
}

// scan is every transcript: the view as it stands once watched, else
// looked at whole first.
func (s *Store) scan() []entry {
	if v := s.tree.current(); v.watched && v.entries != nil {
		return v.entries
	}
	t := &s.tree
	t.look.Lock()
	defer t.look.Unlock()
	v := t.current()
	s.relist(&v)
	t.publish(v)
	return v.entries
}

// lookWhole lists the tree again (each directory only as list allows) and
// stats every transcript, and publishes that view; watched marks it kept
// current by a watcher from now on.
func (s *Store) lookWhole(watched bool) treeView {
	t := &s.tree
	t.look.Lock()
	defer t.look.Unlock()
	v := t.current()
	v.watched = v.watched || watched
	s.relist(&v)
	for _, e := range v.entries {
		v.look(e.path)
	}
	s.lookRegistry(&v)
	t.publish(v)
	return v
}

// relist lists the tree again into v, and drops transcripts that went.
// Callers hold t.look.
func (s *Store) relist(v *treeView) {
	var out []entry
	for _, f := range s.sessionFiles() {
		out = append(out, s.sessionEntries(f)...)
	}
	had := make(map[string]bool, len(out))
	for _, e := range out {
		had[e.path] = true
		if _, ok := v.files[e.path]; !ok {
			v.look(e.path)
		}
	}
	for p := range v.files {
		if !had[p] {
			v.set(p, fileSeen{}, true)
		}
	}
	v.entries = out
}

// sessionFiles lists the main transcripts, sorted as a glob would.
func (s *Store) sessionFiles() []string {
	t := &s.tree
	var dirs []string
	if s.lay.project != "" {
		dirs = []string{s.lay.project}
	} else {
		for _, d := range t.list(s.lay.projects) {
			if d.dir {
				dirs = append(dirs, filepath.Join(s.lay.projects, d.name))
			}
		}
	}
	var out []string
	for _, d := range dirs {
		for _, f := range t.list(d) {
			if !f.dir && strings.HasSuffix(f.name, ".jsonl") {
				out = append(out, filepath.Join(d, f.name))
			}
		}
	}
	return out
}

// subagentFiles lists a session's sub-agent transcripts.
func (s *Store) subagentFiles(session string) []string {
	dir := filepath.Join(strings.TrimSuffix(session, ".jsonl"), "subagents")
	var out []string
	for _, f := range s.tree.list(dir) {
		if !f.dir && strings.HasPrefix(f.name, "agent-") && strings.HasSuffix(f.name, ".jsonl") {
			out = append(out, filepath.Join(dir, f.name))
		}
	}
	return out
}

// version looks at the whole tree: every directory (as list allows),
// every transcript and the registry.
func (s *Store) version() (uint64, error) { return s.lookWhole(false).gen, nil }

// touched looks at what events named: a transcript known is stat'ed; any
// other path (a directory, a file new or gone) lists the tree again. The
// registry, outside the watched directory, is looked at each time.
func (s *Store) touched(named []string) (uint64, error) {
	if v := s.tree.current(); !v.watched || v.entries == nil {
		return s.lookWhole(true).gen, nil
	}
	t := &s.tree
	t.look.Lock()
	defer t.look.Unlock()
	v := t.current()
	again := false
	for _, p := range named {
		if _, known := v.files[p]; !known || !v.look(p) {
			again = true
		}
	}
	if again {
		s.relist(&v)
	}
	s.lookRegistry(&v)
	t.publish(v)
	return v.gen, nil
}

// lookRegistry moves gen when the live-session registry's entries changed.
func (s *Store) lookRegistry(v *treeView) {
	var names []string
	if ents, err := os.ReadDir(s.lay.registry()); err == nil {
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	if k := strings.Join(names, "\x00"); k != v.live {
		v.live = k
		v.gen++
	}
}

// changedSince is every transcript, and what the view holds of those that
// differ from cur: new ones, and ones whose size or inode is not the
// cursor's. Without a watcher keeping it current the tree is looked at
// whole first.
func (s *Store) changedSince(cur *cursor) ([]entry, map[string]fileSeen) {
	v := s.tree.current()
	if !v.watched || v.entries == nil {
		v = s.lookWhole(false)
	}
	out := map[string]fileSeen{}
	for _, e := range v.entries {
		f, ok := v.files[e.path]
		if !ok {
			continue // gone since it was listed
		}
		if fc, known := cur.files[e.path]; !known || fc.ino != f.ino || fc.off != f.size {
			out[e.path] = f
		}
	}
	return v.entries, out
}
