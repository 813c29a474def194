package ioharness

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// childCreate creates stores dir/0.sqlite3, dir/1.sqlite3, … until it is
// killed.
func childCreate() int {
	dir := os.Getenv("VIGIL_DIR")
	for i := 0; ; i++ {
		s, err := harness.Create(filepath.Join(dir, fmt.Sprintf("%d.sqlite3", i)))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		s.Close()
	}
}

// A process killed while creating a store leaves either a whole store or
// nothing at the path: never a file vigil refuses to open (and refuses to
// create over), as a kill between setting WAL and committing the schema did.
func TestCreateKilledLeavesWholeStoreOrNothing(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	kills := 12
	if testing.Short() {
		kills = 4
	}
	checked := 0
	for k := 0; k < kills; k++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "VIGIL_STORE_CHILD=create", "VIGIL_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The kill lands at a random point of a later create: wait until the
		// child is creating (on a loaded machine it can take a while to
		// start), so every trial tests something.
		if !waitForFile(filepath.Join(dir, "0.sqlite3"), 30*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("kill %d: the child created no store in 30 s", k)
		}
		time.Sleep(time.Duration(rng.Intn(200)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".sqlite3") {
				continue // a temporary build, or a store's -wal/-shm
			}
			checked++
			s, err := OpenReadOnly(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("kill %d: %s does not open: %v", k, name, err)
			}
			s.Close()
			// And a new store can be made where a partial one would sit.
			next := filepath.Join(dir, name+".again")
			if s, err := harness.Create(next); err != nil {
				t.Fatalf("Create beside a killed create: %v", err)
			} else {
				s.Close()
			}
		}
	}
	if checked == 0 {
		t.Fatal("no store was created before any kill: the kill points test nothing")
	}
	t.Logf("%d stores checked after %d kills", checked, kills)
}

func waitForFile(path string, within time.Duration) bool {
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// A store asked for in a directory that does not exist, or under a file,
// is refused in the directory's words: the temporary name Create builds
// under is not the user's to see.
func TestCreateWhereNoDirectoryIsSaysWhichDirectory(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "plain"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(base, "no", "such", "run.sqlite3"), "cannot create the store: there is no directory " + filepath.Join(base, "no", "such")},
		{filepath.Join(base, "plain", "run.sqlite3"), "cannot create the store: " + filepath.Join(base, "plain") + " is not a directory"},
	} {
		s, err := harness.Create(c.path)
		if err == nil {
			s.Close()
			t.Fatalf("%s: created", c.path)
		}
		if msg := err.Error(); msg != c.path+": "+c.want || strings.Contains(msg, ".creating-") {
			t.Errorf("%s:\n got %q\nwant %q", c.path, msg, c.path+": "+c.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(base, "*")); len(left) != 1 {
		t.Errorf("files left: %q", left)
	}
}
