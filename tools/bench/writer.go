package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// foreignWriter is another process writing the store through C SQLite
// (python3's sqlite3), the way io-harness commits a step: the step row,
// its context sample and the lease's renewal in one transaction. It says when each commit returned,
// by the wall clock this process reads too.
type foreignWriter struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

const writerPy = `import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("PRAGMA busy_timeout=10000")
result = "[read src/file.rs] " + "x" * 120
# The run is driven: its lease is taken first and renewed in every step commit.
db.execute("INSERT OR REPLACE INTO run_leases (run_id, owner, generation, ttl_secs) VALUES (?, 'bench-writer', 1, 30)", (int(sys.argv[2]),))
print(time.time_ns(), flush=True)
for line in sys.stdin:
    f = line.split()
    run, first, n = int(f[1]), int(f[2]), int(f[3])
    text = f[4] if len(f) > 4 else None
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE run_leases SET renewed_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE run_id = ?", (run,))
    for k in range(first, first + n):
        d = text if text else "read src/file%d.rs" % (k % 50)
        db.execute("INSERT INTO steps (run_id, step, decision, result, prompt, tool_call, tokens) VALUES (?,?,?,?,?,?,?)",
                   (run, k, d, result, "Goal: bench", 'read_file:{"path":"src/file.rs"}', 300))
        db.execute("INSERT INTO context_events (run_id, step, kind, detail, est_tokens, reported_tokens) VALUES (?,?,'assembled','carried=1',270,300)",
                   (run, k))
    db.execute("COMMIT")
    print(time.time_ns(), flush=True)
`

// startWriter starts the writer, which first takes run's lease.
func startWriter(path string, run int) (*foreignWriter, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("the foreign writer is python3's sqlite3 (C SQLite), and python3 is not installed")
	}
	w := &foreignWriter{cmd: exec.Command(py, "-c", writerPy, path, strconv.Itoa(run))}
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.out = bufio.NewReader(out)
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	if _, err := w.out.ReadString('\n'); err != nil {
		w.close()
		return nil, fmt.Errorf("the writer could not take the lease of run %d", run)
	}
	return w, nil
}

// steps commits n steps of run from step first in one transaction (each
// decision text, when given, is text) and returns when the commit
// returned in the writer.
func (w *foreignWriter) steps(run, first, n int, text string) (time.Time, error) {
	if _, err := fmt.Fprintf(w.in, "step %d %d %d %s\n", run, first, n, text); err != nil {
		return time.Time{}, err
	}
	line, err := w.out.ReadString('\n')
	if err != nil {
		return time.Time{}, fmt.Errorf("the writer stopped: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the writer said %q", line)
	}
	return time.Unix(0, ns), nil
}

func (w *foreignWriter) close() {
	w.in.Close()
	w.cmd.Wait()
}
