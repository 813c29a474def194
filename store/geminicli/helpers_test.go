package geminicli_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/geminicli"
)

// fixtures is the directory of the chat files Gemini CLI wrote here:
// fixtures/agents/gemini-cli under $VIGIL_SHARED, or under the shared
// directory beside the clone. Without it, Need (a failure with CI set).
func fixtures(t *testing.T) string {
	t.Helper()
	return testkit.Fixtures(t, "agents/gemini-cli/chats")
}

const (
	mainID  = "cc39e4e9-61b8-41c5-a378-5811c6e09b05"
	subID   = "f52fe685-56b9-4919-ac50-8e15d49ba6a1"
	stepsID = "52f24ebd-9acb-4c90-9fe4-af37c29da39e"
)

// project lays the fixtures out as the CLI keeps them: a project directory
// holding chats/, sessions in it, the sub-agent under its session's id.
func project(t *testing.T) (root, mainFile, stepsFile, subFile string) {
	t.Helper()
	fx := fixtures(t)
	root = filepath.Join(t.TempDir(), "gemini")
	chats := filepath.Join(root, "chats")
	mainFile = filepath.Join(chats, "session-2026-12-04T18-39-cc39e4e9.jsonl")
	stepsFile = filepath.Join(chats, "session-2026-12-04T18-39-52f24ebd.jsonl")
	subFile = filepath.Join(chats, mainID, subID+".jsonl")
	copyFile(t, filepath.Join(fx, "main-session-2026-12-04T18-39-cc39e4e9.jsonl"), mainFile)
	copyFile(t, filepath.Join(fx, "steps3-gated-session-2026-12-04T18-39-52f24ebd.jsonl"), stepsFile)
	copyFile(t, filepath.Join(fx, "subagent", subID+".jsonl"), subFile)
	if err := os.WriteFile(filepath.Join(root, ".project_root"), []byte("/home/dev/work/gemini"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, mainFile, stepsFile, subFile
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string) store.Source {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if src.Format() != "gemini-cli" {
		t.Fatalf("%s opened as %s", path, src.Format())
	}
	return src
}

func runsByID(t *testing.T, src store.Source) map[string]store.Run {
	t.Helper()
	runs, err := src.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Run{}
	for _, r := range runs {
		out[r.ID] = r
	}
	return out
}

func details(t *testing.T, src store.Source, runID string) []store.StepDetail {
	t.Helper()
	ctx := context.Background()
	steps, err := src.Steps(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.StepDetail
	for _, s := range steps {
		d, err := src.StepDetail(ctx, runID, s.RowID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}
