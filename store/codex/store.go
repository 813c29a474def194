package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Format is the name this adapter registers under.
const Format = "codex"

// ReadOnlyReason is why no decision is taken through this source.
const ReadOnlyReason = "decisions on Codex sessions go through vigil gate"

var (
	_ store.Core            = (*Store)(nil)
	_ store.ProblemReporter = (*Store)(nil)
	_ store.ActivityReader  = (*Store)(nil)
)

func init() {
	store.Register(store.Format{
		Name:   Format,
		Detect: Detect,
		Open:   func(path string, _ store.Options) (store.Core, error) { return Open(path) },
		Home:   DefaultPaths,
	})
}

// DefaultPaths is where Codex keeps its rollouts on this machine:
// $CODEX_HOME/sessions, else ~/.codex/sessions.
func DefaultPaths(getenv func(string) string) []string {
	if h := getenv("CODEX_HOME"); h != "" {
		return []string{filepath.Join(h, "sessions")}
	}
	if h := getenv("HOME"); h != "" {
		return []string{filepath.Join(h, ".codex", "sessions")}
	}
	return nil
}

// Store is a Codex sessions tree, a CODEX_HOME, or one rollout, read-only.
type Store struct {
	path string // as opened
	root string // the directory walked for rollouts
	one  string // a single rollout file, when that is what was opened

	list listing // the tree's directories as last read
	seen seenLog // what the watcher saw change

	mu        sync.Mutex
	byID      map[string]string // run id: its rollout
	problems  map[string]error  // "file:line": the line it could not read
	lastPage  *newestPage       // HeadNewest's, until RecentRuns takes it
	lastWhole *wholeFold        // the rollout read whole last (readWhole)
}

// Open opens path: a rollout file, a directory holding rollouts at any
// depth up to the sessions tree's (sessions/YYYY/MM/DD), or CODEX_HOME.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, store.Errorf(path, store.ErrNotFound, err, "%v", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, store.Errorf(abs, store.ErrNotFound, err, "")
		}
		return nil, store.Errorf(abs, store.ErrIO, err, "%v", err)
	}
	s := &Store{path: abs, root: abs, byID: map[string]string{}, problems: map[string]error{}}
	if !fi.IsDir() {
		if !isRollout(abs) {
			return nil, store.Errorf(abs, store.ErrNotAStore, nil, "not a Codex rollout (its first line is no session_meta)")
		}
		s.one, s.root = abs, filepath.Dir(abs)
		return s, nil
	}
	if sub := filepath.Join(abs, "sessions"); isDir(sub) {
		s.root = sub
	}
	if !isDir(filepath.Join(abs, "sessions")) && filepath.Base(abs) != "sessions" && !hasRollout(abs) {
		return nil, store.Errorf(abs, store.ErrNotAStore, nil, "no Codex rollouts (rollout-*.jsonl) under it")
	}
	return s, nil
}

// Detect reports a rollout file, a sessions directory (or a directory
// holding one) with a rollout in its tree, or a directory with rollouts
// in it. Any other directory's subdirectories are not walked: Detect is
// asked of every path vigil opens.
func Detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return isRollout(path)
	}
	root := path
	if sub := filepath.Join(path, "sessions"); isDir(sub) {
		root = sub
	}
	found := false
	if filepath.Base(root) == "sessions" {
		walk(root, func(p string) bool { found = isRollout(p); return !found })
		return found
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() && isRollout(filepath.Join(root, e.Name())) {
			return true
		}
	}
	return false
}

// isRollout reports a *rollout-*.jsonl file whose first line is a
// session_meta record.
func isRollout(p string) bool {
	b := filepath.Base(p)
	if !strings.Contains(b, "rollout-") || !strings.HasSuffix(b, ".jsonl") {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	var l struct {
		Type string `json:"type"`
	}
	// The record's type comes before its (long) payload: decode a cut
	// object holding only the keys before it.
	h := head[:n]
	if i := bytes.Index(h, []byte(`"payload"`)); i > 0 {
		h = append(bytes.TrimRight(bytes.TrimSpace(h[:i]), ","), '}')
	}
	return json.Unmarshal(h, &l) == nil && l.Type == "session_meta"
}

// walkDepth is how many directories deep rollouts are looked for
// (CODEX_HOME/sessions/YYYY/MM/DD).
const walkDepth = 4

// walk calls fn with each rollout-named file under root, at most walkDepth
// directories deep, until fn says stop.
func walk(root string, fn func(string) bool) {
	depth0 := strings.Count(root, string(filepath.Separator))
	stop := errors.New("stop")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.Count(p, string(filepath.Separator))-depth0 > walkDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.Contains(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			if !fn(p) {
				return stop
			}
		}
		return nil
	})
}

// hasRollout reports a rollout-named file under root.
func hasRollout(root string) bool {
	found := false
	walk(root, func(string) bool { found = true; return false })
	return found
}

