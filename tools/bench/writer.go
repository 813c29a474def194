package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// foreignWriter is another process writing the store through C SQLite
// (python3's sqlite3), the way io-harness commits a step: the step row,
// its context sample and the lease's renewal in one transaction. It says when each commit returned,
// by the wall clock this process reads too.
type foreignWriter struct{ *pyWriter }

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
	py, _, err := startPy(writerPy, path, strconv.Itoa(run))
	if err != nil {
		return nil, fmt.Errorf("the writer could not take the lease of run %d: %w", run, err)
	}
	return &foreignWriter{py}, nil
}

// steps commits n steps of run from step first in one transaction (each
// decision text, when given, is text) and returns when the commit
// returned in the writer.
func (w *foreignWriter) steps(run, first, n int, text string) (time.Time, error) {
	return w.commit(fmt.Sprintf("step %d %d %d %s", run, first, n, text))
}

// pyWriter is a python3 process writing with its sqlite3 module (C
// SQLite), held open on pipes: its first line says it is ready, and each
// line sent is one commit, answered with the time (ns) its COMMIT
// returned.
type pyWriter struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startPy starts script with args and returns its first line.
func startPy(script string, args ...string) (*pyWriter, string, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, "", fmt.Errorf("the foreign writer is python3's sqlite3 (C SQLite), and python3 is not installed")
	}
	w := &pyWriter{cmd: exec.Command(py, append([]string{"-c", script}, args...)...)}
	w.cmd.Stderr = os.Stderr
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		return nil, "", err
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	w.out = bufio.NewReader(out)
	if err := w.cmd.Start(); err != nil {
		return nil, "", err
	}
	first, err := w.out.ReadString('\n')
	if err != nil {
		w.close()
		return nil, "", fmt.Errorf("it stopped before it was ready")
	}
	return w, strings.TrimSpace(first), nil
}

// commit sends one line and returns when the commit it asks for returned.
func (w *pyWriter) commit(line string) (time.Time, error) {
	if _, err := fmt.Fprintln(w.in, line); err != nil {
		return time.Time{}, err
	}
	reply, err := w.out.ReadString('\n')
	if err != nil {
		return time.Time{}, fmt.Errorf("the writer stopped: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(reply), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the writer said %q", reply)
	}
	return time.Unix(0, ns), nil
}

func (w *pyWriter) close() {
	w.in.Close()
	w.cmd.Wait()
}
