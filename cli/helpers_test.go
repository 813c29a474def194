package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/fixture"
	twin "github.com/vigil-run/vigil/store/ioharness/harness"
	"github.com/vigil-run/vigil/tui"
)

// result is what one command line did.
type result struct {
	code           int
	stdout, stderr string
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness runs command lines in-process with a fixed clock and time zone,
// an empty home directory and no explorer (tests that need one set it).
type harness struct {
	t       *testing.T
	env     []string
	explore func(ctx context.Context, a *app, opt tui.Options) error
	stdin   string
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, env: []string{"HOME=" + t.TempDir()},
		explore: func(context.Context, *app, tui.Options) error {
			t.Error("the explorer was started")
			return nil
		}}
}

func (h *harness) app(stdout, stderr *syncBuffer) *app {
	a := newApp(strings.NewReader(h.stdin), stdout, stderr, h.env)
	a.now = func() time.Time { return fixture.Now }
	a.loc = time.UTC
	a.explore = h.explore
	return a
}

func (h *harness) run(args ...string) result {
	h.t.Helper()
	return h.runContext(context.Background(), args...)
}

func (h *harness) runContext(ctx context.Context, args ...string) result {
	var out, errb syncBuffer
	code := h.app(&out, &errb).run(ctx, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// fixtureStore builds the fixture store in a temporary directory.
func fixtureStore(t *testing.T) string {
	t.Helper()
	p, err := fixture.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writer(t *testing.T, path string) *twin.Store {
	t.Helper()
	w, err := twin.OpenWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// wantCode fails unless the command exited with code; a failure shows what
// it printed.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// oneLine fails unless stderr is exactly one line containing every want.
func (r result) oneLine(t *testing.T, want ...string) {
	t.Helper()
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(r.stderr, "vigil: ") {
		t.Fatalf("stderr is not one 'vigil: ' line: %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr %q does not say %q", r.stderr, w)
		}
	}
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("output does not contain %q:\n%s", w, got)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
