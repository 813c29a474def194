package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

type exploreOpts struct {
	store    string
	readOnly bool
	poll     time.Duration
	run      string
}

// sources opens a store again for the explorer (after the file was
// replaced) and closes every handle it opened when the explorer is done.
type sources struct {
	path     string
	readOnly bool
	mu       sync.Mutex
	opened   []store.Source
}

func (s *sources) open() (store.Source, error) {
	src, err := openSource(s.path, s.readOnly)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.opened = append(s.opened, src)
	s.mu.Unlock()
	return src, nil
}

func (s *sources) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range s.opened {
		src.Close()
	}
	s.opened = nil
}

func (a *app) runExplorer(ctx context.Context, o exploreOpts) error {
	ss := &sources{path: o.store, readOnly: o.readOnly}
	defer closeWithin(closeWait, ss.close)
	src, err := ss.open()
	if err != nil {
		return err
	}
	if o.run != "" {
		runs, err := src.Runs(ctx)
		if err != nil {
			return err
		}
		found := false
		for _, r := range runs {
			found = found || r.ID == o.run
		}
		if !found {
			return noSuchRun(src, o.run)
		}
	}
	return a.explore(ctx, a, tui.Options{Source: src, Reopen: ss.open, Poll: o.poll, Run: o.run,
		NoColor: a.getenv("NO_COLOR") != ""})
}

// XTWINOPS 22;2 and 23;2: push the window title on the terminal's title
// stack, and pop it back.
const pushTitle, popTitle = "\x1b[22;2t", "\x1b[23;2t"

// teaExplore runs the explorer on the terminal until the user quits it or
// ctx is cancelled.
func teaExplore(ctx context.Context, a *app, opt tui.Options) error {
	m := tui.New(opt)
	defer m.Close()
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if a.stdin != io.Reader(os.Stdin) {
		opts = append(opts, tea.WithInput(a.stdin))
	}
	if a.stdout != io.Writer(os.Stdout) {
		opts = append(opts, tea.WithOutput(a.stdout))
	}
	// Bubble Tea sets the title and blanks it at exit: keep the one the
	// terminal had on its title stack (XTWINOPS 22/23) and put it back.
	if isTerminal(a.stdout) {
		io.WriteString(a.stdout, pushTitle)
		defer io.WriteString(a.stdout, popTitle)
	}
	_, err := tea.NewProgram(m, opts...).Run()
	switch {
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return nil
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return nil
	}
	return err
}

// demoStopTimeout bounds the wait for a cancelled demo to close its store.
const demoStopTimeout = 5 * time.Second

type demoOpts struct {
	store string
	speed float64
	seed  int64
	noTUI bool
	poll  time.Duration
}

func (a *app) runDemo(ctx context.Context, o demoOpts) (err error) {
	path, label := o.store, ""
	if path == "" {
		dir, err := os.MkdirTemp("", "vigil-demo-")
		if err != nil {
			return err
		}
		// Removing the directory removes the store with its -wal and -shm.
		defer os.RemoveAll(dir)
		path, label = filepath.Join(dir, "demo.sqlite3"), "demo (temporary store)"
	} else {
		path = a.expandHome(path)
	}
	if o.noTUI {
		return a.runDemoLog(ctx, path, o)
	}
	// The harness is a process of its own (demo.go); this one is the explorer.
	h, err := startHarness(ctx, path, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if a.demoReady != nil {
		a.demoReady(path)
	}
	ss := &sources{path: path}
	defer closeWithin(closeWait, ss.close)
	src, err := ss.open()
	if err != nil {
		h.stop()
		return err
	}
	opt := tui.Options{Source: src, Reopen: ss.open, Poll: o.poll, StoreLabel: label, NoColor: a.getenv("NO_COLOR") != ""}
	// The first thing on screen is the live run: the newest root running.
	if runs, err := src.Runs(ctx); err == nil {
		for _, r := range runs {
			if r.IsRoot() && r.Status == store.StatusRunning {
				opt.Run = r.ID
				break
			}
		}
	}
	xerr := a.explore(ctx, a, opt)
	ss.close()
	derr := h.stop()
	if xerr != nil {
		return xerr
	}
	return derr
}

// runDemoLog is demo --no-tui: the harness in this process (nothing else
// here reads the store), its log on stdout, until it ends or ctx is
// cancelled.
func (a *app) runDemoLog(ctx context.Context, path string, o demoOpts) error {
	fmt.Fprintf(a.errOut(), "vigil: demo store %s; decide what it waits on with: vigil approve|deny|answer REQ --store %s\n",
		clean(abs(path)), clean(abs(path)))
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- demo.Run(dctx, demo.Options{Path: path, Speed: o.speed, Seed: o.seed, Log: &lineWriter{w: a.stdout},
			Ready: func() {
				if a.demoReady != nil {
					a.demoReady(path)
				}
			}})
	}()
	select {
	case err := <-done:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case <-ctx.Done():
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		case <-time.After(demoStopTimeout):
			return fmt.Errorf("the demo did not stop within %v", demoStopTimeout)
		}
	}
}

// lineWriter writes whole lines, each made safe for a terminal, one write
// per line; it is safe for concurrent use.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := sanitize.Line(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
		if _, err := io.WriteString(l.w, line+"\n"); err != nil {
			return len(p), err
		}
	}
}
