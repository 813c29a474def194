package ioharness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// An embedding program writes runs through Create and browses them through
// Open in the same process, while foreign C-SQLite processes read, write
// and decide beside it. Open must never drop the writer's locks (a close()
// of any descriptor of the file does, on POSIX): then the next foreign
// process to close thinks it is the last, checkpoints, and unlinks the WAL
// the writer still writes into — two databases, commits lost, two winners.
func TestEmbeddedWriterAndBrowserBesideForeignParties(t *testing.T) {
	cli := foreign.SQLite3(t)
	py := foreign.Python(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	run := must[string](t)(w.StartRun(ctx, "embedded", "/w"))
	must[int64](t)(w.AcquireLease(ctx, run, time.Hour))
	step := 0
	commit := func() {
		t.Helper()
		step++
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: step, Decision: fmt.Sprintf("step %d", step)}); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	wal := foreign.WatchWAL(t, path)

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if held, ok := foreign.HoldsLock(os.Getpid(), path); ok && !held {
		t.Fatal("after Open this process holds no lock on the store: its writer's SHARED lock is gone")
	}
	cli.MustExec(t, path, "SELECT count(*) FROM steps")
	wal.Check(t, "after Open and one foreign read")

	foreignRows := 0
	for i := 0; i < 30; i++ {
		commit()
		time.Sleep(20 * time.Millisecond)
		switch i % 3 {
		case 0:
			cli.MustExec(t, path, "SELECT count(*) FROM steps")
		case 1:
			py.MustExec(t, path, fmt.Sprintf("INSERT INTO memory (workspace, key, value, run_id, step, created_at) VALUES ('/py', 'k%d', 'v', %s, 0, datetime('now'))", i, run))
			foreignRows++
		case 2:
			if _, err := r.Runs(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wal.Check(t, fmt.Sprintf("after commit %d", step))
	}

	// Decisions: this process approves through Open while Python denies, at
	// the same moment, and the harness reads what won through its own handle.
	for round := 0; round < 6; round++ {
		// Asked at the step it is about, which commits once the request is decided.
		id := must[string](t)(w.PutPending(ctx, run, step+1, "exec", fmt.Sprintf("make step-%d", round), nil))
		key := store.RequestKey{Kind: store.Approval, ID: id}
		at := time.Now().Add(200 * time.Millisecond)
		pyOut := make(chan string, 1)
		go func() {
			out, err := py.ExecAt(path, "UPDATE pending_approvals SET resolved = 'deny' WHERE id = "+id+" AND resolved IS NULL; SELECT changes()", at)
			if err != nil {
				out = err.Error()
			}
			pyOut <- out
		}()
		time.Sleep(time.Until(at.Add(time.Duration(round%3-1) * time.Millisecond)))
		res, err := r.Decide(ctx, store.Decision{Key: key, Verdict: store.VerdictApprove})
		if err != nil {
			t.Fatalf("round %d: decide: %v", round, err)
		}
		pyWon := <-pyOut
		if pyWon != "0" && pyWon != "1" {
			t.Fatalf("round %d: python: %s", round, pyWon)
		}
		if res.Won == (pyWon == "1") {
			t.Fatalf("round %d: this process won %v, python won %v: exactly one must", round, res.Won, pyWon == "1")
		}
		want := "deny"
		if res.Won {
			want = "approve"
		} else if res.Decision != want {
			t.Errorf("round %d: the loser was told %q won; python decided %q", round, res.Decision, want)
		}
		acted, err := w.Request(ctx, key) // what the agent reads, and acts on
		if err != nil || acted.Decision != want {
			t.Fatalf("round %d: the harness reads %q (%v); the winner decided %q", round, acted.Decision, err, want)
		}
		if got := cli.MustExec(t, path, "SELECT resolved FROM pending_approvals WHERE id = "+id); got != want {
			t.Fatalf("round %d: the file holds %q; the winner decided %q", round, got, want)
		}
		commit()
		wal.Check(t, fmt.Sprintf("after decision round %d", round))
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := cli.MustExec(t, path, "SELECT count(*) FROM steps"); got != fmt.Sprint(step) {
		t.Errorf("the file holds %s steps after exit; %d were committed", got, step)
	}
	if got := cli.MustExec(t, path, "SELECT count(*) FROM memory WHERE workspace = '/py'"); got != fmt.Sprint(foreignRows) {
		t.Errorf("the file holds %s of the %d rows Python committed", got, foreignRows)
	}
}

// childEmbed is an embedding program: Create, then Open beside it, then a
// step every 20 ms, printing each step once it is committed, until killed.
func childEmbed() int {
	ctx := context.Background()
	path := os.Getenv("VIGIL_PATH")
	w, err := harness.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	run, err := w.StartRun(ctx, "killed", "/w")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer r.Close()
	for i := 1; ; i++ {
		if err := w.CheckpointStep(ctx, run, harness.StepRecord{Step: i, Decision: "d"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		r.Runs(ctx)
		fmt.Println("committed", i)
		time.Sleep(20 * time.Millisecond)
	}
}

// An embedding program killed while foreign processes read its store: every
// step it said it committed is in the store after the kill (its WAL was
// never unlinked under it, so the next opener recovers it).
func TestEmbeddedWriterKilled(t *testing.T) {
	cli := foreign.SQLite3(t)
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIGIL_STORE_CHILD=embed", "VIGIL_PATH="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	committed := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "committed "))
		if err != nil {
			continue
		}
		committed = n
		if n%5 == 0 {
			cli.MustExec(t, path, "SELECT count(*) FROM steps") // a foreign read that exits
		}
		if n == 60 {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	got, _ := strconv.Atoi(cli.MustExec(t, path, "SELECT count(*) FROM steps"))
	if got < committed {
		t.Fatalf("after the kill the store holds %d steps; the program had committed %d", got, committed)
	}
}
