package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// burstWriter is the harness side of TestNeverBlocksTheWriter: a separate
// process committing steps as fast as it can, watching its own WAL.
func burstWriter(path, run string, n int) int {
	w, err := harness.OpenWriter(path)
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	defer w.Close()
	ctx := context.Background()
	var maxWAL int64
	for i := 1; i <= n; i++ {
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: i, Decision: fmt.Sprintf("burst %d", i), Result: strings.Repeat("r", 300), Tokens: 10}); err != nil {
			fmt.Println("err", err)
			return 1
		}
		if i%20 == 0 {
			if fi, err := os.Stat(path + "-wal"); err == nil {
				maxWAL = max(maxWAL, fi.Size())
			}
		}
	}
	fmt.Println("wal", maxWAL)
	return 0
}

// With vigil tailing a long burst, the writer's WAL stays within what its
// own autocheckpoint allows: vigil holds no read snapshot between refreshes,
// so checkpoints are never pinned. (The commit-latency side of "never block
// the writer" is measured by the watch package's latency report.)
func TestNeverBlocksTheWriter(t *testing.T) {
	const n = 3000
	path := filepath.Join(t.TempDir(), "burst.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := w.StartRun(context.Background(), "burst", "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AcquireLease(context.Background(), run, time.Hour); err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	src, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "burst") },
		teatest.WithDuration(5*time.Second))

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIGIL_TUI_CHILD=burst", "VIGIL_BURST_PATH="+path, "VIGIL_BURST_RUN="+run, fmt.Sprint("VIGIL_BURST_N=", n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("writer: %v\n%s", err, out)
	}
	var wal int64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "wal %d", &wal); err != nil {
		t.Fatalf("writer said %q", out)
	}
	// The default autocheckpoint is 1000 pages (4 MB at 4 KB pages); a
	// pinned snapshot grows the WAL by the whole burst instead.
	if wal > 8<<20 {
		t.Errorf("the WAL reached %.1f MB with vigil attached: something pinned it", float64(wal)/(1<<20))
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		if strings.Contains(tmOutput(tm), fmt.Sprintf("%s steps", thousands(n))) {
			break
		}
	}
	tm.Quit()
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if got := fm.st.agent.Len(); got != n {
		t.Errorf("vigil holds %d of the %d steps written", got, n)
	}
	t.Logf("max WAL with vigil attached: %.2f MB", float64(wal)/(1<<20))
}

// tmOutput drains what the program wrote since the last call.
func tmOutput(tm *teatest.TestModel) string {
	b := make([]byte, 1<<20)
	n, _ := tm.Output().Read(b)
	return string(b[:n])
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	if len(s) > 3 {
		return s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}
