//go:build unix

package cli

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A path meant for Leviath that Detect does not take gets Leviath's reason
// (store/leviath Explain), not "not a SQLite database" or "is a directory":
// the journal's torn magic, or the FIFO where a run's file should be. A
// SQLite file that happens to be named run.lvr is still judged as SQLite.
func TestLeviathLookalikesSayWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	torn := filepath.Join(dir, "torn")
	writeFile(t, filepath.Join(torn, "run.lvr"), "LVX1 and then some")
	short := filepath.Join(dir, "short")
	writeFile(t, filepath.Join(short, "run.lvr"), "LV")
	piped := filepath.Join(dir, "piped")
	writeFile(t, filepath.Join(piped, "run.lvr"), "LVR1\x00\x01")
	if err := syscall.Mkfifo(filepath.Join(piped, "meta.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	noMeta := filepath.Join(dir, "nometa")
	writeFile(t, filepath.Join(noMeta, "meta.json"), `{"task":"no run_id, no status"}`)
	sqliteNamed := filepath.Join(dir, "sqlite", "run.lvr")
	writeFile(t, filepath.Join(dir, "sqlite", "keep"), "")
	sqliteExec(t, sqliteNamed, "CREATE TABLE t (x)")
	tornJournal := filepath.Join(torn, "run.lvr")
	for _, c := range []struct {
		name, path string
		says       []string
	}{
		{"torn journal", tornJournal, []string{tornJournal + `: not a Leviath journal: it starts "LVX1", not "LVR1"`}},
		{"run directory of a torn journal", torn, []string{tornJournal + `: not a Leviath journal: it starts "LVX1", not "LVR1"`}},
		{"journal shorter than its magic", short, []string{filepath.Join(short, "run.lvr") + ": not a Leviath journal: it ends before its magic"}},
		{"FIFO meta.json", piped, []string{filepath.Join(piped, "meta.json") + ": a named pipe (FIFO), not a store file"}},
		{"meta.json that is no run's", noMeta, []string{noMeta + ": not a Leviath run: its meta.json has no run_id and status"}},
		{"SQLite named run.lvr", sqliteNamed, []string{sqliteNamed + ": not a run store vigil reads: SQLite, but without io-harness's runs and steps tables"}},
	} {
		for _, args := range [][]string{{"runs", "--store", c.path}, {"show", "1", "--store", c.path}} {
			r := newHarness(t).run(args...)
			r.wantCode(t, ExitError)
			r.oneLine(t, c.says...)
		}
	}
}
