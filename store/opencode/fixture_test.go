package opencode_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/opencode"
)

// fixtures is /work/shared/fixtures/agents/opencode: $VIGIL_SHARED, or
// the shared directory beside the clone; Need when it is missing.
func fixtures(t *testing.T) string {
	t.Helper()
	return testkit.Fixtures(t, "agents/opencode")
}

// foreign runs testdata/writer.py: another process writing the database
// as opencode does (WAL, one transaction per change).
func foreign(t *testing.T, db string, sql string, args ...string) {
	t.Helper()
	py := testkit.Tool(t, "python3", "the tests' foreign writer is Python's sqlite3")
	cmd := exec.Command(py, append([]string{"testdata/writer.py", db}, args...)...)
	cmd.Stdin = strings.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer.py %v: %v\n%s", args, err, out)
	}
}

// fixtureDB is the db-export of a real opencode 1.18.33 sub-agent run
// loaded into opencode's own DDL (testdata/schema-1.18.33.sql, as that
// version created it) by a foreign writer.
func fixtureDB(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "opencode.db")
	foreign(t, db, "", "load", "testdata/schema-1.18.33.sql", filepath.Join(fixtures(t), "db-export", "subagent-run.jsonl"))
	return db
}

const (
	rootID  = "ses_dbda38b68ffeqdXAxlwChnNJRC"
	childID = "ses_dbda38010ffeY49mQmq71e7uPa"
)

func TestFixtureSubAgentRun(t *testing.T) {
	src, err := store.Open(fixtureDB(t), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v %v", runs, err)
	}
	root, child := runs[0], runs[1]
	if root.ID != rootID || child.ID != childID || child.ParentID != rootID || child.Depth != 1 || root.Goal != "Mock title" ||
		root.Workspace != "/home/dev/work/opencode" || root.Provider != "mock" {
		t.Fatalf("tree: %+v / %+v", root, child)
	}
	// Both finished with finish "stop" (setStatus); tokens are the
	// session columns put back together: 1200+30 and 1300+30.
	for _, r := range runs {
		if r.Status != store.StatusCompleted || r.Outcome != store.OutcomeFinished || r.Summary == nil ||
			r.Summary.Steps != 2 || r.Tokens != 2560 || !r.Summary.HasDuration {
			t.Errorf("run %s: %+v summary %+v", r.ID, r, r.Summary)
		}
	}
	steps, err := src.Steps(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, s.Decision)
	}
	if want := "calls task|result task|All done after 1 tool call(s)."; strings.Join(got, "|") != want {
		t.Errorf("root timeline %q, want %q", strings.Join(got, "|"), want)
	}
	if steps[0].Number != 1 || steps[1].Number != 1 || steps[2].Number != 2 || steps[0].Tokens != 1230 ||
		!strings.HasPrefix(steps[0].ToolCall, "task {") || !strings.Contains(steps[1].ResultHead, childID) {
		t.Errorf("root rows %+v", steps)
	}
	d, err := src.StepDetail(ctx, rootID, steps[0].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Prompt != "Delegate to a sub-agent. [[mock:sub,delay=1]]" || len(d.Tools) != 1 || d.Tools[0].ID != "call_mock0030" ||
		!strings.Contains(d.Result, "All done after 1 tool call(s).") || len(d.ProviderCalls) != 1 {
		t.Errorf("turn detail %+v", d)
	}
	cs, err := src.Steps(ctx, childID)
	if err != nil || len(cs) != 3 || cs[1].Decision != "result bash" || cs[1].ResultHead != "from sub" {
		t.Fatalf("child timeline %+v %v", cs, err)
	}
	calls, err := src.ProviderCalls(ctx, childID)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %+v %v", calls, err)
	}
	if *calls[0].PromptTokens != 1200 || *calls[0].CompletionTokens != 30 || *calls[0].TotalTokens != 1230 ||
		*calls[1].PromptTokens != 1300 || calls[0].FinishReason != "tool-calls" || calls[1].FinishReason != "stop" ||
		calls[0].Model != "mock-model" || calls[0].LatencyMS <= 0 {
		t.Errorf("child provider calls %+v", calls)
	}
	samples, err := src.ContextSamples(ctx, childID)
	if err != nil || len(samples) != 2 || !samples[0].NoEstimate || *samples[1].Reported != 1300 {
		t.Errorf("context samples %+v %v", samples, err)
	}
	ev, err := src.AgentEvents(ctx)
	if err != nil || len(ev) != 1 || ev[0].RunID != rootID || ev[0].ChildRunID != childID {
		t.Errorf("agent events %+v %v", ev, err)
	}
	// Opened read-only: decisions on opencode's permissions are refused.
	if ro, why := src.ReadOnly(); !ro || why != opencode.ReadOnlyReason {
		t.Errorf("read-only %v %q", ro, why)
	}
	if _, err := src.Decide(ctx, store.Decision{}); err == nil {
		t.Error("Decide wrote")
	}
	if len(src.Problems()) != 0 {
		t.Errorf("problems %v", src.Problems())
	}
}

func TestDefaultPaths(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	get := func(k string) string { return env[k] }
	if p := opencode.DefaultPaths(get); len(p) != 1 || p[0] != "/h/.local/share/opencode/opencode.db" {
		t.Errorf("HOME: %v", p)
	}
	env["XDG_DATA_HOME"] = "/x"
	if p := opencode.DefaultPaths(get); len(p) != 1 || p[0] != "/x/opencode/opencode.db" {
		t.Errorf("XDG_DATA_HOME: %v", p)
	}
}

// TestRefusals: a file that is not opencode's is refused in one line and
// left as it was; one whose tables lack a column vigil reads is refused
// as a version vigil does not read.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(junk, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if opencode.Detect(junk) {
		t.Error("a text file detected as opencode")
	}
	if _, err := opencode.Open(junk); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a text file: %v", err)
	}
	old := filepath.Join(dir, "old.db")
	foreign(t, old, `CREATE TABLE session (id text PRIMARY KEY, title text);
CREATE TABLE message (id text PRIMARY KEY, session_id text, data text);
CREATE TABLE part (id text PRIMARY KEY, message_id text, data text);`, "exec")
	if !opencode.Detect(old) {
		t.Error("opencode's table names not detected")
	}
	_, err := opencode.Open(old)
	if !errors.Is(err, store.ErrUnsupported) || !strings.Contains(err.Error(), "opencode table session has no") {
		t.Errorf("tables without vigil's columns: %v", err)
	}
	if fi, err := os.ReadDir(dir); err != nil || len(fi) != 2 {
		t.Errorf("files beside the refused ones: %v %v", fi, err)
	}
}
