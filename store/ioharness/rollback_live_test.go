package ioharness

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// rollbackWriter is a C-SQLite harness on a rollback-journal (DELETE mode)
// store: one run, then steps of 3 KB committed one transaction each, as
// fast as it can, so the file grows on every commit. It prints "ready"
// once the run is in, "done" after its last step.
const rollbackWriter = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=5, isolation_level=None)
c.executescript(sys.argv[2])
c.execute("INSERT INTO runs(goal, file, status) VALUES ('rollback', 'f', 'running')")
print("ready", flush=True)
for s in range(1, int(sys.argv[3]) + 1):
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO steps(run_id, step, decision, result, tokens) VALUES (1, ?, 'step', ?, 5)", (s, "x" * 3000))
    c.execute("COMMIT")
    time.sleep(0.002)
print("done", flush=True)
c.close()
`

// A rollback-journal writer commits by writing the new page 1 among the
// others, and a header or schema read on a connection that takes no lock
// can land in the middle: "truncated" or "malformed" for a store that is
// neither. Opening and following such a store while it is written must
// never call it damaged (docs/tailing.md: DELETE mode works, slowly).
func TestALiveRollbackStoreIsNeverCalledDamaged(t *testing.T) {
	py := foreign.Python(t)
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	cmd := exec.Command(py.Bin(), "-c", rollbackWriter, path, schema.SQL, "600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the writer did not start: %q", lines.Text())
	}
	done := make(chan struct{})
	go func() {
		for lines.Scan() {
		}
		close(done)
	}()
	ctx := context.Background()
	var failures []string
	opens := 0
	for writing := true; writing; {
		select {
		case <-done:
			writing = false
		default:
		}
		for i := 0; i < 20; i++ { // the preflight alone: its header read takes no lock
			if _, _, err := checkStoreFile(path); err != nil {
				failures = append(failures, "preflight: "+err.Error())
			}
		}
		s, err := Open(path) // the preflight, then a browsing connection
		if err != nil {
			failures = append(failures, "open: "+err.Error())
			continue
		}
		opens++
		cur, err := s.Head(ctx)
		for i := 0; err == nil && i < 20; i++ {
			_, cur, err = s.Changes(ctx, cur) // each commit changes the file: the connection is replaced
		}
		if err != nil {
			failures = append(failures, "follow: "+err.Error())
		}
		s.Close()
	}
	if len(failures) > 0 {
		t.Fatalf("%d of %d opens failed while the store was written; first: %s", len(failures), opens+len(failures), failures[0])
	}
	if n := py.MustExec(t, path, "SELECT count(*) FROM steps"); n != "600" {
		t.Fatalf("the writer committed %s steps", n)
	}
	if !strings.Contains(py.MustExec(t, path, "PRAGMA journal_mode"), "delete") {
		t.Fatal("the store left DELETE mode")
	}
	t.Logf("%d opens, each after 20 preflights and followed for 20 refreshes, while 600 commits went in", opens)
}
