package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A store the explorer reads without part of it says so on the status bar,
// as the command line warns: here a WAL whose -shm is gone (a C-SQLite
// writer killed, its -shm removed), whose commit the main file does not
// hold. Without the warning the screen reads as the whole store.
func TestWhatTheStoreIsReadWithoutIsOnTheStatusBar(t *testing.T) {
	py := foreign.Python(t)
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := py.Exec(path, "INSERT INTO runs (goal, file) VALUES ('only in the WAL', 'f'); CRASH"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path + "-shm"); err != nil {
		t.Fatal(err)
	}
	d := openDriver(t, path, 120, 32)
	d.contains("⚠ the WAL's commits are not shown (it has no -shm)")
	d.lacks("only in the WAL")
}
