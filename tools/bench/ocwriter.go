package main

import (
	"fmt"
	"strconv"
	"time"
)

// ocAppender is another process writing an opencode database through C
// SQLite (python3's sqlite3, held open) as opencode runs its newest
// session again: a new prompt first (the session runs), then one model
// call at a time, each the assistant message answering the prompt with
// its step-start, bash tool and step-finish parts, in one transaction.
// It says when each commit returned, by the wall clock this process reads
// too.
type ocAppender struct {
	*pyWriter
	Session string // the newest session, which it writes to
}

// ocAppendPy writes ids in opencode's shape (Identifier.ascending: 12 hex
// digits of the time in ms ·4096 plus a counter, then 14 base62
// characters) and the messages and parts as opencode's session processor
// leaves a prompt and a finished step that called a tool
// (MessageV2.User, TextPart, MessageV2.Assistant, StepStartPart, ToolPart,
// StepFinishPart).
const ocAppendPy = `import json, random, sqlite3, string, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("PRAGMA busy_timeout=10000")
sid, = db.execute("SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created DESC, id DESC LIMIT 1").fetchone()
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
def insert(table, row):
    db.execute("INSERT INTO %s (%s) VALUES (%s)" % (table, ", ".join(row), ", ".join("?" * len(row))), list(row.values()))
# A new prompt: the session runs again.
prompt, t = ident("msg")
db.execute("BEGIN IMMEDIATE")
insert("message", {"id": prompt, "session_id": sid, "time_created": t, "time_updated": t,
    "data": js({"role": "user", "time": {"created": t}, "agent": "build", "model": {"providerID": "mock", "modelID": "mock-model"}})})
pid, pt = ident("prt")
insert("part", {"id": pid, "message_id": prompt, "session_id": sid, "time_created": pt, "time_updated": pt,
    "data": js({"type": "text", "text": "Go on, one shell command at a time."})})
db.execute("COMMIT")
print(sid, flush=True)
for n, line in enumerate(sys.stdin):
    text = line.rstrip("\n")
    mid, t = ident("msg")
    tokens = {"total": 1230, "input": 1200, "output": 30, "reasoning": 0, "cache": {"write": 0, "read": 0}}
    msg = {"parentID": prompt, "role": "assistant", "mode": "build", "agent": "build", "path": {"cwd": cwd, "root": cwd},
           "cost": 0, "tokens": tokens, "modelID": "mock-model", "providerID": "mock",
           "time": {"created": t, "completed": t + 4}, "finish": "tool-calls"}
    parts = [{"type": "step-start", "snapshot": "3457c0ee355c71457ad96c754e8e3ba4a3283912"},
             {"type": "tool", "tool": "bash", "callID": "call_live%04d" % n,
              "state": {"status": "completed", "input": {"command": "echo " + text, "description": "live step"},
                        "output": text + "\n", "title": "echo " + text, "metadata": {"exit": 0}, "time": {"start": t + 1, "end": t + 2}}},
             {"type": "step-finish", "reason": "tool-calls", "snapshot": "3457c0ee355c71457ad96c754e8e3ba4a3283912", "tokens": tokens, "cost": 0}]
    db.execute("BEGIN IMMEDIATE")
    insert("message", {"id": mid, "session_id": sid, "time_created": t, "time_updated": t + 4, "data": js(msg)})
    for p in parts:
        pid, pt = ident("prt")
        insert("part", {"id": pid, "message_id": mid, "session_id": sid, "time_created": pt, "time_updated": pt, "data": js(p)})
    db.execute("COMMIT")
    print(time.time_ns(), flush=True)
`

// startOcAppender starts the writer on the database at path.
func startOcAppender(path string) (*ocAppender, error) {
	py, session, err := startPy(ocAppendPy, path)
	if err != nil {
		return nil, fmt.Errorf("the opencode writer found no session in %s: %w", path, err)
	}
	return &ocAppender{py, session}, nil
}

// step commits one model call that ran "echo text" (text one line) and
// returns when the commit returned in the writer.
func (w *ocAppender) step(text string) (time.Time, error) { return w.commit(text) }

// opencodeLive times a model call committed to the newest session of a
// copy of the history to its row on screen (lineToScreen), the explorer
// showing that session.
func opencodeLive(c *config, t *term, cached string, h ocHistory) (row, error) {
	path, err := copyStore(c, cached, "opencode-live.db")
	if err != nil {
		return row{}, err
	}
	w, err := startOcAppender(path)
	if err != nil {
		return row{}, err
	}
	defer w.close()
	// Every session listed: the explorer has read the rest after its first
	// page (changes wait for it), and follows the session: it runs.
	return lineToScreen(c, t, h.String(), []string{"--store", path, "--run", w.Session}, fmt.Sprintf("%s runs", commas(h.Sessions)),
		func(i int) (string, time.Time, error) {
			marker := fmt.Sprintf("mark%04d", i) // short: the timeline row shows it whole
			at, err := w.step(marker)
			return marker, at, err
		})
}

// commas writes 2000 as "2,000", as the runs pane counts.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
