package leviath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Format names the Leviath run-directory format.
const Format = "leviath"

// LeaseTTL is how long after a run's last journaled update (meta.updated_at,
// or HEAD's last_progress_at when later) its synthesized lease counts as
// renewed. Leviath's persistence lane writes a record every time an agent
// meaningfully changes (each model reply, each tool batch), so a driven run
// rarely goes quiet this long; io-harness renews its leases every step with
// a 30-minute TTL. Past it the run reads as stale ("the driver may be
// hung"), never as crashed: only a pid that is checkably gone says that.
const LeaseTTL = 15 * time.Minute

// Store is a Leviath runs directory (or one run directory and the sub-agent
// runs beside it) read as a store.Source. It never writes: every file is
// opened read-only, nothing is created, and decisions are refused.
type Store struct {
	path   string // what was opened (absolute)
	root   string // the runs directory
	single string // the run opened on its own, "" for a whole runs directory

	mu        sync.Mutex
	runs      map[string]*runState
	order     []*runState
	childOf   map[string]string // child run → parent, from meta.children
	parents   map[string]string // single mode: sibling run → its parent_run_id
	machineID string            // this machine's Leviath machine id, "" when unknown
	ledger
	prefixOf    map[string]int64 // run → the high bits of its ids (idPrefix)
	prefixTaken map[int64]bool
	deferred    []*runState // runs whose journal Open left to the background fold
	startFold   func()      // starts that fold (once): on the first read that waits for it, or after foldDelay
	resetAt     int64       // cursors older than this must reload
	closed      bool
	frames      frameMemo // the frame a step detail was last read from (detail_memo.go)

	journalBytes atomic.Int64 // bytes read from run.lvr files (tests assert on it)
	// ended are the run directories whose run is in a terminal status
	// (publishEnded), for version.
	ended   atomic.Pointer[map[string]bool]
	listing atomic.Pointer[dirListing] // the runs directory as version last listed it
	plan    atomic.Pointer[probePlan]  // what version stats of that listing (planFor)
	// namesPlanned counts the run directories planFor went through (tests).
	namesPlanned atomic.Int64
}

var (
	_ store.Core            = (*Store)(nil)
	_ store.ProblemReporter = (*Store)(nil)
)

func init() {
	store.Register(store.Format{
		Name:    Format,
		Detect:  Detect,
		Open:    func(path string, opts store.Options) (store.Core, error) { return Open(path, opts) },
		Explain: Explain,
	})
}

// Open opens a Leviath runs directory (a directory of run directories,
// each with meta.json and run.lvr), or a single run directory (or its
// run.lvr): then the source holds that run and the sub-agent runs below it
// found beside it. Options are accepted for symmetry; a Leviath source is
// read-only whatever they say.
//
// A runs directory with some unreadable runs still opens: each bad run is
// listed (from meta.json when that is readable, else as a run with outcome
// "unreadable"), its Steps return the typed error, and Problems lists them
// all. A single run whose journal is refused does not open.
func Open(path string, opts ...store.Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, newErr(path, store.ErrNotFound, err.Error(), err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, statErr(abs, err)
	}
	s := &Store{path: abs, runs: map[string]*runState{}, childOf: map[string]string{}, parents: map[string]string{},
		prefixOf: map[string]int64{}, prefixTaken: map[int64]bool{}}
	switch {
	case !fi.IsDir() && filepath.Base(abs) == "run.lvr":
		s.root, s.single = filepath.Dir(filepath.Dir(abs)), filepath.Base(filepath.Dir(abs))
	case !fi.IsDir():
		return nil, newErr(abs, store.ErrNotAStore, "a file, not a Leviath runs directory (a directory of run directories, each with meta.json and run.lvr)", nil)
	case isRunDir(abs):
		s.root, s.single = filepath.Dir(abs), filepath.Base(abs)
	default:
		ents, err := os.ReadDir(abs)
		if err != nil {
			return nil, statErr(abs, err)
		}
		n := 0
		for _, e := range ents {
			if isDirEntry(abs, e) && isRunDir(filepath.Join(abs, e.Name())) {
				n++
			}
		}
		if n == 0 {
			msg := "not a Leviath runs directory: no run directories (each with meta.json and run.lvr) in it"
			if inner := filepath.Join(abs, "runs"); Detect(inner) {
				msg += " (did you mean " + inner + "?)"
			}
			return nil, newErr(abs, store.ErrNotAStore, msg, nil)
		}
		s.root = abs
	}
	s.machineID = readMachineID(s.root)
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	if s.single != "" {
		rs := s.runs[s.single]
		switch {
		case rs == nil:
			return nil, newErr(abs, store.ErrNotAStore, "not a Leviath run directory", nil)
		case rs.jerr != nil:
			return nil, rs.jerr
		case !rs.hasJMeta && !rs.hasFMeta && rs.fmetaErr != nil:
			return nil, rs.fmetaErr
		}
	}
	s.logging = true
	if len(s.deferred) > 0 {
		list, gate := append([]*runState(nil), s.deferred...), foldGate
		s.startFold = sync.OnceFunc(func() { go s.foldDeferred(list, gate) })
		time.AfterFunc(foldDelay, s.startFold)
	}
	return s, nil
}

