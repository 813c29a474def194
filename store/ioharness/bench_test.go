package ioharness_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/benchstore"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Run the store benchmarks side by side, e.g.:
//   go test ./store -run '^$' -bench . -benchtime 2000x
// The first run builds the big stores under $TMPDIR/vigil-bench (minutes).

var big = benchstore.Shape{Runs: 10_000, Steps: 1_000_000, Open: 5}
var small = benchstore.Shape{Runs: 25, Steps: 1_000, Open: 5}

func benchPath(b *testing.B, shape benchstore.Shape) string {
	b.Helper()
	p, err := benchstore.Path(shape)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCommit compares a checkpointed step (step row + checkpoint event
// + lease renewal in one transaction) with the cheapest possible commit: one
// raw INSERT of the same row per transaction, on the same kind of file.
func BenchmarkCommit(b *testing.B) {
	ctx := context.Background()
	b.Run("checkpoint-step", func(b *testing.B) {
		s, err := harness.Create(filepath.Join(b.TempDir(), "runs.sqlite3"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run, _ := s.StartRun(ctx, "bench", "/w")
		if _, err := s.AcquireLease(ctx, run, harness.DefaultLeaseTTL); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.CheckpointStep(ctx, run, harness.StepRecord{Step: i + 1, Decision: "read a.txt", Result: "[read a.txt] 12 lines",
				Prompt: "Goal: bench", ToolCall: `read_file:{"path":"a.txt"}`, Tokens: 120}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-insert", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "runs.sqlite3")
		s, err := harness.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=busy_timeout(5000)"}
		db, err := sql.Open("sqlite", u.String())
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		db.Exec("INSERT INTO runs (goal, file) VALUES ('bench', '/w')")
		ins, err := db.Prepare("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (1, ?, ?, ?, ?, ?, ?)")
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := ins.Exec(i+1, "read a.txt", "[read a.txt] 12 lines", "Goal: bench", `read_file:{"path":"a.txt"}`, 120); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkChanges measures one refresh that finds 10 new steps, on a store
// of 1 k steps and one of 1 M: the cost must not grow with the store.
func BenchmarkChanges(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape benchstore.Shape
	}{{"steps=1k", small}, {"steps=1M", big}} {
		b.Run(c.name, func(b *testing.B) {
			path := benchPath(b, c.shape)
			ctx := context.Background()
			w, err := harness.OpenWriter(path)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			r, err := ioharness.OpenReadOnly(path)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			run, err := w.StartRun(ctx, "bench changes", "/w")
			if err != nil {
				b.Fatal(err)
			}
			cur, err := r.Head(ctx)
			if err != nil {
				b.Fatal(err)
			}
			mark := cur.(*ioharness.SQLCursor).Mark("steps")
			defer cleanupBench(w, mark, run)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := 0; j < 10; j++ {
					w.RecordStepRow(ctx, run, harness.StepRecord{Step: i*10 + j + 1, Decision: "d", Result: "r"})
				}
				b.StartTimer()
				ch, next, err := r.Changes(ctx, cur)
				cur = next
				if err != nil || len(ch.Steps) != 10 {
					b.Fatalf("changes: %v, %d steps", err, len(ch.Steps))
				}
			}
		})
	}
}

// cleanupBench removes what a benchmark added to a cached store.
func cleanupBench(w *harness.Store, mark int64, run string) {
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: w.Path()}).String())
	if err != nil {
		return
	}
	defer db.Close()
	db.Exec("DELETE FROM steps WHERE id > ?", mark)
	db.Exec("DELETE FROM runs WHERE id = ?", run)
}

// BenchmarkOpenFirstPage is what vigil does before its first frame: open the
// store and list its runs, on 10 runs / 1 k steps and 10 k runs / 1 M steps.
func BenchmarkOpenFirstPage(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape benchstore.Shape
	}{{"runs=25,steps=1k", small}, {"runs=10k,steps=1M", big}} {
		b.Run(c.name, func(b *testing.B) {
			path := benchPath(b, c.shape)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := ioharness.OpenReadOnly(path)
				if err != nil {
					b.Fatal(err)
				}
				runs, err := s.Runs(ctx)
				if err != nil || len(runs) != c.shape.Runs {
					b.Fatalf("runs: %v, %d", err, len(runs))
				}
				var open []string
				for _, r := range runs {
					if !r.StatsKnown {
						open = append(open, r.ID)
					}
				}
				if _, err := s.RunStats(ctx, open); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkExactReads measures the reads that must see every row of a run
// (the timeline and the canonical trace) on 10 k runs / 1 M steps: the first
// read of a run the handle has not seen (it learns where the run's rows lie
// with one filtered pass), and the reads after it.
func BenchmarkExactReads(b *testing.B) {
	path := benchPath(b, big)
	ctx := context.Background()
	for _, c := range []struct{ name, run string }{{"recent", "9999"}, {"old", "17"}} {
		b.Run(c.name+"/first", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := ioharness.OpenReadOnly(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Steps(ctx, c.run); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
		b.Run(c.name+"/warm", func(b *testing.B) {
			s, err := ioharness.OpenReadOnly(path)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.CanonicalTrace(ctx, c.run); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Steps(ctx, c.run); err != nil {
					b.Fatal(err)
				}
				if _, err := s.CanonicalTrace(ctx, c.run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCursorToken is what vigil agent adds to a remote refresh: the
// reader's cursor read back from its token, and the next one written down
// (protocol 2). Open runs, undecided requests and leases are what a token
// holds, on a store with 5 and with 200 of them.
func BenchmarkCursorToken(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape benchstore.Shape
	}{{"open=5", small}, {"open=200", benchstore.Shape{Runs: 1_000, Steps: 10_000, Open: 200}}} {
		b.Run(c.name, func(b *testing.B) {
			r, err := ioharness.OpenReadOnly(benchPath(b, c.shape))
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			cur, err := r.Head(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			tok, err := r.EncodeCursor(cur)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				back, err := r.DecodeCursor(tok)
				if err != nil {
					b.Fatal(err)
				}
				if tok, err = r.EncodeCursor(back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tok)), "token-bytes")
		})
	}
}
