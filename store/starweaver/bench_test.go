package starweaver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// openRuns writes a database of n running runs, each with a turn and an
// undecided approval (what a cursor keeps one entry each for), and
// returns its path.
func openRuns(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "starweaver.sqlite")
	f := newDB(b, path, false)
	f.session(sessA, 1, J{"session_id", sessA, "title", "bench", "workspace", "/w", "profile", "general", "status", "active"}, t0, t0)
	for i := 0; i < n; i++ {
		run := fmt.Sprintf("run_%08x-1111-4222-8333-444455556666", i)
		r := f.run(sessA, run, 1, int64(i+1), runJ(sessA, run, "bench run", "running", "", int64(i+1), t0, t0), t0, t0)
		r.stream(1, response(1, run, t0, "tool_calls", usageJ(100, 0, 0, 10), textPart("turn"), callPart("call_1", "write_file", J{"path", "a.go"})))
		r.approval("approval_"+run+"_call_1", "call_1", "write_file", J{"path", "a.go"}, "pending", nil, t0, t0)
	}
	f.close()
	return path
}

// BenchmarkCursorToken is what vigil agent adds to a remote refresh of a
// Starweaver store: the token read back and written again (the store's
// own Changes comes between, as it does locally).
func BenchmarkCursorToken(b *testing.B) {
	for _, n := range []int{5, 200} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) {
			s, err := Open(openRuns(b, n))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			cur, err := s.Head(ctx)
			if err != nil {
				b.Fatal(err)
			}
			// A refresh has run, so the tails and owned streams are in it.
			if _, cur, err = s.Changes(ctx, cur); err != nil {
				b.Fatal(err)
			}
			tok, err := s.EncodeCursor(cur)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				back, err := s.DecodeCursor(tok)
				if err != nil {
					b.Fatal(err)
				}
				if tok, err = s.EncodeCursor(back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tok)), "token-bytes")
		})
	}
}