// files lists the store's rollouts, oldest name first (names carry the
// start time). The slice is shared: callers must not change it.
func (s *Store) files() []string {
	if s.one != "" {
		return []string{s.one}
	}
	return s.list.rollouts(s.root)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// readWhole folds a rollout from its start, up to its last whole line.
// The fold of the rollout read last is kept: read again (a live session's
// steps, its activity, the step on screen, after each line appended), only
// what was appended since is folded, onto a copy of it.
func (s *Store) readWhole(path string) (*session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, store.Errorf(path, store.ErrIO, err, "%v", err)
	}
	s.mu.Lock()
	last := s.lastWhole
	s.mu.Unlock()
	ses, off := newSession(), int64(0)
	if last != nil && last.path == path && last.ino == store.Inode(fi) && last.off <= fi.Size() {
		if last.off == fi.Size() {
			return last.ses.clone(), nil
		}
		if _, err := f.Seek(last.off, io.SeekStart); err != nil {
			return nil, store.Errorf(path, store.ErrIO, err, "%v", err)
		}
		ses, off = last.ses.clone(), last.off
	}
	off, err = s.foldFrom(f, path, ses, off, -1, nil)
	if err != nil {
		return ses, err
	}
	if fi.Size() <= keptWholeLimit {
		s.mu.Lock()
		s.lastWhole = &wholeFold{path: path, ino: store.Inode(fi), off: off, ses: ses.clone()}
		s.mu.Unlock()
	}
	return ses, nil
}

// keptWholeLimit bounds the rollout whose fold is kept: a session of
// hundreds of megabytes is read whole rarely, and its fold is big.
const keptWholeLimit = 16 << 20

// wholeFold is a rollout's fold up to off, in the file with inode ino.
type wholeFold struct {
	path string
	ino  uint64
	off  int64
	ses  *session
}

// foldFrom folds the whole lines of r (at offset off in path) into ses, at
// most limit bytes (-1: to the end), and returns the offset after the last
// whole line: a last line without its newline is still being written.
// done, when set, ends it sooner: before any line once the session holds
// what the reader needs.
func (s *Store) foldFrom(r io.Reader, path string, ses *session, off, limit int64, done func(*session) bool) (int64, error) {
	if limit >= 0 {
		r = io.LimitReader(r, limit)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		if done != nil && done(ses) {
			return off, nil
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil {
			if err == io.EOF {
				return off, nil
			}
			return off, store.Errorf(path, store.ErrIO, err, "%v", err)
		}
		off += int64(len(b))
		if ferr := ses.fold(b[:len(b)-1]); ferr != nil {
			s.problem(path, ses.lines, ferr)
		}
	}
}

// problem notes a line that could not be read, once.
func (s *Store) problem(path string, line int64, err error) {
	key := fmt.Sprintf("%s:%d", path, line)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.problems[key]; !ok {
		s.problems[key] = store.Errorf(path, store.ErrCorrupt, err, "line %d is not a rollout record (%v); the rest of the session is shown", line, shortErr(err))
	}
}

func shortErr(err error) string {
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120] + "…"
	}
	return msg
}

// Problems lists the lines this source could not read, in file order.
func (s *Store) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.problems))
	for k := range s.problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]error, len(keys))
	for i, k := range keys {
		out[i] = s.problems[k]
	}
	return out
}

// fileOf is the rollout of a run, looked for again when it is not known.
func (s *Store) fileOf(ctx context.Context, id string) (string, error) {
	s.mu.Lock()
	p, ok := s.byID[id]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	if _, err := s.Runs(ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	p, ok = s.byID[id]
	s.mu.Unlock()
	if !ok {
		return "", store.Errorf(s.path, store.ErrNoSuchRun, nil, "%s", store.Because(store.ErrNoSuchRun, id))
	}
	return p, nil
}

func (s *Store) Path() string                                                       { return s.path }
func (s *Store) Format() string                                                     { return Format }
func (s *Store) ReadOnly() (bool, string)                                           { return true, ReadOnlyReason }
func (s *Store) RecordsLeases() bool                                                { return false }
func (s *Store) Close() error                                                       { return nil }
func (s *Store) Watch() store.WatchSpec                                             { return s.watch() }
func (s *Store) Requests(context.Context, bool, ...string) ([]store.Request, error) { return nil, nil }

// Classify: Codex records no request vigil could answer in the rollout.
func (s *Store) Classify(store.Request, store.Run, *store.Lease, time.Time) (store.Delivery, string) {
	return store.Orphaned, ReadOnlyReason
}

// Decide refuses: this source never writes.
func (s *Store) Decide(context.Context, store.Decision) (store.DecideResult, error) {
	return store.DecideResult{}, store.Errorf(s.path, store.ErrReadOnly, nil, "%s", ReadOnlyReason)
}
