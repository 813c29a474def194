// Package testkit is what the tests share. Its subpackages are the rigs
// (stores, foreign SQLite parties, Jaeger, big runs); this package is the
// one way a test says it lacks something the machine should provide.
//
// A missing tool, fixture or service skips the test with one line on a
// developer's machine (a fresh clone still passes), and fails it when the
// CI environment variable is set: a green CI run means every test ran.
// Main, called from a package's TestMain, then says in one line what the
// package skipped and why.
package testkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Strict reports whether a missing tool, fixture or service fails the test
// instead of skipping it: CI is set (and not "0" or "false").
func Strict() bool {
	switch os.Getenv("CI") {
	case "", "0", "false":
		return false
	}
	return true
}

// Need stops t for lack of what (a tool, fixture or service); why says what
// the test wanted it for. Outside CI it skips, counted for Main; with CI set
// it fails.
func Need(t testing.TB, what, why string) {
	t.Helper()
	if Strict() {
		t.Fatalf("needs %s: %s (CI is set: a missing tool, fixture or service fails the test)", what, why)
	}
	count("needs "+what, true)
	t.Skipf("needs %s: %s", what, why)
}

// Skip skips t for a limit of the machine that CI is not expected to lift
// (not root, no mount namespace), counted for Main like Need's skips.
func Skip(t testing.TB, why string) {
	t.Helper()
	first, _, _ := strings.Cut(why, "\n")
	count(first, false)
	t.Skip(why)
}

// Tool is the path of the program name, or Need's skip (or failure).
func Tool(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Need(t, name, why)
	}
	return p
}

// IOHarnessFixtures is the directory of io-harness's ground-truth release
// fixtures (Fixtures' io-harness).
func IOHarnessFixtures(t testing.TB) string {
	t.Helper()
	return Fixtures(t, "io-harness")
}

// Fixtures is the directory of real files a format wrote, kept in the
// shared directory: fixtures/<rel> under $VIGIL_SHARED, or under the shared
// directory beside the clone (../shared). Without it, Need.
func Fixtures(t testing.TB, rel string) string {
	t.Helper()
	shared := os.Getenv("VIGIL_SHARED")
	if shared == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		shared = filepath.Join(filepath.Dir(root), "shared")
	}
	dir := filepath.Join(shared, "fixtures", filepath.FromSlash(rel))
	if _, err := os.Stat(dir); err != nil {
		Need(t, rel+" fixtures", fmt.Sprintf("not found at %s (set $VIGIL_SHARED to the directory that holds fixtures/%s)", dir, rel))
	}
	return dir
}

// Main runs the package's tests (from its TestMain) and then says in one
// line what Need and Skip skipped. A passing package's output is dropped by
// go test ./..., so the line goes to the terminal when there is one
// (otherwise to stderr: seen with -v, -json or a failure).
func Main(m *testing.M) int {
	code := m.Run()
	if line := summary(); line != "" {
		report(line)
	}
	return code
}

var skipped struct {
	sync.Mutex
	by    map[string]int
	needs bool // some were Need's, which CI would fail
}

func count(reason string, need bool) {
	skipped.Lock()
	defer skipped.Unlock()
	if skipped.by == nil {
		skipped.by = map[string]int{}
	}
	skipped.by[reason]++
	skipped.needs = skipped.needs || need
}

// summary is "PKG: N tests skipped: REASON (n), …", or "" when none was.
func summary() string {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.by) == 0 {
		return ""
	}
	reasons := make([]string, 0, len(skipped.by))
	n := 0
	for r, k := range skipped.by {
		reasons = append(reasons, fmt.Sprintf("%s (%d)", r, k))
		n += k
	}
	sort.Strings(reasons)
	line := fmt.Sprintf("%s: %d skipped: %s", packageName(), n, strings.Join(reasons, ", "))
	if skipped.needs {
		line += " (with CI set, a missing one fails)"
	}
	return line
}

func report(line string) {
	var w io.Writer = os.Stderr
	if testing.Verbose() {
		w = os.Stdout
	} else if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = tty
	}
	fmt.Fprintln(w, line)
}

// packageName is the test's directory relative to the module root.
func packageName() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	root, err := moduleRoot()
	if err != nil {
		return wd
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == "." {
		return wd
	}
	return "./" + filepath.ToSlash(rel)
}

// moduleRoot is the nearest directory at or above the working directory
// (a test's package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("testkit: no go.mod above the test's directory")
		}
		dir = up
	}
}

// CopyFile copies a fixture file to to, making its directories: a test lays
// out real files where a program would have written them.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
