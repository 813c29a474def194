package ioharness

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/starweaver"
)

// Browsing or refusing a store leaves every file beside it as it was: no
// new -wal, -shm or -journal, no changed byte, no changed mtime — whatever
// sits beside it (a crashed writer's WAL, garbage, nothing) and whether
// vigil reads it or refuses it. Detect (which store.Open asks of every
// format first) leaves it too. A store a crashed writer left is read with
// its last commit, without rewriting the -shm; a WAL with no -shm is read
// as the main file holds it, and Problems says so.
func TestCorpusLeavesEveryFileAsItWas(t *testing.T) {
	py := foreign.Python(t)
	good, err := os.ReadFile(populatedStore(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	copyGood := foreign.Copy(good)
	then := func(sql string) func(testing.TB, string) { return foreign.CopyThen(py, good, sql) }
	cases := foreign.Corpus(t, t.TempDir(), py, "INSERT INTO runs (goal, file) VALUES ('after the crash', '/w')", []foreign.Base{
		{Name: "an io-harness store", Good: true, Make: copyGood},
		{Name: "a newer io-harness's store", Make: then("PRAGMA user_version = 8")},
		{Name: "without the steps table", Make: then("DROP TABLE steps")},
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
			starweaver.Detect(c.Path)
			s, err := Open(c.Path)
			switch {
			case err == nil:
				runs, err := s.Runs(ctx)
				if err != nil && c.Good {
					t.Errorf("Runs: %v", err)
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
				crashed := false
				for _, r := range runs {
					crashed = crashed || r.Goal == "after the crash"
				}
				wal := !strings.Contains(c.Name, "rollback")
				switch {
				case wal && c.Good && strings.HasSuffix(c.Name, "crashed writer's files") && !crashed:
					t.Error("the crashed writer's last commit (in its WAL) is not shown")
				case wal && c.Good && strings.HasSuffix(c.Name, "and a garbage -shm") && !crashed:
					t.Error("the crashed writer's last commit (in its WAL, beside a garbage -shm) is not shown")
				case wal && c.Good && strings.Contains(c.Name, "without its -shm") && len(problems(s)) == 0:
					t.Error("a WAL read without its -shm is not reported")
				case !wal && c.Good && crashed:
					t.Error("a transaction a killed writer never committed is shown")
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

// problems is what the source says it read without.
func problems(src any) []error {
	if p, ok := src.(store.ProblemReporter); ok {
		return p.Problems()
	}
	return nil
}
