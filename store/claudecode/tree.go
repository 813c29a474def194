package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
//     watch version. Its log says which transcripts each gen changed, so
//     that Changes looks at those alone.
//
// Until a watcher calls touched, every read looks at the whole tree first,
// as a reader without a watcher needs. From then on the watcher keeps it
// current (touched after each event, version on its safety tick and
// whenever events may have been missed), and reads use the view as it
// stands. A view is published whole and never changed after, so a read
// never waits for a look; the whole look lists and stats before it takes
// look, so a touched never waits for it either.
type tree struct {
	look   sync.Mutex // held while a view is made from the current one
	listMu sync.Mutex // held while listing; guards dirs and metas
	dirs   map[string]dirListing
	metas  map[string]metaSeen

	mu   sync.Mutex // guards view
	view treeView
}

// treeView is one look's result. Nothing in it changes once published.
type treeView struct {
	entries []entry        // every transcript, in scan's order
	index   map[string]int // a transcript's place in entries
	depth   map[string]int // a run's depth in its tree
	files   layered[fileSeen]
	log     []logged // what the looks changed, oldest first
	logFrom uint64   // the gen before the log's first entry
	live    string   // the registry's entries
	gen     uint64
	watched bool
}

// logged is a transcript a look changed (appeared, grew, went), and the
// gen it moved to; "" is the registry.
type logged struct {
	path string
	gen  uint64
}

// logMax bounds the log: a cursor older than what it holds compares every
// transcript instead.
const logMax = 4096

func (t *tree) current() treeView {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view
}

// viewEdit is the next view, made by one look.
type viewEdit struct {
	treeView
	edit *layeredEdit[fileSeen]
}

func (t *tree) begin() *viewEdit {
	v := t.current()
	return &viewEdit{treeView: v, edit: v.files.edit()}
}

func (t *tree) publish(e *viewEdit) treeView {
	v := e.treeView
	v.files = e.edit.done()
	if n := len(v.log); n > logMax {
		drop := n - logMax/2
		v.logFrom = v.log[drop-1].gen
		v.log = append([]logged(nil), v.log[drop:]...)
	}
	t.mu.Lock()
	t.view = v
	t.mu.Unlock()
	return v
}

func (e *viewEdit) file(path string) (fileSeen, bool) {
	if e.edit.copied {
		if l, ok := e.edit.top[path]; ok {
			return l.v, !l.gone
		}
		v, ok := e.edit.from.base[path]
		return v, ok
	}
	return e.edit.from.get(path)
}

// set records a transcript's state (or that it went) and logs it.
func (e *viewEdit) set(path string, f fileSeen, gone bool) {
	e.edit.set(path, f, gone)
	e.changed(path)
}

func (e *viewEdit) changed(path string) {
	e.gen++
	e.log = append(e.log, logged{path, e.gen})
}

type dirListing struct {
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
// there. Callers hold t.listMu.
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
		t.dirs = map[string]dirListing{}
	}
	t.dirs[dir] = dirListing{mod: fi.ModTime(), at: at, ents: ents}
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
func (e *viewEdit) look(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		if _, ok := e.file(path); ok {
			e.set(path, fileSeen{}, true)
		}
		return false
	}
	now := fileSeen{size: fi.Size(), mod: fi.ModTime(), ino: store.Inode(fi)}
	if was, ok := e.file(path); !ok || was != now {
		e.set(path, now, false)
	}
	return true
}

// scan is every transcript: the view as it stands once watched, else
// listed again first.
func (s *Store) scan() []entry {
	if v := s.tree.current(); v.watched && v.entries != nil {
		return v.entries
	}
	l := s.listTree()
	t := &s.tree
	t.look.Lock()
	defer t.look.Unlock()
	e := t.begin()
	e.apply(l)
	return t.publish(e).entries
}

// lookWhole lists the tree again (each directory only as list allows) and
// stats every transcript, and publishes that view; watched marks it kept
// current by a watcher from now on. The listing and the stats are made
// without holding look: a touched meanwhile is not kept waiting, and what
// it saw of a transcript is newer than what this look saw and is kept.
func (s *Store) lookWhole(watched bool) treeView {
	t := &s.tree
	before := t.current()
	l := s.listTree()
	seen := make([]fileSeen, len(l.entries))
	there := make([]bool, len(l.entries))
	for i, x := range l.entries {
		if fi, err := os.Stat(x.path); err == nil {
			seen[i], there[i] = fileSeen{size: fi.Size(), mod: fi.ModTime(), ino: store.Inode(fi)}, true
		}
	}
	if wholeLooked != nil {
		wholeLooked()
	}
	t.look.Lock()
	defer t.look.Unlock()
	e := t.begin()
	e.watched = e.watched || watched
	e.apply(l)
	for i, x := range l.entries {
		now, nowOK := e.file(x.path)
		was, wasOK := before.files.get(x.path)
		if now != was || nowOK != wasOK {
			continue // looked at since this look began
		}
		switch {
		case !there[i] && nowOK:
			e.set(x.path, fileSeen{}, true)
		case there[i] && (!nowOK || now != seen[i]):
			e.set(x.path, seen[i], false)
		}
	}
	s.lookRegistry(e)
	return t.publish(e)
}

