package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
)

// pyStore is an io-harness store written by python3 from the format's
// schema (the foreign writer): a finished run, and a live run (leased to
// this process) parked on approval 1.
func pyStore(t *testing.T, dir, name, goal string) string {
	t.Helper()
	testkit.Tool(t, "python3", "the foreign writer cannot run")
	path := filepath.Join(dir, name)
	schema, err := filepath.Abs("../store/ioharness/internal/schema/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	script := `import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=5)
db.execute("PRAGMA journal_mode=WAL")
db.executescript(open(sys.argv[2]).read())
db.execute("PRAGMA user_version = 7")
db.execute("INSERT INTO runs (goal, file, status, started_at, outcome) VALUES (?, 'f', 'completed', '2026-12-01T10:00:00Z', 'done')", ("old " + sys.argv[3],))
db.execute("INSERT INTO runs (goal, file, status, started_at) VALUES (?, 'f', 'running', '2026-12-01T11:00:00Z')", (sys.argv[3],))
db.execute("INSERT INTO run_leases (run_id, owner, generation, renewed_at, ttl_secs) VALUES (2, ?, 1, strftime('%Y-%m-%dT%H:%M:%fZ','now'), 3600)", (sys.argv[4] + "-" + str(time.time_ns()) + "-1",))
db.execute("INSERT INTO pending_approvals (run_id, step, act, target, content) VALUES (2, 1, 'write', ?, 'x')", (sys.argv[3] + ".txt",))
db.commit()
`
	if out, err := exec.Command("python3", "-c", script, path, schema, goal, fmt.Sprint(os.Getpid())).CombinedOutput(); err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return path
}

func pyRead(t *testing.T, path, query string) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])", path, query).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// runs, show and approve over two stores named with --store: one list
// with store/id ids (--json carries them), show by store/id, a decision
// routed by its prefix to that store's own file, the other left alone; a
// bare id beside several stores is refused naming the prefixes.
func TestCommandsOnSeveralStores(t *testing.T) {
	dir := t.TempDir()
	alpha := pyStore(t, dir, "alpha.sqlite3", "build alpha")
	beta := pyStore(t, dir, "beta.sqlite3", "build beta")
	h := newHarness(t)
	both := []string{"--store", alpha, "--store", beta}

	r := h.run(append([]string{"runs", "--json"}, both...)...)
	r.wantCode(t, 0)
	var doc struct {
		Runs []struct {
			ID   string `json:"id"`
			Goal string `json:"goal"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, r.stdout)
	}
	got := map[string]string{}
	for _, x := range doc.Runs {
		got[x.ID] = x.Goal
	}
	if got["alpha/2"] != "build alpha" || got["beta/2"] != "build beta" || got["beta/1"] != "old build beta" || len(got) != 4 {
		t.Errorf("runs of both stores by store/id: %v", got)
	}

	r = h.run(append([]string{"runs"}, both...)...)
	r.wantCode(t, 0)
	contains(t, r.stdout, "alpha/2", "beta/2", "build beta")

	r = h.run(append([]string{"show", "beta/2"}, both...)...)
	r.wantCode(t, 0)
	contains(t, r.stdout, "build beta", "beta.txt")

	r = h.run(append([]string{"approve", "1"}, both...)...)
	r.wantCode(t, ExitError)
	contains(t, r.stderr, "alpha/…", "beta/…")

	r = h.run(append([]string{"approve", "beta/1"}, both...)...)
	r.wantCode(t, 0)
	contains(t, r.stdout, "approved approval:beta/1", "beta.txt")
	if v := pyRead(t, beta, "SELECT resolved FROM pending_approvals WHERE id = 1"); v != "approve" {
		t.Errorf("beta's approval 1 holds %q", v)
	}
	if v := pyRead(t, alpha, "SELECT coalesce(resolved, 'undecided') FROM pending_approvals WHERE id = 1"); v != "undecided" {
		t.Errorf("alpha's approval 1 holds %q; want it untouched", v)
	}
	r = h.run(append([]string{"deny", "approval:beta/1"}, both...)...)
	r.wantCode(t, ExitDecision)
	contains(t, r.stderr, "already decided")

	r = h.run("runs", "--store", alpha, "--store", alpha)
	r.wantCode(t, ExitUsage)
	r.oneLine(t, "named twice")

	// The same store spelled another way (a symlink, a hard link, a path
	// through its directory) is the same store: opened twice, each run and
	// request would be listed twice, under two keys.
	dir = filepath.Dir(alpha)
	link, hard := filepath.Join(dir, "link.sqlite3"), filepath.Join(dir, "hard.sqlite3")
	if err := os.Symlink(alpha, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(alpha, hard); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{link, hard, dir + "/./" + filepath.Base(alpha)} {
		r = h.run("runs", "--store", alpha, "--store", other)
		r.wantCode(t, ExitUsage)
		r.oneLine(t, "named twice", "is the same file")
	}
}
