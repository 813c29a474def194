package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/internal/tailbuf"
)

// The demo's simulated harnessProc runs in a process of its own, as a real
// harnessProc does: vigil runs itself again with the hidden demo-harness
// command, which writes the store, while this process shows it. Two
// processes are two honest SQLite parties — the explorer's reads, its
// decisions and any other program's meet the harness's writes only
// through the file, as they would beside io-harnessProc — where one process
// holding both would share its locks and its -shm mapping between them.
//
// The harnessProc says "ready" on its stdout once the store holds the history
// and the live tree has started, then prints its log lines there. It stops
// when its stdin closes (this process exited, however it died) or on
// SIGTERM, releasing its leases as a harnessProc that is stopped does.

// harnessEnv marks the demo's harnessProc process, so that a test binary
// standing in for vigil runs the command line instead of its tests.
const harnessEnv = "VIGIL_DEMO_HARNESS"

// IsHarness reports whether this process was started as the demo's
// harnessProc (a test binary's TestMain runs Execute when it is).
func IsHarness() bool { return os.Getenv(harnessEnv) != "" }

func (a *app) demoHarnessCmd() *cobra.Command {
	var o demoOpts
	c := &cobra.Command{
		Use:    "demo-harness",
		Short:  "The demo's simulated harness (started by vigil demo)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.store == "" {
				return usagef("demo-harness needs --store")
			}
			return a.runHarness(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.store, "store", "", "the store to create")
	f.Float64Var(&o.speed, "speed", 1, "pace multiplier")
	f.Int64Var(&o.seed, "seed", demo.DefaultSeed, "scenario seed")
	return c
}

// runHarness is the harnessProc process: demo.Run until the scenario ends, its
// stdin closes or it is signalled.
func (a *app) runHarness(ctx context.Context, o demoOpts) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, a.stdin) // EOF: whoever started us is gone
		cancel()
	}()
	out := &lineWriter{w: a.stdout}
	err := demo.Run(ctx, demo.Options{Path: o.store, Speed: o.speed, Seed: o.seed, Log: out,
		Ready: func() { fmt.Fprintln(out, "ready") }})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// harnessProc is a running demo harnessProc process.
type harnessProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	err    error // the process's exit, once exited is closed
	stderr *tailbuf.Buffer

	stopOnce sync.Once
	stopErr  error
}

// self is the program to run as the harness: this executable.
var self = os.Executable

// startHarness starts the harnessProc on path and waits until it is ready. A
// harnessProc that fails before then (the store exists, the directory is not
// writable) is reported with its own one-line message.
func startHarness(ctx context.Context, path string, o demoOpts) (*harnessProc, error) {
	exe, err := self()
	if err != nil {
		return nil, fmt.Errorf("cannot start the demo's harness: %w", err)
	}
	cmd := exec.Command(exe, "demo-harness", "--store", path,
		"--speed", strconv.FormatFloat(o.speed, 'g', -1, 64), "--seed", strconv.FormatInt(o.seed, 10))
	cmd.Env = append(os.Environ(), harnessEnv+"=1")
	h := &harnessProc{cmd: cmd, exited: make(chan struct{}), stderr: &tailbuf.Buffer{Max: 4096}}
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the demo's harness: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if !signalled && sc.Text() == "ready" {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, stdout)
		h.err = cmd.Wait()
		close(h.exited)
	}()
	select {
	case <-ready:
		return h, nil
	case <-h.exited:
		return nil, h.failure()
	case <-ctx.Done():
		h.stop()
		return nil, ctx.Err()
	}
}

// failure words a harnessProc that exited before it was asked to stop.
func (h *harnessProc) failure() error {
	if line := h.stderr.LastLine(); line != "" {
		return errString(strings.TrimPrefix(line, "vigil: "))
	}
	if h.err != nil {
		return fmt.Errorf("the demo's harness stopped: %v", h.err)
	}
	return errors.New("the demo's harness stopped before it was ready")
}

// stop asks the harnessProc to stop (stdin closed, then SIGTERM), waits for it
// to release the store, and kills it if it does not within demoStopTimeout.
func (h *harnessProc) stop() error {
	h.stopOnce.Do(func() {
		select {
		case <-h.exited: // it ended on its own: the scenario is over, or it failed
			if h.err != nil {
				h.stopErr = h.failure()
			}
			return
		default:
		}
		h.stdin.Close()
		h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.exited:
		case <-time.After(demoStopTimeout):
			h.cmd.Process.Kill()
			<-h.exited
			h.stopErr = fmt.Errorf("the demo's harness did not stop within %v", demoStopTimeout)
		}
	})
	return h.stopErr
}