// wholeLooked, set by a test, runs when a whole look has listed and
// stat'ed and not yet taken look.
var wholeLooked func()

// listing is the tree as listed: every transcript in scan's order, each
// one's place, each run's depth in its tree.
type listing struct {
	entries []entry
	index   map[string]int
	depth   map[string]int
}

// listTree lists the tree again, each directory only as list allows.
func (s *Store) listTree() listing {
	s.tree.listMu.Lock()
	defer s.tree.listMu.Unlock()
	var out []entry
	for _, f := range s.sessionFiles() {
		out = append(out, s.sessionEntries(f)...)
	}
	index := make(map[string]int, len(out))
	for i, x := range out {
		index[x.path] = i
	}
	return listing{entries: out, index: index, depth: depths(out)}
}

// apply takes a listing into the view: transcripts it lists that the view
// has not seen are stat'ed, those it no longer lists are gone. Callers
// hold t.look.
func (e *viewEdit) apply(l listing) {
	for _, x := range l.entries {
		if _, ok := e.file(x.path); !ok {
			e.look(x.path)
		}
	}
	var gone []string
	e.edit.from.each(func(p string, _ fileSeen) {
		if _, ok := l.index[p]; !ok {
			gone = append(gone, p)
		}
	})
	if e.edit.copied {
		for p, x := range e.edit.top {
			if _, ok := l.index[p]; !ok && !x.gone {
				gone = append(gone, p)
			}
		}
	}
	for _, p := range gone {
		if _, ok := e.file(p); ok {
			e.set(p, fileSeen{}, true)
		}
	}
	e.entries, e.index, e.depth = l.entries, l.index, l.depth
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
	e := t.begin()
	again := false
	for _, p := range named {
		if _, known := e.file(p); !known || !e.look(p) {
			again = true
		}
	}
	if again {
		e.apply(s.listTree())
	}
	s.lookRegistry(e)
	return t.publish(e).gen, nil
}

// lookRegistry moves gen when the live-session registry's entries changed.
func (s *Store) lookRegistry(e *viewEdit) {
	var names []string
	if ents, err := os.ReadDir(s.lay.registry()); err == nil {
		for _, d := range ents {
			names = append(names, d.Name())
		}
	}
	if k := strings.Join(names, "\x00"); k != e.live {
		e.live = k
		e.changed("")
	}
}

// changedSince is the view, and the transcripts of it that differ from cur
// (new ones, and ones whose size or inode is not the cursor's) in entries'
// order; gone when a transcript cur follows is no longer there. Only what
// the log says changed since cur's view is compared, unless cur is older
// than the log. Without a watcher keeping it current the tree is looked at
// whole first.
func (s *Store) changedSince(cur *cursor) (v treeView, differ []string, gone bool) {
	v = s.tree.current()
	if !v.watched || v.entries == nil {
		v = s.lookWhole(false)
	}
	differs := func(p string) {
		f, ok := v.files.get(p)
		fc, known := cur.files.get(p)
		switch {
		case !ok:
			gone = gone || known
		case !known || fc.ino != f.ino || fc.off != f.size:
			differ = append(differ, p)
		}
	}
	if cur.gen == v.gen && cur.gen != 0 {
		return v, nil, false
	}
	if cur.gen != 0 && cur.gen >= v.logFrom {
		seen := map[string]bool{}
		for i := len(v.log) - 1; i >= 0 && v.log[i].gen > cur.gen; i-- {
			if p := v.log[i].path; p != "" && !seen[p] {
				seen[p] = true
				differs(p)
			}
		}
		slices.SortFunc(differ, func(a, b string) int { return v.index[a] - v.index[b] })
		return v, differ, gone
	}
	cur.files.each(func(p string, _ fileCursor) {
		if _, ok := v.index[p]; !ok {
			gone = true
		}
	})
	for _, x := range v.entries {
		differs(x.path)
	}
	return v, differ, gone
}
