// Package benchstore builds large io-harness stores for benchmarks: many
// runs in trees, many steps, the shape a busy harness leaves after months.
// It writes with big raw transactions (the write API commits per step, far
// too slow for a million rows) into a store made by harness.Create, and caches
// the result under the system temp directory, since building one takes
// seconds to minutes.
package benchstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// Shape says what to build.
type Shape struct {
	Runs  int // runs in all; every fifth is a root with up to four children
	Steps int // steps in all, spread over the runs
	// BigRun, when > 0, makes the newest root run hold this many of the
	// steps (a run of 100 k steps), the rest spread over the others.
	BigRun int
	// Open is how many of the newest roots are still running, each with a
	// pending approval.
	Open int
}

func (s Shape) name() string {
	return fmt.Sprintf("vigil-bench-r%d-s%d-b%d-o%d-v2.sqlite3", s.Runs, s.Steps, s.BigRun, s.Open)
}

// Path returns the path of a store of this shape, building it first if the
// cache has none.
func Path(shape Shape) (string, error) {
	dir := filepath.Join(os.TempDir(), "vigil-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, shape.name())
	if _, err := os.Stat(path + ".done"); err == nil {
		return path, nil
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	if err := build(path, shape); err != nil {
		return "", err
	}
	return path, os.WriteFile(path+".done", nil, 0o644)
}

func build(path string, shape Shape) error {
	s, err := harness.Create(path)
	if err != nil {
		return err
	}
	s.Close()
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "_pragma=busy_timeout(5000)&_pragma=synchronous(OFF)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))

	// Plan the runs: roots with children, ids ascending in start order.
	type run struct {
		id, parent, depth int
		steps             int
	}
	runs := make([]run, shape.Runs)
	root := 0
	for i := range runs {
		runs[i].id = i + 1
		if i%5 == 0 {
			root = i + 1
		} else {
			runs[i].parent, runs[i].depth = root, 1
		}
	}
	rest := shape.Steps - shape.BigRun
	per := rest / shape.Runs
	for i := range runs {
		runs[i].steps = per
	}
	runs[0].steps += rest - per*shape.Runs
	newestRoot := ((shape.Runs - 1) / 5) * 5
	if shape.BigRun > 0 {
		runs[newestRoot].steps += shape.BigRun
	}
	openFrom := newestRoot - (shape.Open-1)*5

	prep := func(q string) *sql.Stmt {
		st, e := db.Prepare(q)
		if e != nil && err == nil {
			err = e
		}
		return st
	}
	insRun := prep(`INSERT INTO runs (id, goal, file, outcome, provider, parent_run_id, depth, status, started_at)
		VALUES (?, ?, '/repo', ?, 'bench', ?, ?, ?, ?)`)
	insStep := prep(`INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	insCtx := prep(`INSERT INTO context_events (run_id, step, kind, detail, est_tokens, reported_tokens) VALUES (?, ?, 'assembled', 'carried=1', ?, ?)`)
	insOut := prep(`INSERT INTO run_outcomes (run_id, outcome, success, steps, tokens, duration_ms, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	prompt := strings.Repeat("Goal: refactor the parser; keep the public API. Context follows. ", 6)
	result := strings.Repeat("[read src/parse.rs] fn parse(input: &str) -> Result<Ast> { … } ", 3)
	outcomes := []store.Outcome{store.OutcomeSuccess, store.OutcomeSuccess, store.OutcomeSuccess, store.OutcomeStepCapReached,
		store.OutcomeStalled, store.OutcomeDenied}
	pending := 0
	commitEvery := func() error {
		pending++
		if pending < 50000 {
			return nil
		}
		pending = 0
		if err := tx.Commit(); err != nil {
			return err
		}
		tx, err = db.BeginTx(ctx, nil)
		return err
	}
	// Interleave runs a few at a time, as concurrent agents do.
	const lanes = 4
	for base := 0; base < len(runs); base += lanes {
		end := min(base+lanes, len(runs))
		for i := base; i < end; i++ {
			r := runs[i]
			open := r.parent == 0 && r.id-1 >= openFrom || r.parent != 0 && r.parent-1 >= openFrom
			status, outcome := string(store.StatusCompleted), any(string(outcomes[rng.Intn(len(outcomes))]))
			if open {
				status, outcome = string(store.StatusRunning), nil
			}
			var parent any
			if r.parent != 0 {
				parent = r.parent
			}
			started := fmt.Sprintf("2026-%02d-%02dT%02d:%02d:00.000Z", 1+r.id*11/shape.Runs, 1+r.id%28, r.id%24, r.id%60)
			if _, err := tx.Stmt(insRun).Exec(r.id, fmt.Sprintf("task %d: refactor module %d and keep the tests green", r.id, r.id%97),
				outcome, parent, r.depth, status, started); err != nil {
				return err
			}
		}
		maxSteps := 0
		for i := base; i < end; i++ {
			maxSteps = max(maxSteps, runs[i].steps)
		}
		for n := 1; n <= maxSteps; n++ {
			for i := base; i < end; i++ {
				if n > runs[i].steps {
					continue
				}
				tok := int64(200 + rng.Intn(2000))
				if _, err := tx.Stmt(insStep).Exec(runs[i].id, n, fmt.Sprintf("read src/file%d.rs", n%50), result, prompt,
					fmt.Sprintf(`read_file:{"path":"src/file%d.rs"}`, n%50), tok); err != nil {
					return err
				}
				var rep any = tok
				if n%13 == 0 {
					rep = nil
				}
				if _, err := tx.Stmt(insCtx).Exec(runs[i].id, n, tok*9/10, rep); err != nil {
					return err
				}
				if err := commitEvery(); err != nil {
					return err
				}
			}
		}
		for i := base; i < end; i++ {
			r := runs[i]
			open := r.parent == 0 && r.id-1 >= openFrom || r.parent != 0 && r.parent-1 >= openFrom
			if open {
				continue
			}
			if _, err := tx.Stmt(insOut).Exec(r.id, outcomes[r.id%len(outcomes)], 1, r.steps, int64(r.steps)*1100,
				60000+r.steps*900, "2026-11-01T00:00:00.000Z"); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	// The open runs each wait on a human.
	w, err := harness.OpenWriter(path)
	if err != nil {
		return err
	}
	defer w.Close()
	for i := openFrom; i <= newestRoot && shape.Open > 0; i += 5 {
		content := "replicas: 4\n"
		if _, err := w.PutPending(ctx, fmt.Sprint(runs[i].id), runs[i].steps, "write", "deploy/prod.yaml", &content); err != nil {
			return err
		}
	}
	return nil
}
