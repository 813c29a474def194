// Package foreign runs a second SQLite party in a process of its own, for
// tests: the sqlite3 command-line shell and Python's sqlite3 module, both
// C SQLite, as a real harness or a person poking at a store would be. A
// party that is not installed is testkit.Need's: the test that asked for it
// skips, saying so, or fails with CI set (.ci/run installs both).
//
// It also has the checks those tests share: whether a WAL is still the
// file it was (an unlinked WAL under a live writer means diverging
// databases), and a snapshot of a directory's names, bytes and mtimes.
package foreign

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// Party is one foreign program.
type Party struct {
	name string
	bin  string
}

// SQLite3 is the sqlite3 shell, or testkit.Need's skip (or failure).
func SQLite3(t testing.TB) *Party {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		testkit.Need(t, "sqlite3", "the sqlite3 command-line shell is this test's foreign C-SQLite party (.ci/run installs it)")
	}
	return &Party{name: "sqlite3", bin: bin}
}

// Python is python3 with its sqlite3 module, or testkit.Need's skip.
func Python(t testing.TB) *Party {
	t.Helper()
	bin, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(bin, "-c", "import sqlite3").Run()
	}
	if err != nil {
		testkit.Need(t, "python3", "python3 with its sqlite3 module is this test's foreign C-SQLite party (.ci/run installs it)")
	}
	return &Party{name: "python3", bin: bin}
}

func (p *Party) String() string { return p.name }

// Bin is the party's program, for a test that runs a script of its own.
func (p *Party) Bin() string { return p.bin }

// timeout bounds one foreign run: a busy store waits at most 5 s.
const timeout = 30 * time.Second

// Exec runs sql against path in a fresh process that exits when done, and
// returns its output (the rows, one a line, columns joined by '|'). The
// process sets a 5 s busy timeout, as every party here does.
func (p *Party) Exec(path, sql string) (string, error) { return p.ExecAt(path, sql, time.Time{}) }

// ExecAt is Exec with the statements run at the moment at (Python only:
// it starts, connects, then sleeps until then), so a race with another
// party can be timed instead of left to process start-up.
func (p *Party) ExecAt(path, sql string, at time.Time) (string, error) {
	var cmd *exec.Cmd
	switch p.name {
	case "sqlite3":
		if !at.IsZero() {
			time.Sleep(time.Until(at))
		}
		cmd = exec.Command(p.bin, "-batch", "-bail", "-cmd", ".timeout 5000", path, sql)
	default:
		when := "0"
		if !at.IsZero() {
			when = fmt.Sprintf("%.6f", float64(at.UnixNano())/1e9)
		}
		cmd = exec.Command(p.bin, "-c", pyExec, path, sql, when)
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
// rows of the last one, as the sqlite3 shell does. A statement CRASH exits
// at once without closing the connection, as a killed writer does (its -wal
// and -shm stay).
const pyExec = `
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=5, isolation_level=None)
c.execute("SELECT 1").fetchall()
at = float(sys.argv[3])
if at > 0:
    time.sleep(max(0.0, at - time.time()))
rows = []
for stmt in [s for s in sys.argv[2].split(";") if s.strip()]:
    if stmt.strip() == "CRASH":
        sys.stdout.flush()
        os._exit(0)
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

// mountChild marks the copy of a test binary that runs a test in a mount
// namespace of its own.
const mountChild = "VIGIL_MOUNT_NAMESPACE_CHILD"

// InMountNamespace runs the calling test again in a child process with a
// mount namespace of its own (root only), where it may mount a small tmpfs
// or a read-only bind mount without touching the machine's. It returns true
// in that child, where the test goes on; in the parent it waits for the
// child, fails the test if the child failed, and returns false. Without
// root, or where namespaces are not allowed, the test is skipped, saying so.
func InMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(mountChild) != "" {
		return true
	}
	if os.Geteuid() != 0 {
		testkit.Skip(t, "needs root for a mount namespace of its own (to mount a small tmpfs or a read-only bind mount)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), mountChild+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "operation not permitted") && !strings.Contains(string(out), "--- FAIL") {
		testkit.Skip(t, fmt.Sprintf("no mount namespace here: %v\n%s", err, out))
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test in its own mount namespace failed: %v\n%s", err, out)
	}
	t.Logf("ran in a mount namespace of its own:\n%s", out)
	return false
}

// MountTmpfs mounts a tmpfs of size bytes on dir (in the test's own mount
// namespace: InMountNamespace) and unmounts it when the test ends.
func MountTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		testkit.Skip(t, fmt.Sprintf("cannot mount a tmpfs: %v", err))
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// BindReadOnly makes dir a read-only bind mount of itself, and undoes it
// when the test ends.
func BindReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		testkit.Skip(t, fmt.Sprintf("cannot bind-mount: %v", err))
	}
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		testkit.Skip(t, fmt.Sprintf("cannot make a bind mount read-only: %v", err))
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// FillDisk writes a file in dir until the file system is full, and
// returns its path.
func FillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return p
			}
			t.Fatal(err)
		}
	}
}

// HoldsLock reports whether process pid holds an fcntl lock on the file at
// p, by /proc/locks (which names files by device and inode: nothing is
// opened). ok is false where there is no /proc/locks.
func HoldsLock(pid int, p string) (held, ok bool) {
	in := InodeOf(p)
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[1] == "->" || f[4] != fmt.Sprint(pid) {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) == 3 && id[2] == fmt.Sprint(in.Ino) {
			return true, true
		}
	}
	return false, true
}
