package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/union"
)

// pyStore is an io-harness store written by python3 from the format's
// schema, sharing no code with vigil: a finished run, and a live run
// (leased to this process) parked on a write approval of goal+".txt".
func pyStore(t *testing.T, path, goal string) {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer cannot run")
	schema, err := filepath.Abs("../store/ioharness/internal/schema/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	pyExec(t, path, `import time
db.execute("PRAGMA journal_mode=WAL")
db.executescript(open(sys.argv[2]).read())
db.execute("PRAGMA user_version = 7")
db.execute("INSERT INTO runs (goal, file, status, outcome, started_at) VALUES (?, 'f', 'completed', 'done', '2026-12-01T10:00:00Z')", ("old " + sys.argv[3],))
db.execute("INSERT INTO runs (goal, file, status, started_at) VALUES (?, 'f', 'running', strftime('%Y-%m-%dT%H:%M:%fZ','now'))", (sys.argv[3],))
db.execute("INSERT INTO run_leases (run_id, owner, generation, renewed_at, ttl_secs) VALUES (2, ?, 1, strftime('%Y-%m-%dT%H:%M:%fZ','now'), 3600)", (sys.argv[4] + "-" + str(time.time_ns()) + "-1",))
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (2, 1, 'write', ?, 'x')", (sys.argv[3] + ".txt",))`,
		schema, goal, fmt.Sprint(os.Getpid()))
}

func pyExec(t *testing.T, path, script string, args ...string) string {
	t.Helper()
	pre := "import sqlite3, sys, os\ndb = sqlite3.connect(sys.argv[1], timeout=5)\n"
	out, err := exec.Command("python3", append([]string{"-c", pre + script + "\ndb.commit()\ndb.close()\n", path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// severalDriver is the explorer on two python-written stores, alpha and
// beta, through store/union, on the real clock (the leases are real).
func severalDriver(t *testing.T, w, h int) (*driver, *union.Set, [2]string) {
	t.Helper()
	dir := t.TempDir()
	paths := [2]string{filepath.Join(dir, "alpha.sqlite3"), filepath.Join(dir, "beta.sqlite3")}
	pyStore(t, paths[0], "build alpha")
	pyStore(t, paths[1], "ship beta")
	var ms []union.Member
	for _, p := range paths {
		src, err := store.Open(p, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, union.Member{Name: p, Source: src, Reopen: func() (store.Source, error) { return store.Open(p, store.Options{}) }})
	}
	set, err := union.New(ms)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	d := &driver{t: t, clock: time.Now(), wait: cmdTimeout}
	d.m = New(Options{Source: set.Source(), Reopen: func() (store.Source, error) { return set.Source(), nil },
		NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return d.clock }})
	t.Cleanup(d.m.Close)
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.run(d.m.Init())
	return d, set, paths
}

// Two stores: one runs list with a store column, one queue holding both
// stores' requests; approving the second store's request writes it to
// that store's file alone (read back by python3).
func TestSeveralStoresOneListOneQueue(t *testing.T) {
	d, _, paths := severalDriver(t, 120, 32)
	d.contains("STORE", "build alpha", "ship beta", "2 stores")
	// The store column names the store, the id column the store's own id.
	for _, want := range [][2]string{{"ship beta", "beta"}, {"build alpha", "alpha"}, {"old ship beta", "beta"}} {
		row := runsRow(d.screen(), want[0])
		if f := strings.Fields(row); len(f) < 4 || f[2] != want[1] {
			t.Errorf("the row of %q is %q: want its store %s in the STORE column", want[0], row, want[1])
		}
	}
	// The title counts what waits in both stores; without that, it names
	// how many stores are open.
	if title := d.m.View().WindowTitle; title != "◆ 2 waiting · vigil" {
		t.Errorf("window title %q: want both stores' requests counted", title)
	}
	d.m.opt.Notify.NoTitle = true
	if title := d.m.View().WindowTitle; title != "vigil — 2 stores" {
		t.Errorf("window title %q: want it to say 2 stores", title)
	}
	d.m.opt.Notify.NoTitle = false
	d.press("6")
	d.contains("approval alpha/1", "approval beta/1", "2 waiting")
	selectRequest(d, "approval beta/1")
	d.contains("WRITE ship beta.txt", "asked by #beta/2 ship beta")
	d.advance(2 * time.Second)
	d.press("a")
	d.contains("Approve write ship beta.txt?")
	d.press("y")
	d.contains("✓ approved: approval beta/1")
	if got := pyExec(t, paths[1], "print(db.execute('SELECT resolved FROM pending_approvals WHERE id = 1').fetchone()[0])"); got != "approve" {
		t.Errorf("beta's file holds %q; want approve", got)
	}
	if got := pyExec(t, paths[0], "print(db.execute('SELECT resolved FROM pending_approvals WHERE id = 1').fetchone()[0])"); got != "None" {
		t.Errorf("alpha's file holds %q for its own approval 1; want it undecided", got)
	}
	d.refresh()
	d.lacks("approval beta/1  write")
	d.contains("approval alpha/1")
}

// One store gone: it alone is marked offline (its rows stay, marked), the
// other keeps tailing; put back, it is read again and online.
func TestSeveralStoresOneOffline(t *testing.T) {
	d, set, paths := severalDriver(t, 120, 32)
	w, err := set.Wakeups()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	keep := filepath.Join(t.TempDir(), "beta.sqlite3")
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Rename(paths[1]+suf, keep+suf)
	}
	waitStore := func(offline bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for (set.Stores()[1].Offline != "") != offline {
			if time.Now().After(deadline) {
				t.Fatalf("beta offline=%v never came: %+v", offline, set.Stores())
			}
			select {
			case <-w.C():
				w.Ack(true)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitStore(true)
	// Marked at once, with nothing written anywhere and no tick yet.
	d.refresh()
	if row := runsRow(d.screen(), "old ship beta"); !strings.Contains(row, "✕ beta") {
		t.Errorf("beta's row %q: not marked offline before the tick", row)
	}
	pyExec(t, paths[0], `db.execute("INSERT INTO runs (goal, file, status) VALUES ('more alpha', 'f', 'running')")`)
	d.refresh()
	d.send(tickMsg(d.clock))
	d.contains("more alpha", "ship beta", "beta offline: store gone")
	if row := runsRow(d.screen(), "old ship beta"); !strings.Contains(row, "✕ beta") {
		t.Errorf("beta's row %q: want its store cell marked offline", row)
	}
	d.lacks("NOT CURRENT")
	if row := runsRow(d.screen(), "build alpha"); strings.Contains(row, "✕") {
		t.Errorf("alpha's row %q is marked offline", row)
	}
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Rename(keep+suf, paths[1]+suf)
	}
	waitStore(false)
	d.refresh()
	// beta alone is read again, and said for a moment.
	d.contains("more alpha", "ship beta", "beta read whole again")
	d.advance(6 * time.Second)
	d.send(tickMsg(d.clock))
	d.contains("more alpha", "ship beta", "2 stores")
	d.lacks("offline", "✕ beta")
}

// runsRow is the runs pane's row (the left column's part of the line)
// whose goal holds s.
func runsRow(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		left, _, _ := strings.Cut(l, "││")
		if strings.HasPrefix(left, "│") && strings.Contains(left, " "+s+" ") {
			return left
		}
	}
	return ""
}
