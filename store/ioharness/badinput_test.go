package ioharness

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// populatedStore writes a small finished store and closes it, so the file
// holds everything (no -wal left behind).
func populatedStore(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "runs.sqlite3")
	s, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := must[string](t)(s.StartRun(ctx, "a goal", "/w"))
	for i := 1; i <= 50; i++ {
		if err := s.CheckpointStep(ctx, run, harness.StepRecord{Step: i, Decision: "d", Result: strings.Repeat("r", 400), Prompt: strings.Repeat("p", 900)}); err != nil {
			t.Fatal(err)
		}
	}
	must[string](t)(s.PutPending(ctx, run, 50, "write", "x", ptr("y")))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	good := populatedStore(t, dir)
	goodBytes, _ := os.ReadFile(good)

	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	random := make([]byte, 8192)
	rand.Read(random)
	newer := filepath.Join(dir, "newer.sqlite3")
	os.WriteFile(newer, goodBytes, 0o644)
	db, _ := sql.Open("sqlite", newer)
	db.Exec("PRAGMA user_version = 8")
	db.Close()
	plain := filepath.Join(dir, "plain.sqlite3")
	db, _ = sql.Open("sqlite", plain)
	db.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
	db.Close()
	os.Mkdir(filepath.Join(dir, "a-directory"), 0o755)

	cases := []struct {
		name string
		path string
		kind error
		text string
	}{
		{"empty file", write("empty.sqlite3", nil), store.ErrNotAStore, "empty"},
		{"random bytes", write("random.sqlite3", random), store.ErrNotSQLite, "not a SQLite database"},
		{"text file", write("notes.txt", []byte("hello\n")), store.ErrNotSQLite, "not a SQLite database"},
		{"truncated store", write("truncated.sqlite3", goodBytes[:len(goodBytes)/2]), store.ErrCorrupt, "damaged"},
		{"header only", write("header.sqlite3", goodBytes[:100]), store.ErrCorrupt, "damaged"},
		{"newer format", newer, store.ErrNewerFormat, "store format 8, vigil reads up to 7"},
		{"sqlite without tables", plain, store.ErrNotAStore, "without io-harness's runs and steps tables"},
		{"directory", filepath.Join(dir, "a-directory"), store.ErrIsDirectory, "directory"},
		{"missing path", filepath.Join(dir, "nope.sqlite3"), store.ErrNotFound, "no such file"},
		{"path with # and ?", filepath.Join(dir, "a#b?c.sqlite3"), store.ErrNotFound, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadFile(c.path)
			entries := dirNames(t, dir)
			s, err := Open(c.path)
			if err == nil {
				s.Close()
				t.Fatal("opened without error")
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q is not %v", err, c.kind)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, c.text) || !strings.HasPrefix(msg, c.path) {
				t.Errorf("message %q: want one line naming the path and saying %q", msg, c.text)
			}
			after, _ := os.ReadFile(c.path)
			if string(before) != string(after) {
				t.Error("the file changed")
			}
			if got := dirNames(t, dir); got != entries {
				t.Errorf("the directory changed: %s -> %s", entries, got)
			}
		})
	}
}

func dirNames(t *testing.T, dir string) string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// A store deleted while open keeps answering from the open file (POSIX) and
// never recreates the path.
func TestStoreDeletedWhileOpen(t *testing.T) {
	dir := t.TempDir()
	path := populatedStore(t, dir)
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.Remove(path)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if _, err := s.Runs(context.Background()); err != nil {
		t.Logf("read after delete: %v", err) // an error is fine; a panic or a new file is not
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("reading recreated the deleted store")
	}
}

// A writer holding the write lock does not stop browsing (WAL readers never
// wait), and a decision waits for the lock instead of failing.
func TestLockedStore(t *testing.T) {
	path, w, ids := liveRun(t, 1)
	_ = w
	holder, err := sql.Open("sqlite", sqlitex.DSN(path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	sqlitex.Pin(holder)
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO runs (goal, file) VALUES ('held', '/w')"); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open while another process holds the write lock: %v", err)
	}
	defer s.Close()
	if _, err := s.Runs(context.Background()); err != nil {
		t.Fatalf("browse while locked: %v", err)
	}
	release := time.AfterFunc(300*time.Millisecond, func() { tx.Commit() })
	defer release.Stop()
	t0 := time.Now()
	r, err := s.Decide(context.Background(), store.Decision{Key: store.RequestKey{Kind: store.Approval, ID: ids[0]}, Verdict: "approve"})
	if err != nil || !r.Won {
		t.Fatalf("decide while locked: %+v %v", r, err)
	}
	if waited := time.Since(t0); waited < 250*time.Millisecond {
		t.Errorf("decided in %v while the lock was held for 300ms", waited)
	}
}

// Read-only cases need an unprivileged user: root may write anything.
func TestReadOnlyFileAndDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		runReadOnlyChecks(t)
		return
	}
	if os.Getenv("VIGIL_STORE_CHILD") != "" {
		t.Skip()
	}
	dir, err := os.MkdirTemp("", "vigil-ro-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	// The test binary sits in a directory only root may enter: run a copy.
	bin := filepath.Join(dir, "store.test")
	if b, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyFileAndDirectory$", "-test.v")
	cmd.Env = append(os.Environ(), "VIGIL_RO_DIR="+dir, "VIGIL_STORE_CHILD=ro")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	// The unprivileged child builds its fixtures in dir, then checks them.
	os.Chown(dir, 65534, 65534)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestReadOnlyFileAndDirectory") {
		t.Fatalf("unprivileged checks failed: %v\n%s", err, out)
	}
}

func runReadOnlyChecks(t *testing.T) {
	dir := os.Getenv("VIGIL_RO_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	ctx := context.Background()

	// A read-only file in a writable directory: browse yes, decide no.
	fileDir := filepath.Join(dir, "rofile")
	os.Mkdir(fileDir, 0o755)
	path := populatedStore(t, fileDir)
	os.Chmod(path, 0o444)
	before, _ := os.ReadFile(path)
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open a read-only file: %v", err)
	}
	if ro, why := s.ReadOnly(); !ro || !strings.Contains(why, "read-only") {
		t.Errorf("ReadOnly() = %v %q", ro, why)
	}
	reqs := must[[]store.Request](t)(s.Requests(ctx, true))
	if _, err := s.Decide(ctx, store.Decision{Key: reqs[0].Key(), Verdict: "approve"}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("decide on a read-only file: %v", err)
	}
	s.Close()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("read-only file changed")
	}

	// A read-only directory with no WAL: no room for -shm, so the store is
	// read as immutable and deciding is disabled.
	roDir := filepath.Join(dir, "rodir")
	os.Mkdir(roDir, 0o755)
	path = populatedStore(t, roDir)
	os.Chmod(roDir, 0o555)
	defer os.Chmod(roDir, 0o755)
	before, _ = os.ReadFile(path)
	s, err = Open(path)
	if err != nil {
		t.Fatalf("open in a read-only directory: %v", err)
	}
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 1 {
		t.Errorf("runs in a read-only directory: %v %v", runs, err)
	}
	if ro, why := s.ReadOnly(); !ro || !strings.Contains(why, "directory") {
		t.Errorf("ReadOnly() = %v %q", ro, why)
	}
	s.Close()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("store in a read-only directory changed")
	}
	if names := dirNames(t, roDir); names != "runs.sqlite3" {
		t.Errorf("directory now holds %s", names)
	}
}
