package union

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/ioharness"
)

// py runs a python3 script against the store at path: the foreign party
// that writes io-harness stores here, sharing no code with vigil.
func py(t testing.TB, path, script string, args ...string) string {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer cannot run")
	pre := "import sqlite3, sys, os\ndb = sqlite3.connect(sys.argv[1], timeout=5)\n"
	out, err := exec.Command("python3", append([]string{"-c", pre + script + "\ndb.commit()\ndb.close()\n", path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// harnessStore is an io-harness store written by python3 from the
// format's schema: a live run (leased to this process) parked on an
// approval, and a finished run.
func harnessStore(t testing.TB, dir, name, goal string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	schema, err := filepath.Abs("../ioharness/internal/schema/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	py(t, path, `import time
db.execute("PRAGMA journal_mode=WAL")
db.executescript(open(sys.argv[2]).read())
db.execute("PRAGMA user_version = 7")
db.execute("INSERT INTO runs (goal, file, status, started_at) VALUES (?, 'f', 'completed', '2026-12-01T10:00:00Z')", ("old " + sys.argv[3],))
db.execute("UPDATE runs SET outcome = 'done'")
db.execute("INSERT INTO runs (goal, file, status, started_at) VALUES (?, 'f', 'running', '2026-12-01T11:00:00Z')", (sys.argv[3],))
db.execute("INSERT INTO run_leases (run_id, owner, generation, renewed_at, ttl_secs) VALUES (2, ?, 1, strftime('%Y-%m-%dT%H:%M:%fZ','now'), 3600)", (sys.argv[4] + "-" + str(time.time_ns()) + "-1",))
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (2, 1, 'write', ?, 'x')", (sys.argv[3] + ".txt",))`,
		schema, goal, fmt.Sprint(os.Getpid()))
	return path
}

func open(t testing.TB, path string) store.Source {
	t.Helper()
	src, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func twoStores(t testing.TB) (*Set, string, string) {
	dir := t.TempDir()
	a := harnessStore(t, dir, "alpha.sqlite3", "build alpha")
	sub := filepath.Join(dir, "b")
	os.Mkdir(sub, 0o755)
	b := harnessStore(t, sub, "beta.sqlite3", "build beta")
	set, err := New([]Member{
		{Name: a, Source: open(t, a), Reopen: func() (store.Source, error) { return store.Open(a, store.Options{}) }},
		{Name: b, Source: open(t, b), Reopen: func() (store.Source, error) { return store.Open(b, store.Options{}) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set, a, b
}

func TestPrefixes(t *testing.T) {
	got := prefixes([]string{"/x/runs.sqlite3", "/y/runs.sqlite3", "ssh://build1/srv/ci.db", "/z/../", "/w/a b!.sqlite3", "/v/averyveryverylongname.sqlite3"})
	want := []string{"runs", "runs2", "ci", "s4", "ab", "averyveryver"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("prefixes %v; want %v", got, want)
	}
}

// Both stores' runs and requests come as one, each id carrying its store's
// prefix; per-run reads and decisions go to the owning store, and a
// decision lands in that store's file (read back by python3).
func TestRunsRequestsAndDecideRouteByStore(t *testing.T) {
	set, _, b := twoStores(t)
	src := set.Source()
	ctx := context.Background()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := src.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, r := range runs {
		ids[r.ID] = r.Goal
	}
	for id, goal := range map[string]string{"alpha/1": "old build alpha", "alpha/2": "build alpha", "beta/1": "old build beta", "beta/2": "build beta"} {
		if ids[id] != goal {
			t.Errorf("run %s: goal %q; want %q (runs %v)", id, ids[id], goal, ids)
		}
	}
	reqs, err := src.Requests(ctx, true)
	if err != nil || len(reqs) != 2 {
		t.Fatalf("requests %v %v; want one in each store", reqs, err)
	}
	var beta store.Request
	for _, q := range reqs {
		if q.ID == "beta/1" {
			beta = q
		}
	}
	if beta.RunID != "beta/2" || beta.Target != "build beta.txt" || fmt.Sprint(beta.Ancestry) != "[beta/2]" {
		t.Fatalf("beta's request %+v", beta)
	}
	if st, ok := src.(store.StoreSet).StoreOf("beta/2"); !ok || st.Name != b || st.Offline != "" {
		t.Errorf("StoreOf(beta/2) %+v %v", st, ok)
	}

	var run store.Run
	for _, r := range runs {
		if r.ID == "beta/2" {
			run = r
		}
	}
	if d, why := src.Classify(beta, run, run.Lease, time.Now()); d != store.Deliverable {
		t.Fatalf("classify beta/1: %v %s; want deliverable (its run holds a live lease)", d, why)
	}
	res, err := src.Decide(ctx, store.Decision{Key: beta.Key(), Verdict: store.VerdictApprove})
	if err != nil || !res.Won {
		t.Fatalf("decide beta/1: %+v %v", res, err)
	}
	if got := py(t, b, "print(db.execute('SELECT resolved FROM pending_approvals WHERE id = 1').fetchone()[0])"); got != "approve" {
		t.Errorf("beta's file holds %q for approval 1; want approve", got)
	}
	// The other store's request with the same own id is untouched.
	again, err := src.Requests(ctx, true)
	if err != nil || len(again) != 1 || again[0].ID != "alpha/1" {
		t.Errorf("after deciding beta/1, undecided %+v %v; want alpha/1 alone", again, err)
	}
	// A second decision loses the compare-and-set, in beta's own words.
	res, err = src.Decide(ctx, store.Decision{Key: beta.Key(), Verdict: store.VerdictDeny})
	if err != nil || res.Won {
		t.Errorf("second decide: %+v %v; want lost", res, err)
	}

	// The change comes from beta, prefixed.
	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range ch.Requests {
		found = found || (q.ID == "beta/1" && q.Resolved)
	}
	if !found {
		t.Errorf("changes %+v: beta/1 decided is not among them", ch.Requests)
	}
	if _, err := src.Steps(ctx, "gamma/1"); err == nil || !strings.Contains(err.Error(), "alpha/…") {
		t.Errorf("steps of a run of no store: %v", err)
	}
}

// A refusal names the store: a run whose lease lapsed cannot read it.
func TestRefusalNamesTheStore(t *testing.T) {
	set, a, _ := twoStores(t)
	py(t, a, "db.execute(\"UPDATE runs SET status = 'completed', outcome = 'done' WHERE id = 2\")\ndb.execute('DELETE FROM run_leases')")
	_, err := set.Source().Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "alpha/1"}, Verdict: store.VerdictApprove})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || !strings.Contains(err.Error(), a) || ref.Key.ID != "alpha/1" {
		t.Fatalf("decide on an ended run: %v; want a refusal naming %s and alpha/1", err, a)
	}
}

// One store whose file goes away is marked offline alone: the other's
// changes keep coming. Put back, it is opened again (Reset) and online.
func TestStoreGoneAndBack(t *testing.T) {
	set, a, b := twoStores(t)
	src := set.Source()
	ctx := context.Background()
	w, err := set.Wakeups()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Runs(ctx); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(t.TempDir(), "kept")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(b+suf, filepath.Join(keep, "beta.sqlite3"+suf)); err != nil && suf == "" {
			t.Fatal(err)
		}
	}
	waitOffline := func(want bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			st := set.Stores()
			if (st[1].Offline != "") == want && st[0].Offline == "" {
				return
			}
			select {
			case <-w.C():
				w.Ack(true)
			case <-time.After(100 * time.Millisecond):
			case <-deadline:
				t.Fatalf("stores %+v: want beta offline=%v, alpha online", st, want)
			}
		}
	}
	waitOffline(true)
	if st := set.Stores()[1]; !strings.Contains(st.Offline, "store gone") {
		t.Errorf("beta offline %q; want it to say the store is gone", st.Offline)
	}
	_, err = src.Decide(ctx, store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: "beta/1"}, Verdict: store.VerdictApprove})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "offline") {
		t.Errorf("a decision for the gone store: %v; want it refused, naming the store", err)
	}
	if got := py(t, filepath.Join(keep, "beta.sqlite3"), "print(db.execute('SELECT resolved FROM pending_approvals WHERE id = 1').fetchone()[0])"); got != "None" {
		t.Errorf("the gone store's file holds %q for approval 1; want nothing written", got)
	}
	py(t, a, "db.execute(\"INSERT INTO runs (goal, file, status) VALUES ('new alpha', 'f', 'running')\")")
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || ch.Reset {
		t.Fatalf("changes with beta gone: %+v %v", ch, err)
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != "alpha/3" {
		t.Errorf("changes with beta gone: runs %+v; want alpha/3", ch.Runs)
	}
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Rename(filepath.Join(keep, "beta.sqlite3"+suf), b+suf)
	}
	waitOffline(false)
	ch, next, err = src.Changes(ctx, next)
	if err != nil || ch.Reset || len(ch.Reloaded) != 1 || ch.Reloaded[0] != "beta" {
		t.Fatalf("changes once beta is back: %+v %v; want beta alone loaded again", ch, err)
	}
	var ids []string
	for _, r := range ch.Runs {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	if strings.Join(ids, " ") != "beta/1 beta/2" || len(ch.Requests) != 1 || ch.Requests[0].ID != "beta/1" {
		t.Errorf("beta loaded again: runs %v, requests %+v; want beta's whole, alpha not read again", ids, ch.Requests)
	}
	if n := set.Reloads(); n["beta"] != 1 || n["alpha"] != 0 {
		t.Errorf("reloads %v", n)
	}
	// alpha's changes go on from where they were.
	py(t, a, "db.execute(\"INSERT INTO runs (goal, file, status) VALUES ('newer alpha', 'f', 'running')\")")
	ch, _, err = src.Changes(ctx, next)
	if err != nil || len(ch.Reloaded) != 0 || len(ch.Runs) != 1 || ch.Runs[0].ID != "alpha/4" {
		t.Fatalf("alpha after beta came back: %+v %v", ch, err)
	}
	if _, err := src.Head(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 6 {
		t.Errorf("runs once beta is back: %d %v; want 6", len(runs), err)
	}
	if st := set.Stores(); st[0].Offline != "" || st[1].Offline != "" {
		t.Errorf("stores once back %+v", st)
	}
}

// flaky is a store whose reads fail while fail is set (a store locked by
// a writer, a disk that errs).
type flaky struct {
	store.Source
	fail atomic.Bool
}

func (f *flaky) Runs(ctx context.Context) ([]store.Run, error) {
	if f.fail.Load() {
		return nil, errors.New("database is locked")
	}
	return f.Source.Runs(ctx)
}

func (f *flaky) Requests(ctx context.Context, unresolved bool, ids ...string) ([]store.Request, error) {
	if f.fail.Load() {
		return nil, errors.New("database is locked")
	}
	return f.Source.Requests(ctx, unresolved, ids...)
}

func (f *flaky) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	if f.fail.Load() {
		return nil, nil, errors.New("database is locked")
	}
	return f.Source.Changes(ctx, cur)
}

// A store whose read failed is offline alone, and the set's wakeup reads
// it again by itself with back-off (nothing else may wake the reader):
// once it reads, it is online.
func TestFailedReadIsRetried(t *testing.T) {
	retryMin, retryMax = 50*time.Millisecond, 200*time.Millisecond
	defer func() { retryMin, retryMax = time.Second, 16*time.Second }()
	dir := t.TempDir()
	a := harnessStore(t, dir, "alpha.sqlite3", "a")
	b := harnessStore(t, dir, "beta.sqlite3", "b")
	fb := &flaky{Source: open(t, b)}
	set, err := New([]Member{{Name: a, Source: open(t, a)}, {Name: b, Source: fb}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	src := set.Source()
	ctx := context.Background()
	w, err := set.Wakeups()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Runs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Requests(ctx, true); err != nil {
		t.Fatal(err)
	}
	fb.fail.Store(true)
	// A whole load while beta fails (the set reloaded for alpha's sake)
	// keeps beta's rows as last read.
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs while beta fails: %d %v; want alpha's 2 and beta's 2 as last read", len(runs), err)
	}
	reqs, err := src.Requests(ctx, true)
	if err != nil || len(reqs) != 2 {
		t.Fatalf("requests while beta fails: %d %v; want both", len(reqs), err)
	}
	ch, next, err := src.Changes(ctx, cur)
	if err != nil || ch.Reset {
		t.Fatalf("changes with beta failing: %+v %v; want alpha's (none) and no error", ch, err)
	}
	if st := set.Stores(); st[0].Offline != "" || !strings.Contains(st[1].Offline, "database is locked") {
		t.Fatalf("stores %+v: want beta alone offline, saying why", st)
	}
	// Both wakeups come from the retry alone: nothing is written.
	for i := 0; i < 2; i++ {
		select {
		case <-w.C():
		case <-time.After(5 * time.Second):
			t.Fatalf("no retry wakeup %d while beta's reads fail", i+1)
		}
		if _, next, err = src.Changes(ctx, next); err != nil {
			t.Fatal(err)
		}
	}
	fb.fail.Store(false)
	py(t, b, "db.execute(\"INSERT INTO runs (goal, file, status) VALUES ('beta again', 'f', 'running')\")")
	select {
	case <-w.C():
	case <-time.After(5 * time.Second):
		t.Fatal("no wakeup once beta can be read")
	}
	ch, _, err = src.Changes(ctx, next)
	if err != nil || len(ch.Runs) != 1 || ch.Runs[0].ID != "beta/3" {
		t.Fatalf("changes once beta reads: %+v %v; want beta/3", ch, err)
	}
	if st := set.Stores(); st[1].Offline != "" {
		t.Errorf("beta still offline once read: %+v", st)
	}
}
