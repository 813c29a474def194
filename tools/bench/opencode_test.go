package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/opencode"
)

// The opencode history is built small here (the bench builds it at size
// once) and read back by the sqlite3 CLI and by vigil: opencode's own
// tables, each session its hour and its numbered title, fresh ids that
// sort as the rows were made, every reference inside the rows' JSON
// pointing at a row of the same copy, the big sessions grown, and vigil
// listing the newest session first with its steps all there.
func TestOpencodeHistoryIsBuiltAsSaid(t *testing.T) {
	sqlite := testkit.Tool(t, "sqlite3", "the history is read back by C SQLite")
	testkit.Fixtures(t, "agents/opencode")
	h := ocHistory{Sessions: 6, Big: 2, Bytes: 16 << 10, BigBytes: 400 << 10}
	path, err := opencodePath(t.TempDir(), h, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	q := func(sql string) string {
		out, err := exec.Command(sqlite, "-readonly", path, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	mod, _ := moduleRoot()
	ddl, _ := os.ReadFile(filepath.Join(mod, opencodeSchema))
	if got := q("SELECT COUNT(*) FROM sqlite_master WHERE sql IS NOT NULL"); got != fmt.Sprint(strings.Count(string(ddl), "CREATE ")) {
		t.Errorf("%s tables and indexes; opencode's DDL makes %d", got, strings.Count(string(ddl), "CREATE "))
	}
	// bigSessions(6, 2): 5 among the newest, 4 spread over the history.
	big := bigSessions(h.Sessions, h.Big)
	want := map[string]string{
		"PRAGMA journal_mode":                                                   "wal",
		"SELECT COUNT(*) FROM session":                                          "12",
		"SELECT COUNT(*) FROM session WHERE parent_id IS NULL":                  "6",
		"SELECT COUNT(*) FROM session WHERE title LIKE 'session %: Mock title'": "6",
		"SELECT COUNT(*) FROM session c JOIN session p ON c.parent_id = p.id":   "6",
		// Every message's session and every part's message is in the file.
		"SELECT COUNT(*) FROM message WHERE session_id NOT IN (SELECT id FROM session)":                        "0",
		"SELECT COUNT(*) FROM part p JOIN message m ON m.id = p.message_id WHERE m.session_id != p.session_id": "0",
		"SELECT COUNT(*) FROM part WHERE message_id NOT IN (SELECT id FROM message)":                           "0",
		// A reply's parentID is its session's prompt; a task's sub-agent is its session's child.
		"SELECT COUNT(*) FROM message m WHERE json_extract(m.data, '$.role') = 'assistant' AND json_extract(m.data, '$.parentID') NOT IN (SELECT id FROM message u WHERE u.session_id = m.session_id AND json_extract(u.data, '$.role') = 'user')": "0",
		"SELECT COUNT(*) FROM part p WHERE json_extract(p.data, '$.tool') = 'task' AND json_extract(p.data, '$.state.metadata.sessionId') NOT IN (SELECT id FROM session c WHERE c.parent_id = p.session_id)":                                      "0",
		// Each session within its own hour, ids and rowids in the order of time.
		"SELECT COUNT(*) FROM session WHERE time_created / 3600000 != time_updated / 3600000":                                                                         "0",
		"SELECT COUNT(*) FROM part p JOIN session s ON s.id = p.session_id WHERE p.time_created / 3600000 != s.time_created / 3600000":                                "0",
		"SELECT COUNT(*) FROM message a JOIN message b ON b.rowid = a.rowid + 1 AND a.session_id = b.session_id WHERE b.time_created < a.time_created OR b.id < a.id": "0",
		"SELECT COUNT(*) FROM part a JOIN part b ON b.rowid = a.rowid + 1 AND a.message_id = b.message_id WHERE b.time_created < a.time_created OR b.id < a.id":       "0",
		"SELECT COUNT(*) FROM session a JOIN session b ON b.rowid = a.rowid + 2 WHERE b.id > a.id OR b.time_created - a.time_created != 3600000":                      "0",
		"SELECT COUNT(*) FROM message WHERE data LIKE '%2425c%' OR data LIKE '%dbda38%' OR data LIKE '%179640%'":                                                      "0",
	}
	for sql, v := range want {
		if got := q(sql); got != v {
			t.Errorf("%s = %s, want %s", sql, got, v)
		}
	}
	size := func(n int) int64 {
		var b int64
		fmt.Sscan(q(fmt.Sprintf(`SELECT SUM(length(m.data) + 300 + (SELECT COALESCE(SUM(length(data) + 300), 0) FROM part WHERE message_id = m.id))
			FROM message m JOIN session s ON s.id = m.session_id WHERE s.title LIKE 'session %d: %%' OR s.parent_id IN (SELECT id FROM session WHERE title LIKE 'session %d: %%')`, n, n)), &b)
		return b
	}
	for n := 1; n <= h.Sessions; n++ {
		got, goal := size(n), h.Bytes
		if big[n] {
			goal = h.BigBytes
		}
		if got < goal || got > goal+goal/5 {
			t.Errorf("session %d takes %d bytes, want about %d", n, got, goal)
		}
	}

	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 12 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	var roots int
	for _, r := range runs {
		if r.ParentID != "" {
			continue
		}
		roots++
		var n int
		fmt.Sscanf(r.Goal, "session %d: ", &n)
		if want := historyStart.Add(time.Duration(n) * time.Hour); !r.StartedAt.Equal(want) {
			t.Errorf("%s started %s, want %s", r.Goal, r.StartedAt, want)
		}
		if r.Status != store.StatusCompleted || r.Summary == nil {
			t.Errorf("%s: %s %+v", r.Goal, r.Status, r.Summary)
		}
		// The real run's root timeline, once for each copy of its turns,
		// numbered in order.
		steps, err := src.Steps(ctx, r.ID)
		if err != nil || len(steps) != r.Steps*3/2 || r.Steps < 2 || steps[len(steps)-1].Number != r.Steps {
			t.Fatalf("%s: %d rows read, %d steps counted: %v", r.Goal, len(steps), r.Steps, err)
		}
		for i, s := range steps {
			if want := []string{"calls task", "result task", "All done after 1 tool call(s)."}[i%3]; s.Decision != want || s.Number != i/3*2+1+i%3/2 {
				t.Fatalf("%s: row %d is step %d %q, want %q", r.Goal, i, s.Number, s.Decision, want)
			}
		}
	}
	if roots != 6 {
		t.Errorf("%d roots", roots)
	}
}

// The live appender writes one more model call of the newest session into
// a copy of the history after a new prompt, in a transaction per call:
// the sqlite3 CLI reads opencode's rows, vigil a tail that sees each
// step's command and output, and the session as running.
func TestOpencodeAppenderWritesAStep(t *testing.T) {
	sqlite := testkit.Tool(t, "sqlite3", "the appended rows are read back by C SQLite")
	testkit.Tool(t, "python3", "the appender is python3's sqlite3")
	testkit.Fixtures(t, "agents/opencode")
	h := ocHistory{Sessions: 3, Big: 0, Bytes: 16 << 10}
	dir := t.TempDir()
	cached, err := opencodePath(dir, h, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	path, err := copyStore(&config{work: dir}, cached, "live.db")
	if err != nil {
		t.Fatal(err)
	}
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := startOcAppender(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	before, err := src.Steps(ctx, w.Session)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		at, err := w.step(fmt.Sprintf("live step %d", i))
		if err != nil || time.Since(at) > time.Minute || at.After(time.Now()) {
			t.Fatalf("step %d: committed at %s, %v", i, at, err)
		}
	}
	q := func(sql string) string {
		out, err := exec.Command(sqlite, "-readonly", path, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	want := map[string]string{
		"SELECT title FROM session WHERE id = '" + w.Session + "'": "session 3: Mock title",
		"SELECT group_concat(json_extract(data, '$.type'), ',') FROM (SELECT data FROM part WHERE session_id = '" + w.Session + "' ORDER BY rowid DESC LIMIT 3)": "step-finish,tool,step-start",
		"SELECT COUNT(*) FROM message WHERE json_extract(data, '$.parentID') NOT IN (SELECT id FROM message)":                                                    "0",
	}
	for sql, v := range want {
		if got := q(sql); got != v {
			t.Errorf("%s = %s, want %s", sql, got, v)
		}
	}
	ch, _, err := src.Changes(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range ch.Steps {
		got = append(got, r.Decision+" "+r.ToolCall+" "+r.ResultHead)
	}
	if g := strings.Join(got, "|"); !strings.Contains(g, "echo live step 1") || !strings.Contains(g, "echo live step 2") || len(got) != 4 {
		t.Errorf("a tail read %q", got)
	}
	after, err := src.Steps(ctx, w.Session)
	if err != nil || len(after) != len(before)+4 || after[len(after)-1].ResultHead != "live step 2" {
		t.Fatalf("the timeline after: %d rows (was %d), %+v %v", len(after), len(before), after[len(after)-1], err)
	}
	runs, err := src.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == w.Session && r.Status != store.StatusRunning {
			t.Errorf("the session after: %s, %d steps", r.Status, r.Steps)
		}
	}
	// The cached history is left as it was.
	if out, _ := exec.Command(sqlite, "-readonly", cached, "SELECT COUNT(*) FROM part WHERE data LIKE '%live step%'").Output(); strings.TrimSpace(string(out)) != "0" {
		t.Errorf("the cached history was written: %s", out)
	}
}
