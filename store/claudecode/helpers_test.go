package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
)

// fixtures is /work/shared/fixtures/agents/claude-code (../shared beside
// the clone, or $VIGIL_SHARED); without it, Need.
func fixtures(t *testing.T) string {
	t.Helper()
	return testkit.Fixtures(t, "agents/claude-code")
}

// fixtureStore lays the fixture transcript out as Claude Code does under a
// config directory and returns that directory and the session id.
func fixtureStore(t *testing.T) (string, string) {
	t.Helper()
	src := fixtures(t)
	const sid = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b"
	cfg := filepath.Join(t.TempDir(), ".claude")
	proj := filepath.Join(cfg, "projects", "-home-dev-work-claude")
	sub := filepath.Join(proj, sid, "subagents")
	must(t, os.MkdirAll(sub, 0o755))
	copyFile(t, filepath.Join(src, "transcript", "main-session.jsonl"), filepath.Join(proj, sid+".jsonl"))
	for _, n := range []string{"agent-adacfd069ace754ac.jsonl", "agent-adacfd069ace754ac.meta.json"} {
		copyFile(t, filepath.Join(src, "transcript", "subagents", n), filepath.Join(sub, n))
	}
	return cfg, sid
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string) store.Source {
	t.Helper()
	src, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if src.Format() != Format {
		t.Fatalf("%s opened as %s", path, src.Format())
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func runsByID(t *testing.T, src store.Source) map[string]store.Run {
	t.Helper()
	runs, err := src.Runs(context.Background())
	must(t, err)
	out := map[string]store.Run{}
	for _, r := range runs {
		out[r.ID] = r
	}
	return out
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(s), 0o644))
}
