package starweaver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
)

// Browsing or refusing a Starweaver database leaves every file beside it
// as it was: no new -wal, -shm or -journal, no changed byte, no changed
// mtime, whatever sits beside it and whether vigil reads it or refuses it.
// Detect leaves it too.
func TestCorpusLeavesEveryFileAsItWas(t *testing.T) {
	py := foreign.Python(t)
	good, err := os.ReadFile(buildV07(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	copyGood := foreign.Copy(good)
	then := func(sql string) func(testing.TB, string) { return foreign.CopyThen(py, good, sql) }
	cases := foreign.Corpus(t, t.TempDir(), py, "CREATE TABLE vigil_after_crash (x)", []foreign.Base{
		{Name: "a Starweaver database", Good: true, Make: copyGood},
		{Name: "a newer Starweaver's database", Make: then("INSERT INTO starweaver_schema_migrations VALUES ('20260801_000020_future', 'future', 'fnv1a64:0', '2026-08-01T00:00:00+00:00')")},
		{Name: "without a records table", Make: then("DROP TABLE hitl_resume_claims")},
	})
	if len(cases) < 30 {
		t.Fatalf("%d cases: the corpus should have at least 30", len(cases))
	}
	t.Logf("%d cases", len(cases))
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			before := foreign.Snap(t, c.Dir)
			t0 := time.Now()
			defer func() {
				// SQLite's read-only -shm mode retries some WALs for ten
				// seconds before it gives up: none may come near that.
				if took := time.Since(t0); took > 5*time.Second {
					t.Errorf("opening and browsing it took %v", took)
				}
			}()
			if Detect(c.Path) != c.Good && c.Good {
				t.Error("Detect does not recognise it")
			}
			s, err := Open(c.Path)
			switch {
			case err == nil:
				runs, err := s.Runs(ctx)
				if c.Good && (err != nil || len(runs) == 0) {
					t.Errorf("Runs: %d runs, %v", len(runs), err)
				}
				if _, err := s.Requests(ctx, false); err != nil && c.Good {
					t.Errorf("Requests: %v", err)
				}
				if cur, err := s.Head(ctx); err == nil {
					s.Changes(ctx, cur)
				}
				for _, r := range runs {
					s.Steps(ctx, r.ID)
				}
				s.Close()
			case c.Good:
				t.Errorf("Open: %v", err)
			case strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), c.Path):
				t.Errorf("refusal %q is not one line naming the path", err)
			}
			if d := before.Diff(foreign.Snap(t, c.Dir)); d != "" {
				t.Errorf("%s: %s", map[bool]string{true: "browsing it", false: "refusing it"}[err == nil], d)
			}
		})
	}
}
