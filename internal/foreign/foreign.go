// Package foreign runs a second SQLite party in a process of its own, for
// tests: the sqlite3 command-line shell and Python's sqlite3 module, both
// C SQLite, as a real harness or a person poking at a store would be. A
// party that is not installed skips the test that asked for it, saying so
// (.ci/run installs both).
//
// It also has the checks those tests share: whether a WAL is still the
// file it was (an unlinked WAL under a live writer means diverging
// databases), and a snapshot of a directory's names, bytes and mtimes.
package foreign

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Party is one foreign program.
type Party struct {
	name string
	bin  string
}

// SQLite3 is the sqlite3 shell, or a skip when it is not installed.
func SQLite3(t testing.TB) *Party {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 command-line shell is not installed (.ci/run installs it): this test needs a foreign C-SQLite party")
	}
	return &Party{name: "sqlite3", bin: bin}
}

// Python is python3 with its sqlite3 module, or a skip.
func Python(t testing.TB) *Party {
	t.Helper()
	bin, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(bin, "-c", "import sqlite3").Run()
	}
	if err != nil {
		t.Skip("python3 with its sqlite3 module is not installed (.ci/run installs it): this test needs a foreign C-SQLite party")
	}
	return &Party{name: "python3", bin: bin}
}

func (p *Party) String() string { return p.name }

// timeout bounds one foreign run: a busy store waits at most 5 s.
const timeout = 30 * time.Second

// Exec runs sql against path in a fresh process that exits when done, and
// returns its output (the rows, one a line, columns joined by '|'). The
// process sets a 5 s busy timeout, as every party here does.
func (p *Party) Exec(path, sql string) (string, error) {
	var cmd *exec.Cmd
	switch p.name {
	case "sqlite3":
		cmd = exec.Command(p.bin, "-batch", "-bail", "-cmd", ".timeout 5000", path, sql)
	default:
		cmd = exec.Command(p.bin, "-c", pyExec, path, sql)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return out.String(), fmt.Errorf("%s: %v: %s", p.name, err, strings.TrimSpace(errb.String()))
		}
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("%s: no answer within %v", p.name, timeout)
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// MustExec is Exec that fails the test on an error.
func (p *Party) MustExec(t testing.TB, path, sql string) string {
	t.Helper()
	out, err := p.Exec(path, sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pyExec runs each statement of argv[2] in autocommit mode and prints the
// rows of the last one, as the sqlite3 shell does.
const pyExec = `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=5, isolation_level=None)
rows = []
for stmt in [s for s in sys.argv[2].split(";") if s.strip()]:
    rows = c.execute(stmt).fetchall()
for r in rows:
    print("|".join("" if v is None else str(v) for v in r))
c.close()
`

// Inode is a file's device and inode, or zero when it is not there.
type Inode struct{ Dev, Ino uint64 }

// InodeOf stats p (it never opens it).
func InodeOf(p string) Inode {
	fi, err := os.Stat(p)
	if err != nil {
		return Inode{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Inode{}
	}
	return Inode{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// WAL watches a live writer's -wal: Check fails the test when the file at
// path-wal is no longer the one seen first (another process checkpointed
// and unlinked it while the writer still had it open).
type WAL struct {
	path  string
	first Inode
}

// WatchWAL records the -wal beside path; it must exist.
func WatchWAL(t testing.TB, path string) *WAL {
	t.Helper()
	in := InodeOf(path + "-wal")
	if in == (Inode{}) {
		t.Fatalf("%s-wal does not exist: no writer holds the store", path)
	}
	return &WAL{path: path, first: in}
}

// Check fails the test (naming when) if the WAL was unlinked or replaced.
func (w *WAL) Check(t testing.TB, when string) {
	t.Helper()
	if got := InodeOf(w.path + "-wal"); got != w.first {
		what := "replaced by another file"
		if got == (Inode{}) {
			what = "unlinked"
		}
		t.Fatalf("%s: the writer's WAL was %s while the writer had it open (its commits now go to a file nobody else reads)", when, what)
	}
}

// Snapshot is a directory's files: name, bytes and mtime of each.
type Snapshot map[string]string

// Snap reads dir. It opens the files, so it must run when this process
// holds no SQLite connection to any of them.
func Snap(t testing.TB, dir string) Snapshot {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Snapshot{}
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.IsDir() {
			s[e.Name()+"/"] = ""
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s[e.Name()] = fmt.Sprintf("%d bytes, mtime %d, %x", len(b), fi.ModTime().UnixNano(), b)
	}
	return s
}

// Diff says how after differs from s, or "" when they are the same.
func (s Snapshot) Diff(after Snapshot) string {
	var out []string
	for n, v := range s {
		w, ok := after[n]
		switch {
		case !ok:
			out = append(out, n+" is gone")
		case w != v:
			out = append(out, n+" changed")
		}
	}
	for n := range after {
		if _, ok := s[n]; !ok {
			out = append(out, n+" is new")
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
