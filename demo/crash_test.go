package demo

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand"
	"net/url"
	"os"
	execpkg "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// TestMain lets the test binary be a harness process that a test can kill.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_DEMO_CHILD") == "harness" {
		os.Exit(harnessChild(os.Getenv("VIGIL_DEMO_PATH")))
	}
	os.Exit(m.Run())
}

// harnessChild runs the demo with a decider beside it, fast, until killed.
func harnessChild(path string) int {
	ctx := context.Background()
	ready := make(chan struct{})
	startDecider(ctx, path, ready, approveAll)
	seed, _ := strconv.ParseInt(os.Getenv("VIGIL_DEMO_SEED"), 10, 64)
	if err := Run(ctx, Options{Path: path, Speed: 25, Seed: seed, Ready: func() { close(ready); fmt.Println("ready") }}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	time.Sleep(time.Hour) // finished before the kill: wait for it
	return 0
}

// SIGKILL the harness at random moments: the store must still open, never
// show a step without its checkpoint (they commit together), and show the
// run as crashed at once — its lease names a process that is gone.
func TestKilledHarness(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	trials := 12
	if testing.Short() {
		trials = 4
	}
	crashed := 0
	for i := 0; i < trials; i++ {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("killed-%d.sqlite3", i))
		cmd := execpkg.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "VIGIL_DEMO_CHILD=harness", "VIGIL_DEMO_PATH="+path, fmt.Sprintf("VIGIL_DEMO_SEED=%d", i))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The kill moment counts from a point the child has reached, not
		// from its start: a race-built child on a loaded machine takes
		// seconds to get going. Every other trial counts from the store's
		// creation (kills land in the history too), the rest from the live
		// tree's start.
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "ready" {
					close(ready)
					break
				}
			}
			io.Copy(io.Discard, out)
		}()
		if i%2 == 0 {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if _, err := os.Stat(path); err == nil {
					break
				}
			}
		} else {
			select {
			case <-ready:
			case <-time.After(60 * time.Second):
			}
		}
		after := time.Duration(150+rng.Intn(1800)) * time.Millisecond
		time.Sleep(after)
		cmd.Process.Kill()
		cmd.Wait() // reaped: the pid is really gone, as a supervisor would leave it
		if _, err := os.Stat(path); err != nil {
			continue // killed before the store was created
		}
		if checkAfterKill(t, path, after) {
			crashed++
		}
	}
	if crashed == 0 {
		t.Error("no trial caught the run mid-flight: the kill points are too late to test anything")
	}
	t.Logf("%d of %d trials caught the run mid-flight", crashed, trials)
}

// checkAfterKill checks one killed store; it reports whether the live root
// was caught unfinished.
func checkAfterKill(t *testing.T, path string, after time.Duration) bool {
	t.Helper()
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("killed after %v: the store does not open: %v", after, err)
	}
	defer s.Close()
	ctx := context.Background()
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro"}).String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("killed after %v: integrity_check = %q %v", after, ok, err)
	}
	// A committed step and its checkpoint event land together: per run and
	// step number, as many main step rows as checkpoint events.
	rows, err := db.Query(`SELECT s.run_id, s.step, s.decision, s.n, COALESCE(c.n, 0) FROM
		(SELECT run_id, step, MAX(decision) AS decision, COUNT(*) AS n FROM steps
		 WHERE decision NOT LIKE 'retry % after %' AND decision NOT LIKE 'escalated after %' AND decision NOT LIKE 'compacting after %'
		 GROUP BY run_id, step) s
		LEFT JOIN (SELECT run_id, step, COUNT(*) AS n FROM checkpoint_events WHERE kind = 'checkpoint' GROUP BY run_id, step) c
		ON c.run_id = s.run_id AND c.step = s.step WHERE s.n != COALESCE(c.n, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run, step, n, c int
		var decision string
		rows.Scan(&run, &step, &decision, &n, &c)
		t.Errorf("killed after %v: run %d step %d (%q) has %d rows but %d checkpoint events", after, run, step, decision, n, c)
	}
	rows.Close()

	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	caught := false
	now := time.Now()
	for _, r := range runs {
		if r.Status != store.StatusRunning {
			continue
		}
		st := store.StateOf(r, store.EffectiveLease(r, byID), s.RecordsLeases(), false, now)
		if lease := store.EffectiveLease(r, byID); lease != nil {
			caught = true
			if st != store.StateCrashed {
				t.Errorf("killed after %v: run %s reads %v, want crashed (its driver pid %d is gone)", after, r.ID, st, lease.OwnerPID())
			}
		}
		if strings.TrimSpace(r.Goal) == "" {
			t.Errorf("run %s has no goal", r.ID)
		}
	}
	return caught
}

// Two people decide the same requests at once, one approving everything
// and one denying it: exactly one decision lands on each row, and the
// harness does what the row says, never what a loser asked for.
func TestRacingDecidersHarnessActsOnTheRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.sqlite3")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	ready := make(chan struct{})
	yes := startDecider(ctx, path, ready, approveAll)
	no := startDecider(ctx, path, ready, func(r store.Request) store.Decision {
		switch r.Kind {
		case store.Question:
			return store.Decision{Key: r.Key(), Text: "Keep returning an empty Document"}
		case store.Plan:
			return store.Decision{Key: r.Key(), Verdict: store.VerdictCancel}
		}
		return store.Decision{Key: r.Key(), Verdict: store.VerdictDeny}
	})
	err := Run(ctx, Options{Path: path, Speed: 200, Seed: 3, Ready: func() { close(ready) }})
	cancel()
	<-yes.done
	<-no.done
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := openRO(t, path)
	reqs, err := s.Requests(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	tree := liveTree(t, s)
	live := map[string]bool{}
	for _, r := range tree {
		live[r.ID] = true
	}
	for _, r := range reqs {
		if !r.Resolved || !live[r.RunID] {
			continue // history's requests were decided by the harness itself
		}
		_, y := yes.decided[r.Key()]
		_, n := no.decided[r.Key()]
		if y == n {
			t.Errorf("%s: won by the approver %v and by the denier %v — exactly one must win", r.Key(), y, n)
		}
		if y && r.Decision != string(approveAll(r).Verdict) && r.Kind != store.Question {
			t.Errorf("%s: the approver won but the row holds %q", r.Key(), r.Decision)
		}
	}
	// The release agent asked for a write and a command: it ends denied if
	// and only if a row it asked about says deny.
	release := byAddress(t, s, tree, "release")
	denied := false
	for _, r := range reqs {
		if r.Kind == store.Approval && r.RunID == release.ID && r.Decision == string(store.VerdictDeny) {
			denied = true
		}
	}
	if (release.Outcome == store.OutcomeDenied) != denied {
		t.Errorf("release ended %q while its rows say denied=%v", release.Outcome, denied)
	}
}
