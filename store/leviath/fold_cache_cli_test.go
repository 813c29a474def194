//go:build unix

package leviath

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/bigrun"
)

// readAt is the JSON's time of reading (the clock's, with nanoseconds;
// the journal's times are whole seconds): the one thing two runs differ in.
var readAt = regexp.MustCompile(`"at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"`)

// TestFoldCacheCLI: the real binary over a journal long enough to be
// cached (foldCacheBytes as built): the second process uses the summary
// the first wrote in XDG_CACHE_HOME and prints byte for byte what the
// first printed, for runs, runs --json, show and show --json; after an
// append, what a process with no cache prints. Nothing is written beside
// the store.
func TestFoldCacheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vigil")
	}
	bin := bigrun.Binary(t)
	runs, journal, g := journalCase(t, int(foldCacheBytes/(256<<10))+8, 256<<10)
	id := filepath.Base(filepath.Dir(journal))
	cache, none := t.TempDir(), t.TempDir()
	vigil := func(home string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--store", runs)...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+home, "VIGIL_DEBUG=1", "NO_COLOR=1", "TZ=UTC")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("vigil %v: %v\n%s", args, err, errb.String())
		}
		return readAt.ReplaceAllString(out.String(), `"at": "(masked)"`), errb.String()
	}
	cmds := [][]string{{"runs", "--json"}, {"runs"}, {"show", id, "--json"}, {"show", id}}
	check := func(when string) {
		t.Helper()
		for _, args := range cmds {
			os.RemoveAll(none)
			want, _ := vigil(none, args...) // a fresh cache directory: the cold fold
			got, stderr := vigil(cache, args...)
			if !strings.Contains(stderr, "bytes from the summary") {
				t.Errorf("%s, vigil %v: the summary was not used: %q", when, args, stderr)
			}
			if got != want {
				t.Errorf("%s, vigil %v: not what the cold fold prints:\n%s\nwant:\n%s", when, args, got, want)
			}
		}
	}
	_, stderr := vigil(cache, "runs")
	if strings.Contains(stderr, "from the summary") {
		t.Fatalf("a summary before any was written: %q", stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "vigil", "leviath-folds", "*.fold")); len(files) != 1 {
		t.Fatalf("cache files after the first run: %q", files)
	}
	check("from the summary")
	for i := 100; i < 104; i++ {
		appendJob(g, i, 8<<10)
	}
	g.writeMeta()
	check("appended since")
	if ents, _ := os.ReadDir(filepath.Dir(journal)); len(ents) != 2 {
		t.Errorf("the run directory holds %d files", len(ents))
	}
}
