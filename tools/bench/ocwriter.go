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

// ocAppender is another process writing an opencode database through C
// SQLite (python3's sqlite3, held open), as opencode writes one more model
// call of a session: the assistant message answering the session's last
// prompt, its step-start, text and step-finish parts, in one transaction.
// It says when each commit returned, by the wall clock this process reads
// too.
type ocAppender struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	Session string // the newest session, which it writes to
}

// ocAppendPy writes ids in opencode's shape (Identifier.ascending: 12 hex
// digits of the time in ms ·4096 plus a counter, then 14 base62
// characters) and the message and parts as opencode's session processor
// leaves a finished text-only step (MessageV2.Assistant, StepStartPart,
// TextPart, StepFinishPart).
const ocAppendPy = `import json, random, sqlite3, string, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("PRAGMA busy_timeout=10000")
sid, = db.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created DESC, id DESC LIMIT 1").fetchone()
prompt, = db.execute("SELECT id FROM message WHERE session_id = ? AND json_extract(data, '$.role') = 'user' ORDER BY time_created DESC, id DESC LIMIT 1", (sid,)).fetchone()
cwd, = db.execute("SELECT directory FROM session WHERE id = ?", (sid,)).fetchone()
last, counter = 0, 0
def ident(prefix):
    global last, counter
    now = int(time.time() * 1000)
    counter = counter + 1 if now == last else 1
    last = now
    v = (now * 0x1000 + counter) & 0xFFFFFFFFFFFF
    tail = "".join(random.choice(string.digits + string.ascii_letters) for _ in range(14))
    return "%s_%012x%s" % (prefix, v, tail), now
def js(v):
    return json.dumps(v, separators=(",", ":"))
print(sid, flush=True)
for line in sys.stdin:
    text = line.rstrip("\n")
    mid, t = ident("msg")
    tokens = {"total": 1330, "input": 1300, "output": 30, "reasoning": 0, "cache": {"write": 0, "read": 0}}
    msg = {"parentID": prompt, "role": "assistant", "mode": "build", "agent": "build", "path": {"cwd": cwd, "root": cwd},
           "cost": 0, "tokens": tokens, "modelID": "mock-model", "providerID": "mock",
           "time": {"created": t, "completed": t + 3}, "finish": "stop"}
    parts = [{"type": "step-start", "snapshot": "3457c0ee355c71457ad96c754e8e3ba4a3283912"},
             {"type": "text", "text": text, "time": {"start": t + 1, "end": t + 2}},
             {"type": "step-finish", "reason": "stop", "snapshot": "3457c0ee355c71457ad96c754e8e3ba4a3283912", "tokens": tokens, "cost": 0}]
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?)", (mid, sid, t, t + 3, js(msg)))
    for p in parts:
        pid, pt = ident("prt")
        db.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?,?)", (pid, mid, sid, pt, pt, js(p)))
    db.execute("COMMIT")
    print(time.time_ns(), flush=True)
`

// startOcAppender starts the writer on the database at path.
func startOcAppender(path string) (*ocAppender, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("the foreign writer is python3's sqlite3 (C SQLite), and python3 is not installed")
	}
	w := &ocAppender{cmd: exec.Command(py, "-c", ocAppendPy, path)}
	w.cmd.Stderr = os.Stderr
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
	line, err := w.out.ReadString('\n')
	if err != nil {
		w.close()
		return nil, fmt.Errorf("the opencode writer found no session in %s", path)
	}
	w.Session = strings.TrimSpace(line)
	return w, nil
}

// step commits one model call whose reply is text (one line) and returns
// when the commit returned in the writer.
func (w *ocAppender) step(text string) (time.Time, error) {
	if _, err := fmt.Fprintln(w.in, text); err != nil {
		return time.Time{}, err
	}
	line, err := w.out.ReadString('\n')
	if err != nil {
		return time.Time{}, fmt.Errorf("the opencode writer stopped: %v", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the opencode writer said %q", line)
	}
	return time.Unix(0, ns), nil
}

func (w *ocAppender) close() {
	w.in.Close()
	w.cmd.Wait()
}

// copyFile copies a database that no process has open (the cached
// history) for a run that writes to it.
func copyFile(from, to string) error {
	cmd := exec.Command("cp", "--reflink=auto", from, to)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("copying %s: %v: %s", from, err, out)
	}
	return nil
}
