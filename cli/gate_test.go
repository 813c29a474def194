package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

// hookProc is `vigil gate` run as a hook would run it, on a fixture request.
type hookProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	file           string
}

func startHook(t *testing.T, fixture string, args ...string) *hookProc {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "agents", "claude-code", "hooks", fixture))
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	state := t.TempDir()
	h := &hookProc{file: filepath.Join(state, "vigil", gate.FileName)}
	h.cmd = exec.Command(vigilBinary(t), append([]string{"gate"}, args...)...)
	h.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + state}
	h.cmd.Stdin = bytes.NewReader(body)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cmd.Process.Kill(); h.cmd.Wait() })
	return h
}

// waitRow waits for the hook's request to be recorded.
func (h *hookProc) waitRow(t *testing.T) {
	t.Helper()
	waitFor(t, 20*time.Second, "the hook's request", func() bool {
		if _, err := os.Stat(h.file); err != nil {
			return false
		}
		src, err := store.Open(h.file, store.Options{ReadOnly: true})
		if err != nil {
			return false
		}
		defer src.Close()
		qs, _ := src.Requests(context.Background(), true)
		return len(qs) == 1
	})
}

func (h *hookProc) row(t *testing.T) gate.Row {
	t.Helper()
	g, err := gate.OpenHook(h.file)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r, err := g.Get(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A PermissionRequest approved in vigil is answered allow in Claude Code's
// format.
func TestGatePermissionRequestApproved(t *testing.T) {
	h := startHook(t, "noid-1796409108453494777.PermissionRequest.request.json", "--timeout", "1m")
	h.waitRow(t)
	src, err := store.Open(h.file, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if res, err := src.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "1"}, Verdict: store.VerdictApprove}); err != nil || !res.Won {
		t.Fatal(res, err)
	}
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	got := strings.TrimSpace(h.stdout.String())
	if !strings.HasPrefix(got, `{"hookSpecificOutput":{"decision":{"behavior":"allow","message":"approved in vigil by vigil`) ||
		!strings.HasSuffix(got, `"hookEventName":"PermissionRequest"}}`) {
		t.Errorf("answer %s", got)
	}
	if r := h.row(t); r.Event != "PermissionRequest" || r.Tool != "Bash" || !strings.Contains(r.Input, "touch permreq.txt") {
		t.Errorf("row %+v", r)
	}
}

// A PermissionRequest with no decision in time gets no decision: Claude
// Code asks in its own prompt.
func TestGatePermissionRequestTimeout(t *testing.T) {
	h := startHook(t, "noid-1796409108453494777.PermissionRequest.request.json", "--timeout", "500ms")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, h.stderr.String())
	}
	if h.stdout.Len() != 0 {
		t.Errorf("answer %q, want none", h.stdout.String())
	}
	if r := h.row(t); r.State != gate.StateExpired || r.Reason != "no decision within 500ms" {
		t.Errorf("row %+v", r)
	}
}

// The hook stopped by a signal withdraws its request and denies.
func TestGateSignalWithdraws(t *testing.T) {
	h := startHook(t, "toolu_d9753ed1e7da4805b885.PreToolUse.request.json", "--timeout", "1m")
	h.waitRow(t)
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.cmd.Wait()
	if r := h.row(t); r.State != gate.StateWithdrawn || r.AgentID != "adacfd069ace754ac" {
		t.Errorf("row %+v", r)
	}
	if got := h.stdout.String(); !strings.Contains(got, `"permissionDecision":"deny"`) {
		t.Errorf("answer %q", got)
	}
}

// Input that is not a hook request: exit 2 (Claude Code blocks the call)
// with one line on stderr, and nothing recorded.
func TestGateBadInput(t *testing.T) {
	cmd := exec.Command(vigilBinary(t), "gate")
	state := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + state}
	cmd.Stdin = strings.NewReader("not json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit %v", err)
	}
	if s := stderr.String(); stdout.Len() != 0 || strings.Count(s, "\n") != 1 || !strings.Contains(s, "not Claude Code's JSON") {
		t.Errorf("stdout %q stderr %q", stdout.String(), s)
	}
	if _, err := os.Stat(filepath.Join(state, "vigil", gate.FileName)); err == nil {
		t.Error("a gate store was created for bad input")
	}
}

// At a terminal, with no hook input, vigil gate says how to install it.
func TestGateAtATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	cmd := exec.Command(vigilBinary(t), "gate")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stdin = tty
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitUsage {
		t.Fatalf("exit %v", err)
	}
	if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "install it with: vigil gate install claude") {
		t.Errorf("stderr %q", s)
	}
}
