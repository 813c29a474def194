package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Mode says how changes are detected.
type Mode int

const (
	// Push: file-system notifications (fsnotify), plus a slow safety tick.
	Push Mode = iota
	// Poll: Version is called at a fixed interval.
	Poll
)

func (m Mode) String() string {
	switch m {
	case Push:
		return "push"
	case Poll:
		return "polling"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Kind is the kind of a Signal.
type Kind int

const (
	// Changed: the source may have changed; refresh, then call Ack.
	Changed Kind = iota
	// Gone: the watched file (or its directory) no longer exists. Close what
	// you hold open on it. Not acknowledged.
	Gone
	// Replaced: a different file is now at the path (renamed over, deleted and
	// recreated, or back after Gone). Reopen and re-read from scratch; a
	// Changed follows. Not acknowledged.
	Replaced
	// ModeChanged: detection switched to polling; Reason says why. Not
	// acknowledged.
	ModeChanged
)

func (k Kind) String() string {
	switch k {
	case Changed:
		return "changed"
	case Gone:
		return "gone"
	case Replaced:
		return "replaced"
	case ModeChanged:
		return "mode-changed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Signal is one notification to the consumer.
type Signal struct {
	Kind Kind
	Mode Mode // the detection mode when the signal was made
	// Reason is one line for Gone, Replaced and ModeChanged, e.g.
	// "inotify watch limit reached: polling every 250ms".
	Reason string
	// At is when the first event behind this signal was seen.
	At time.Time
	// Events is the number of kept file-system events folded into a Changed
	// signal; 0 when it came from a re-check, the safety tick or polling.
	Events int
}

func (s Signal) String() string {
	if s.Reason != "" {
		return fmt.Sprintf("%v(%v): %s", s.Kind, s.Mode, s.Reason)
	}
	return fmt.Sprintf("%v(%v, %d events)", s.Kind, s.Mode, s.Events)
}

// Options configures a Watcher. Only Path is required.
type Options struct {
	// Path is a file or a directory. A file's directory gets the watch (the
	// file may not exist yet; its directory must). A directory (journal
	// formats) is watched together with its immediate subdirectories, and new
	// subdirectories are added as they appear.
	Path string
	// Depth is how many levels of subdirectories a directory Path is
	// watched to (0 or 1: its immediate subdirectories): a journal that
	// nests its files by date (YYYY/MM/DD) needs 3. New subdirectories
	// are added as they appear, to that depth.
	Depth int
	// Names are the base names whose events count. For a file Path the
	// default is {base, base+"-wal", base+"-journal"}. For a directory Path
	// the default is every file; when set, it filters files in the directory
	// and its subdirectories (subdirectories appearing or vanishing always
	// count).
	Names []string
	// Poll > 0: never use notifications; poll Version at this interval.
	Poll time.Duration
	// Coalesce is the minimum time between two Changed signals while events
	// keep coming (default 5ms; negative: none). During it the fsnotify
	// channel is not read, so the kernel merges events.
	Coalesce time.Duration
	// SafetyPoll is the interval of the safety tick in push mode, which calls
	// Version, checks the file's identity and re-adds a lost watch
	// (default 1s).
	SafetyPoll time.Duration
	// FallbackPoll is the polling interval used when notifications turn out to
	// be unusable (default 250ms).
	FallbackPoll time.Duration
	// RecheckMin and RecheckMax bound the re-check back-off after an Ack
	// (defaults 2ms and 256ms).
	RecheckMin, RecheckMax time.Duration
	// Version is a cheap change probe: any difference between two calls (or
	// between an error and a value) counts as a change. The SQLite layer
	// passes PRAGMA data_version on its pinned read connection (store's
	// DataVersion). It is used by the safety tick, by polling, and by the
	// re-checks after each Ack, which call it instead of asking the consumer
	// to refresh; so it must not change before new data is readable (it may
	// change without new data: that costs one empty refresh). For a file
	// Path it also gates write events: a write whose Version is the one
	// before the last refresh is held back and re-checked (a commit writes
	// its frames before it shows, a checkpoint shows nothing new), so there
	// it must move with every commit a reader can see, as data_version does.
	//
	// It is called from the watcher's goroutine, concurrently with the
	// consumer, so it must be safe for that, and it should be quick: Close
	// waits for a call in progress.
	//
	// nil: a stat-based probe (size, mtime, inode of the watched names; for a
	// directory, of the files in it and its subdirectories); re-checks are
	// then Changed signals.
	Version func() (uint64, error)
	// Touched, when set with Version, is Version told what changed: the
	// paths the notifications named since its last call (files, and
	// directories that appeared), in the same value space as Version. A
	// store of thousands of files then looks at those alone after each
	// event instead of at every file. Where events may have been missed
	// (an overflow, a lost or re-added watch, polling) and on the safety
	// tick, Version is called instead. Named nothing, it must return its
	// last value unless it saw a change itself. The safety tick's Version
	// then runs on a goroutine of its own, concurrently with Touched, so
	// that events are read and delivered while it looks at every file.
	Touched func(named []string) (uint64, error)
	// DisableNotify forces polling (at FallbackPoll) as if notifications
	// could not be used.
	DisableNotify bool
}

// Stats are counters for tests and benchmarks.
type Stats struct {
	EventsRead uint64 // fsnotify events received, before filtering
	EventsKept uint64 // events that passed the filter
	Changed    uint64 // Changed signals received by the consumer
	Rechecks   uint64 // re-checks that fired
	Probes     uint64 // Version calls
	ProbeHits  uint64 // Version calls that saw a change
	Overflows  uint64 // fsnotify.ErrEventOverflow seen
	Held       uint64 // write events held back: Version showed nothing new
	Listings   uint64 // directory mode: listings of the directory for subdirectories to watch
}

// Watcher watches one source. Create it with New; stop it with Close.
type Watcher struct {
	opts    Options
	dirMode bool
	dir     string // the watched directory (a file's parent, or Path itself)
	file    string // file mode: the absolute path of the file
	base    string // file mode: its base name
	names   map[string]bool

	out    chan Signal
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{}
	once   sync.Once

	wholeWait sync.WaitGroup

	ackMu    sync.Mutex
	acks     int
	ackFound bool

	mode atomic.Int32

	nEventsRead, nEventsKept, nChanged, nRechecks, nProbes, nProbeHits, nOverflows, nHeld, nListings atomic.Uint64

	hooks    hooks
	closeErr error

	// Everything below is owned by the run goroutine (and by New before it
	// starts).
	fw       *fsnotify.Watcher
	lost     bool          // push mode: the directory watch is gone
	interval time.Duration // current tick interval
	tickerC  <-chan time.Time
	ticker   *time.Ticker

	present bool        // the file (dir mode: the directory) exists
	ident   os.FileInfo // and this is it
	version probeValue

	queue       []Signal
	outstanding bool // a Changed is queued or delivered and not acknowledged
	delivered   bool // the outstanding Changed has been received
	lastDeliv   time.Time
	lastFound   bool // the last Ack said its refresh found something: a burst may be on
	dirty       bool
	dirtyAt     time.Time
	dirtyEvents int
	dirtyCause  cause
	outCause    cause         // cause of the outstanding Changed
	outDelay    time.Duration // its re-check delay when outCause == causeRecheck
	recheckOn   bool
	recheckAt   time.Time
	recheckDly  time.Duration
	gate        probeValue // Version just before the last Changed (gated re-checks)
	gateSet     bool       // a Changed has been sent since the start: gate holds a value
	dirtyMust   bool       // what is pending is more than writes Version vouches for
	heldAt      time.Time  // the last write events held back (held): none read for Coalesce
	// whole carries the safety tick's Version back to the loop when the
	// store takes Touched (wholeBusy: one is running, on its own goroutine).
	whole     chan probeValue
	wholeBusy bool
	// named is what the events kept since the last probe named (Touched);
	// namedLost: events may have been missed, so the next probe is whole.
	named     map[string]struct{}
	namedLost bool
	// listedMtime is the directory's mtime at the last whole rescan, and
	// listedAt when that rescan began (rescan).
	listedMtime, listedAt time.Time
	// listedSub is the same for each subdirectory listed by a rescan
	// (Depth > 1).
	listedSub map[string][2]time.Time
}

type cause int

const (
	causeRecheck cause = iota // lowest precedence
	causeProbe
	causeEvent
)

type probeValue struct {
	v   uint64
	err bool
}

// hooks lets tests replace the notification backend.
type hooks struct {
	newNotifier func() (*fsnotify.Watcher, error)
	add         func(fw *fsnotify.Watcher, path string) error
}

func defaultHooks() hooks {
	return hooks{
		newNotifier: fsnotify.NewWatcher,
		add:         func(fw *fsnotify.Watcher, p string) error { return fw.Add(p) },
	}
}

// New starts watching. It fails only when Path is empty or neither it nor
// (for a file) its directory exists. It never fails because notifications
// are unavailable: it polls instead and says so with a ModeChanged signal.
//
// Do the initial load after New returns: a change made between the two then
// reaches the consumer as a signal, whereas one made between an initial load
// and New would wait for the next change or the safety tick.
//
// The consumer loop:
//
//	for s := range w.C() {
//		switch s.Kind {
//		case watch.Changed:
//			n, err := refresh() // short reads only; never hold a snapshot
//			w.Ack(err == nil && n > 0)
//		case watch.Gone:     // close handles on the data
//		case watch.Replaced: // reopen, reset cursors; a Changed follows
//		case watch.ModeChanged: // show s.Reason
//		}
//	}
func New(opts Options) (*Watcher, error) {
	return newWatcher(opts, defaultHooks())
}

func newWatcher(opts Options, h hooks) (*Watcher, error) {
	if opts.Path == "" {
		return nil, errors.New("watch: empty path")
	}
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	// SQLite puts -wal and -journal next to the file a symlink points to, so
	// watch that directory.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if opts.Coalesce == 0 {
		opts.Coalesce = 5 * time.Millisecond
	} else if opts.Coalesce < 0 {
		opts.Coalesce = 0
	}
	if opts.SafetyPoll <= 0 {
		opts.SafetyPoll = time.Second
	}
	if opts.FallbackPoll <= 0 {
		opts.FallbackPoll = 250 * time.Millisecond
	}
	if opts.Depth < 1 {
		opts.Depth = 1
	}
	if opts.RecheckMin <= 0 {
		opts.RecheckMin = 2 * time.Millisecond
	}
	if opts.RecheckMax < opts.RecheckMin {
		opts.RecheckMax = 256 * time.Millisecond
		if opts.RecheckMax < opts.RecheckMin {
			opts.RecheckMax = opts.RecheckMin
		}
	}

	w := &Watcher{
		opts:   opts,
		out:    make(chan Signal),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		whole:  make(chan probeValue),
		hooks:  h,
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		w.dirMode = true
		w.dir = abs
	case err == nil || errors.Is(err, fs.ErrNotExist):
		w.dir = filepath.Dir(abs)
		w.file = abs
		w.base = filepath.Base(abs)
		di, derr := os.Stat(w.dir)
		if derr != nil {
			return nil, fmt.Errorf("watch: %w", derr)
		}
		if !di.IsDir() {
			return nil, fmt.Errorf("watch: %s is not a directory", w.dir)
		}
	default:
		return nil, fmt.Errorf("watch: %w", err)
	}
	names := opts.Names
	if len(names) == 0 && !w.dirMode {
		names = []string{w.base, w.base + "-wal", w.base + "-journal"}
	}
	if len(names) > 0 {
		w.names = make(map[string]bool, len(names))
		for _, n := range names {
			w.names[n] = true
		}
	}
	w.opts.Names = names

	// Identity and version baselines, so the first tick compares against the
	// state at start.
	st, fi := w.statIdentity()
	w.present, w.ident = st != identAbsent, fi
	if opts.Touched == nil {
		// A store that takes Touched has thousands of files, and Version
		// looks at each: not before its first frame. The first safety
		// tick compares against none and costs one refresh.
		w.version = w.probe()
	}

	now := time.Now()
	switch {
	case opts.Poll > 0:
		w.startPolling(now, opts.Poll, fmt.Sprintf("polling every %v (requested)", opts.Poll))
	case opts.DisableNotify:
		w.startPolling(now, opts.FallbackPoll, fmt.Sprintf("file notifications disabled: polling every %v", opts.FallbackPoll))
	default:
		if err := w.startNotify(); err != nil {
			w.startPolling(now, opts.FallbackPoll, fmt.Sprintf("%s: polling every %v", describe(err), opts.FallbackPoll))
		} else {
			w.mode.Store(int32(Push))
			w.interval = opts.SafetyPoll
			w.ticker = time.NewTicker(w.interval)
			w.tickerC = w.ticker.C
		}
	}
	if !w.present && !w.dirMode {
		w.enqueue(Signal{Kind: Gone, Reason: w.base + " does not exist (yet)", At: now})
	}
	go w.run()
	return w, nil
}

// C returns the signal channel. It is closed after Close.
func (w *Watcher) C() <-chan Signal { return w.out }

// Ack tells the watcher that the consumer has handled the last Changed signal
// and whether its refresh found anything new. It never blocks.
func (w *Watcher) Ack(foundNew bool) {
	w.ackMu.Lock()
	w.acks++
	w.ackFound = w.ackFound || foundNew
	w.ackMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Mode returns the current detection mode.
func (w *Watcher) Mode() Mode { return Mode(w.mode.Load()) }

// Stats returns a snapshot of the counters.
func (w *Watcher) Stats() Stats {
	return Stats{
		EventsRead: w.nEventsRead.Load(),
		EventsKept: w.nEventsKept.Load(),
		Changed:    w.nChanged.Load(),
		Rechecks:   w.nRechecks.Load(),
		Probes:     w.nProbes.Load(),
		ProbeHits:  w.nProbeHits.Load(),
		Overflows:  w.nOverflows.Load(),
		Held:       w.nHeld.Load(),
		Listings:   w.nListings.Load(),
	}
}

// Close stops the watcher and waits until its goroutines have exited and the
// notification backend is closed. C is closed. Close may be called more than
// once.
func (w *Watcher) Close() error {
	w.once.Do(func() { close(w.done) })
	<-w.exited
	w.wholeWait.Wait() // a Version in progress
	return w.closeErr
}

// startNotify creates the fsnotify watcher and adds the watches.
func (w *Watcher) startNotify() error {
	fw, err := w.hooks.newNotifier()
	if err != nil {
		return err
	}
	if err := w.hooks.add(fw, w.dir); err != nil {
		fw.Close()
		return err
	}
	w.fw = fw
	if w.dirMode {
		if err := w.addSubdirs(); err != nil {
			w.fw = nil
			fw.Close()
			return err
		}
	}
	return nil
}

// startPolling switches to polling (used at start and as the fallback).
func (w *Watcher) startPolling(now time.Time, every time.Duration, reason string) {
	if w.fw != nil {
		w.fw.Close()
		w.fw = nil
	}
	w.lost = false
	w.mode.Store(int32(Poll))
	w.interval = every
	if w.ticker == nil {
		w.ticker = time.NewTicker(every)
		w.tickerC = w.ticker.C
	} else {
		w.ticker.Reset(every)
	}
	w.enqueue(Signal{Kind: ModeChanged, Reason: reason, At: now})
}
