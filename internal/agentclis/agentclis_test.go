package agentclis

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM puts an npm on PATH that runs script (sh), given npm's args.
func fakeNPM(t *testing.T, script string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestInstallRenamesIntoPlaceOnlyWhenNPMSucceeded(t *testing.T) {
	c, _ := Lookup("codex")
	cache := t.TempDir()
	// npm install --prefix DIR …: a failed install leaves nothing.
	fakeNPM(t, `echo "network down" >&2; exit 1`)
	var log bytes.Buffer
	if err := c.Install(context.Background(), cache, &log); err == nil || !strings.Contains(log.String(), "network down") {
		t.Fatalf("a failing npm: err %v, log %q", err, log.String())
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 || c.Installed(cache) {
		t.Fatalf("a failed install left %v", left)
	}
	// An npm that succeeds without installing the command is a failure too.
	fakeNPM(t, `exit 0`)
	if err := c.Install(context.Background(), cache, &log); err == nil {
		t.Fatal("an install without the command passed")
	}
	fakeNPM(t, `bin="$3/node_modules/.bin"; mkdir -p "$bin" && printf '#!/bin/sh\n' > "$bin/codex" && chmod +x "$bin/codex"`)
	if err := c.Install(context.Background(), cache, &log); err != nil || !c.Installed(cache) {
		t.Fatalf("install: %v, installed %v", err, c.Installed(cache))
	}
	if got := c.Path(cache); got != filepath.Join(cache, "codex@"+c.Version, "node_modules", ".bin", "codex") {
		t.Fatalf("path %s", got)
	}
	// Installed: npm is not run again.
	fakeNPM(t, `exit 1`)
	if err := c.Install(context.Background(), cache, &log); err != nil {
		t.Fatalf("a second install ran npm: %v", err)
	}
}

func TestCacheDirHonoursTheEnvironment(t *testing.T) {
	t.Setenv("VIGIL_AGENT_CLIS", "/somewhere")
	if d, err := CacheDir(); err != nil || d != "/somewhere" {
		t.Fatalf("%q, %v", d, err)
	}
	t.Setenv("VIGIL_AGENT_CLIS", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := CacheDir(); err != nil || d != "/xdg/vigil-agent-clis" {
		t.Fatalf("%q, %v", d, err)
	}
}

func TestEveryPinIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Pinned {
		if c.Name == "" || c.Package == "" || c.Version == "" || c.Bin == "" || seen[c.Name] {
			t.Errorf("pin %+v", c)
		}
		seen[c.Name] = true
		if got, ok := Lookup(c.Name); !ok || got != c {
			t.Errorf("Lookup(%s) = %+v, %v", c.Name, got, ok)
		}
	}
}