// Detect reports whether path is a Leviath runs directory, a run directory
// or a run.lvr journal: cheap, read-only, and true only when a run.lvr
// starts with the LVR1 magic or a meta.json decodes as a RunMeta.
func Detect(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return filepath.Base(path) == "run.lvr" && hasMagic(path)
	}
	if looksLikeRun(path) {
		return true
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	checked := 0
	for _, e := range ents {
		if !isDirEntry(path, e) {
			continue
		}
		if looksLikeRun(filepath.Join(path, e.Name())) {
			return true
		}
		if checked++; checked >= 64 {
			break
		}
	}
	return false
}

func looksLikeRun(dir string) bool {
	if hasMagic(filepath.Join(dir, "run.lvr")) || hasSpecial(dir) {
		return true
	}
	b, err := readCapped(filepath.Join(dir, "meta.json"), 1<<20)
	if err != nil {
		return false
	}
	var m struct {
		RunID  *string `json:"run_id"`
		Status *string `json:"status"`
	}
	return json.Unmarshal(b, &m) == nil && m.RunID != nil && m.Status != nil
}

func hasMagic(p string) bool {
	f, err := openFile(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == journalMagic
}

// isRunDir: a directory holding meta.json or run.lvr. Any entry of that
// name counts (Lstat, nothing opened): a FIFO or a device there is a run
// listed as unreadable, not one silently left out.
func isRunDir(dir string) bool {
	for _, name := range []string{"meta.json", "run.lvr"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// hasSpecial: dir's run.lvr or meta.json is a FIFO, device or socket
// (stat only). Only a Leviath run would put one there, so Detect takes it
// and Open lists the run as unreadable, naming the file.
func hasSpecial(dir string) bool {
	for _, name := range []string{"run.lvr", "meta.json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// isDirEntry: a visible directory (or a symlink to one).
func isDirEntry(parent string, e fs.DirEntry) bool {
	if strings.HasPrefix(e.Name(), ".") {
		return false
	}
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink != 0 {
		fi, err := os.Stat(filepath.Join(parent, e.Name()))
		return err == nil && fi.IsDir()
	}
	return false
}

func statErr(p string, err error) error {
	var se *store.Error
	switch {
	case errors.As(err, &se):
		return se // already says what is wrong (a FIFO, a device)
	case errors.Is(err, fs.ErrNotExist):
		return newErr(p, store.ErrNotFound, "no such file or directory", err)
	case errors.Is(err, fs.ErrPermission):
		return newErr(p, store.ErrIO, "permission denied (Leviath's files are 0600: run vigil as the user that runs lev)", err)
	}
	return newErr(p, store.ErrIO, err.Error(), err)
}

// readCapped reads a small file whole, refusing one larger than limit.
func readCapped(p string, limit int64) ([]byte, error) {
	f, err := openFile(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// readMachineID reads <runs>/../machine-id (docs/formats/leviath.md,
// "Finding runs").
func readMachineID(root string) string {
	b, err := readCapped(filepath.Join(filepath.Dir(root), "machine-id"), 256)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// created is the unix seconds in a run id ("<agent>-<secs>-<12 hex>").
func created(id string) int64 {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return 0
	}
	j := strings.LastIndexByte(id[:i], '-')
	n, err := strconv.ParseInt(id[j+1:i], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func sortRunNames(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, b := created(names[i]), created(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
}

// usable is checked under mu by every method.
func (s *Store) usable() error {
	if s.closed {
		return newErr(s.path, store.ErrIO, "the Leviath source is closed", nil)
	}
	return nil
}

// Problems lists, one line each, the runs that could not be read whole:
// refused or damaged journals, unreadable files.
func (s *Store) Problems() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.settle(context.Background()); err != nil {
		return []error{err}
	}
	var out []error
	for _, rs := range s.order {
		switch {
		case rs.jerr != nil:
			out = append(out, rs.jerr)
		case rs.fmetaErr != nil && !rs.hasJMeta:
			out = append(out, rs.fmetaErr)
		case rs.tornAt >= 0 && rs.badNoted:
			out = append(out, newErr(filepath.Join(rs.dir, "run.lvr"), store.ErrCorrupt,
				fmt.Sprintf("damaged frame at byte %d: later records are not shown", rs.tornAt), nil))
		case rs.tornAt >= 0 && rs.tornNotedAt == rs.tornAt:
			out = append(out, newErr(filepath.Join(rs.dir, "run.lvr"), store.ErrCorrupt,
				fmt.Sprintf("torn last frame at byte %d, and the writer is gone: what it held is not shown", rs.tornAt), nil))
		}
	}
	return out
}

// Path is what was opened.
func (s *Store) Path() string { return s.path }

// Root is the runs directory.
func (s *Store) Root() string { return s.root }

// Format names the format.
func (s *Store) Format() string { return Format }

// ReadOnly is always true: Leviath's prompts live in the daemon's memory.
func (s *Store) ReadOnly() (bool, string) { return true, NotDurable }

// RecordsLeases is true: every unfinished run gets a synthesized lease
// from its journaled updated_at (see LeaseTTL and lease).
func (s *Store) RecordsLeases() bool { return true }

// Close drops the source; it holds no file open between calls.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// shortErr is an error's reason with the file's base name, not its path.
func shortErr(err error) string {
	var e *store.Error
	if errors.As(err, &e) && e.Detail != "" {
		if e.Path != "" {
			return filepath.Base(e.Path) + ": " + oneLine(e.Detail)
		}
		return oneLine(e.Detail)
	}
	return oneLine(err.Error())
}
