package ioharness_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// longRunSteps is the size of the one run BenchmarkStepDetailLongRun opens.
const longRunSteps = 1_000_000

// longRunPath is a cached store (under $TMPDIR/vigil-bench) holding one run
// of a million steps with the side rows io-harness writes for each step
// (an assembled context event, a provider attempt, the model's turn, a
// ledger observation and a policy event; an edit every tenth step), beside
// a few small runs interleaved with it, built by C SQLite (the sqlite3
// CLI) in another process. The side tables are unindexed by run_id, as
// io-harness leaves them (provider_calls has its run_id index).
func longRunPath(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "vigil-bench")
	path := filepath.Join(dir, fmt.Sprintf("longrun-s%d-v1.sqlite3", longRunSteps))
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	bin := testkit.Tool(b, "sqlite3", "building the long-run store needs the sqlite3 CLI")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	s, err := harness.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.Logf("building %s once (a minute or two); it is cached", path)
	cmd := exec.Command(bin, "-bail", path)
	cmd.Stdin = strings.NewReader(longRunSQL(longRunSteps))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	if err := os.WriteFile(path+".done", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// longRunSQL fills the store: run 1 is the long one; runs 2..5 take a step
// every 1 000 of run 1's, so every table interleaves them.
func longRunSQL(n int) string {
	return fmt.Sprintf(`PRAGMA journal_mode=DELETE;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-65536;
BEGIN;
INSERT INTO runs (id, goal, file, provider, status, started_at) VALUES
  (1, 'long run', '/repo', 'bench', 'running', '2026-01-01T00:00:00.000Z'),
  (2, 'small 2', '/repo', 'bench', 'running', '2026-01-01T00:00:01.000Z'),
  (3, 'small 3', '/repo', 'bench', 'running', '2026-01-01T00:00:02.000Z'),
  (4, 'small 4', '/repo', 'bench', 'running', '2026-01-01T00:00:03.000Z'),
  (5, 'small 5', '/repo', 'bench', 'running', '2026-01-01T00:00:04.000Z');
CREATE TEMP TABLE plan AS
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %[1]d)
SELECT i AS k, 1 AS run, i AS step FROM n
UNION ALL
SELECT i + 0.5, 2 + (i/1000) %% 4, i/4000 + 1 FROM n WHERE i %% 1000 = 0;
INSERT INTO context_events (run_id, step, kind, detail, est_tokens, reported_tokens)
  SELECT run, step, 'assembled', 'carried=3 stubbed=0 reread=0 recalled=0 collapsed=0', 1200, 1300 FROM plan ORDER BY k;
INSERT INTO provider_calls (run_id, step, attempt, provider, model, prompt_tokens, completion_tokens, total_tokens, latency_ms, finish_reason)
  SELECT run, step, 1, 'bench', 'm', 1000, 300, 1300, 800, 'tool_use' FROM plan ORDER BY k;
INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens)
  SELECT run, step, 'read src/file' || (step %% 50) || '.rs',
    '[read src/parse.rs] fn parse(input: &str) -> Result<Ast> { … }', 'Goal: refactor the parser.',
    'read_file:{"path":"src/file' || (step %% 50) || '.rs"}', 1300 FROM plan ORDER BY k;
INSERT INTO ledger_observations (run_id, step, kind, target, text)
  SELECT run, step, 'read', 'src/file' || (step %% 50) || '.rs', 'fn parse(input: &str) -> Result<Ast> { … } // 120 lines' FROM plan ORDER BY k;
INSERT INTO policy_events (run_id, step, kind, act, target, decision, source)
  SELECT run, step, 'decision', 'read', 'src/file' || (step %% 50) || '.rs', 'allow', 'policy' FROM plan ORDER BY k;
INSERT INTO edits (run_id, step, tool, path, lines_added, lines_removed, hunk)
  SELECT run, step, 'edit_file', 'src/file' || (step %% 50) || '.rs', 3, 1, '@@ -1,1 +1,3 @@' || char(10) || '-a' || char(10) || '+b' FROM plan WHERE step %% 10 = 0 ORDER BY k;
INSERT INTO step_turns (run_id, step, text, calls)
  SELECT run, step, 'I will read the file next.', '[]' FROM plan ORDER BY k;
COMMIT;
PRAGMA journal_mode=WAL;
`, n)
}

// BenchmarkStepDetailLongRun is opening one step's detail in a run of a
// million steps: a step near the start, the middle and the end, on a
// handle that has read the run's detail once (what it learned is kept), and
// the first read on a fresh handle.
func BenchmarkStepDetailLongRun(b *testing.B) {
	path := longRunPath(b)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		cpu := cpuTime()
		defer func() { b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
		for i := 0; i < b.N; i++ {
			s, err := ioharness.OpenReadOnly(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.StepDetail(ctx, "1", longRunRow(longRunSteps/2)); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	for _, step := range []int{1, longRunSteps / 2, longRunSteps} {
		b.Run(fmt.Sprintf("warm/step-%d", step), func(b *testing.B) {
			s, err := ioharness.OpenReadOnly(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.StepDetail(ctx, "1", longRunRow(3)); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu := cpuTime()
			defer func() { b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
			for i := 0; i < b.N; i++ {
				d, err := s.StepDetail(ctx, "1", longRunRow(step))
				if err != nil {
					b.Fatal(err)
				}
				if d.Number != step || len(d.Observations) != 1 || len(d.Policy) != 1 || len(d.ProviderCalls) != 1 {
					b.Fatalf("step %d: got %d with %d observations, %d policy events, %d provider calls", step, d.Number,
						len(d.Observations), len(d.Policy), len(d.ProviderCalls))
				}
			}
		})
	}
}

// longRunRow is the steps row of run 1's step n: the plan puts one small
// run's row after every thousandth of run 1's.
func longRunRow(n int) int64 { return int64(n + (n-1)/1000) }

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
