package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needChild marks the copy of this test binary that runs TestNeedChild.
const needChild = "VIGIL_TESTKIT_NEED_CHILD"

// TestNeedChild asks for a program no PATH has; it only runs as the child
// of TestNeedSkipsOrFailsUnderCI.
func TestNeedChild(t *testing.T) {
	if os.Getenv(needChild) == "" {
		return // not a skip: this test is the child's, and passes in the parent
	}
	Tool(t, "vigil-no-such-tool", "the child of TestNeedSkipsOrFailsUnderCI wants it")
	t.Fatal("Tool returned for a missing program")
}

// A missing tool skips with one line and a summary from Main outside CI,
// and fails the test with CI set.
func TestNeedSkipsOrFailsUnderCI(t *testing.T) {
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), needChild+"=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestNeedChild") ||
		!strings.Contains(out, "needs vigil-no-such-tool: the child of") ||
		!strings.Contains(out, "./internal/testkit: 1 skipped: needs vigil-no-such-tool (1) (with CI set, a missing one fails)") {
		t.Fatalf("without CI: want a skip and the package's summary, got %v:\n%s", err, out)
	}
	for _, ci := range []string{"1", "true"} {
		out, err = run(ci)
		if err == nil || !strings.Contains(out, "--- FAIL: TestNeedChild") || !strings.Contains(out, "CI is set") {
			t.Fatalf("CI=%s: want a failure, got %v:\n%s", ci, err, out)
		}
	}
}

func TestStrict(t *testing.T) {
	for ci, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": true} {
		t.Setenv("CI", ci)
		if got := Strict(); got != want {
			t.Errorf("CI=%q: Strict() = %v, want %v", ci, got, want)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(Main(m)) }
