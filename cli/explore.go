package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/otelexport"
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
	a.askPassthrough() // answered while the store opens
	ss := &sources{path: o.store, readOnly: o.readOnly}
	defer closeWithin(closeWait, ss.close)
	src, err := ss.open()
	if err != nil {
		return err
	}
	if o.run != "" {
		found, err := src.HasRun(ctx, o.run)
		if err != nil {
			return err
		}
		if !found {
			return noSuchRun(src, o.run)
		}
	}
	opt := tui.Options{Source: src, Reopen: ss.open, Poll: o.poll, Run: o.run, NoColor: a.getenv("NO_COLOR") != ""}
	if err := a.tuiConfig(&opt); err != nil {
		return err
	}
	return a.explore(ctx, a, opt)
}

// XTWINOPS 22;2 and 23;2: push the window title on the terminal's title
// stack, and pop it back.
const pushTitle, popTitle = "\x1b[22;2t", "\x1b[23;2t"

// explorerFPS is the explorer's frame-rate cap: Bubble Tea's highest.
const explorerFPS = 120

// teaExplore runs the explorer on the terminal until the user quits it or
// ctx is cancelled.
func teaExplore(ctx context.Context, a *app, opt tui.Options) error {
	m := tui.New(opt)
	defer m.Close()
	// Bubble Tea draws a frame only on its renderer's tick: at the default
	// 60 fps a commit folded just after a tick waits 16.7 ms to be seen.
	// Its cap is 120 (8.3 ms); an idle tick costs a comparison of views.
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(explorerFPS)}
	if a.stdout == io.Writer(os.Stdout) {
		// lipgloss worked out the profile of this terminal as the program
		// started (lipgloss.Writer: the same stdout and environment Bubble
		// Tea would read); inside tmux, working it out again starts
		// another tmux process before the first frame.
		opts = append(opts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
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
	case strings.Contains(err.Error(), "error opening TTY"):
		// Standard input is not a terminal and there is no /dev/tty to
		// read keys from (cron, CI, a pipe without a controlling terminal).
		return errors.New("the explorer needs a terminal to read keys from, and this process has none: vigil runs, show, tail and trace work without one")
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
	otel  string // an OTLP/HTTP endpoint to export the demo to, live
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
		path, label = filepath.Join(dir, "demo.sqlite3"), demo.TemporaryLabel
	} else {
		path = a.expandHome(path)
	}
	var otelEP otelexport.Endpoint
	if o.otel != "" {
		otelEP = otelexport.Endpoint{URL: o.otel, Protocol: otelexport.ProtocolHTTP}
		if _, err := otelEP.Resolve(); err != nil {
			return &usageError{fmt.Errorf("--otel: %w", err)}
		}
	}
	if o.noTUI {
		return a.runDemoLog(ctx, path, o, otelEP)
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
	// The explorer owns the terminal: what the export says is shown when
	// it quits.
	held := &heldLines{}
	var endOtel func() error
	health := &exportHealth{}
	if o.otel != "" {
		var err error
		if endOtel, err = a.demoOtel(ctx, path, otelEP, held, false, health.set); err != nil {
			h.stop()
			return err
		}
	}
	finish := func(err error) error {
		if endOtel != nil {
			if oerr := endOtel(); err == nil {
				err = oerr
			}
		}
		held.writeTo(a.errOut())
		return err
	}
	ss := &sources{path: path}
	defer closeWithin(closeWait, ss.close)
	src, err := ss.open()
	if err != nil {
		h.stop()
		return finish(err)
	}
	opt := tui.Options{Source: src, Reopen: ss.open, Poll: o.poll, StoreLabel: label, NoColor: a.getenv("NO_COLOR") != ""}
	if o.otel != "" {
		opt.Trouble = health.problem
	}
	if err := a.tuiConfig(&opt); err != nil {
		h.stop()
		return finish(err)
	}
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
		return finish(xerr)
	}
	return finish(derr)
}

// demoOtel exports the demo store to ep as it is written, content and all
// (the demo's text is made up), and returns what ends the export: it lets
// the last spans out, then stops.
func (a *app) demoOtel(ctx context.Context, path string, ep otelexport.Endpoint, log io.Writer, tell bool, health func(error)) (func() error, error) {
	src, err := openSource(path, true)
	if err != nil {
		return nil, err
	}
	exp, err := otelexport.NewExporter(ctx, ep)
	if err != nil {
		src.Close()
		return nil, err
	}
	resolved, _ := ep.Resolve()
	shown := otelexport.Display(resolved)
	if tell {
		fmt.Fprintf(a.stderr, "vigil: exporting the demo to %s as it runs (service vigil-demo)\n", shown)
	}
	ectx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := otelexport.Run(ectx, otelexport.Options{Source: src, StoreID: defaultStoreID(src), Exporter: exp,
			Endpoint: shown, Service: "vigil-demo", Content: true, Follow: true, Log: log, Now: a.now, Health: health})
		done <- err
	}()
	return func() error {
		// The runs the demo just ended: their spans leave within the
		// summary grace.
		select {
		case err := <-done:
			cancel()
			src.Close()
			return err
		case <-time.After(2500 * time.Millisecond):
		}
		cancel()
		err := <-done
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		exp.Shutdown(sctx)
		src.Close()
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return err
	}, nil
}

// heldLines keeps lines to write later (at most 200: the last ones).
type heldLines struct {
	mu    sync.Mutex
	lines []string
	buf   []byte
}

func (h *heldLines) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf = append(h.buf, p...)
	for {
		i := bytes.IndexByte(h.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		h.lines = append(h.lines, sanitize.Line(string(h.buf[:i])))
		h.buf = h.buf[i+1:]
		if len(h.lines) > 200 {
			h.lines = h.lines[len(h.lines)-200:]
		}
	}
}

func (h *heldLines) writeTo(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		fmt.Fprintln(w, l)
	}
	h.lines = nil
}

// runDemoLog is demo --no-tui: the harness in this process (nothing else
// here reads the store but the export, when asked for), its log on stdout,
// until it ends or ctx is cancelled.
func (a *app) runDemoLog(ctx context.Context, path string, o demoOpts, otelEP otelexport.Endpoint) error {
	fmt.Fprintf(a.errOut(), "vigil: demo store %s; decide what it waits on with: vigil approve|deny|answer REQ --store %s\n",
		clean(abs(path)), clean(abs(path)))
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- demo.Run(dctx, demo.Options{Path: path, Speed: o.speed, Seed: o.seed, Log: &lineWriter{w: a.stdout},
			Ready: func() { close(ready) }})
	}()
	// stop cancels the demo and waits (a while) for it to release the store.
	stop := func() error {
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
	select {
	case <-ready:
	case err := <-done:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case <-ctx.Done():
		return stop()
	}
	if a.demoReady != nil {
		a.demoReady(path)
	}
	var endOtel func() error
	if o.otel != "" {
		var err error
		if endOtel, err = a.demoOtel(ctx, path, otelEP, &lineWriter{w: a.stderr}, true, nil); err != nil {
			stop()
			return err
		}
	}
	var err error
	select {
	case err = <-done:
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	case <-ctx.Done():
		err = stop()
	}
	if endOtel != nil {
		if oerr := endOtel(); err == nil {
			err = oerr
		}
	}
	return err
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
