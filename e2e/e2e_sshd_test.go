package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
)

// sshd is a real OpenSSH server on a loopback port, with generated host
// and user keys, and a client configuration that reaches it as "vigiltest".
type sshd struct {
	dir    string
	port   string
	config string // ssh -F this
	key    string // the user's private key
	pid    int
	// farState is $XDG_STATE_HOME of every session the sshd starts: the
	// far side's audit log is under it, not in the real home.
	farState string
}

func findSSHD(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	testkit.Need(t, "sshd", "the SSH end-to-end tests need a real one (openssh-server; .ci/run installs it)")
	return ""
}

func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func keygen(t *testing.T, path, comment string) string {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(pub))
}

func startSSHD(t *testing.T) *sshd {
	t.Helper()
	bin := findSSHD(t)
	testkit.Tool(t, "ssh", "the SSH end-to-end test logs in with the real ssh client (openssh-client)")
	dir := t.TempDir()
	os.MkdirAll("/run/sshd", 0o755) // privilege separation, where sshd wants it (as root)
	s := &sshd{dir: dir, port: freeLoopbackPort(t), config: filepath.Join(dir, "ssh_config"), key: filepath.Join(dir, "id_ed25519"),
		farState: filepath.Join(dir, "far-state")}
	hostPub := keygen(t, filepath.Join(dir, "host_ed25519"), "vigil-test-host")
	userPub := keygen(t, s.key, "vigil-test-user")
	must(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(userPub+"\n"), 0o600))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(fmt.Sprintf(`Port %s
ListenAddress 127.0.0.1
HostKey %s/host_ed25519
PidFile %s/sshd.pid
AuthorizedKeysFile %s/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
LogLevel ERROR
SetEnv XDG_STATE_HOME=%s
`, s.port, dir, dir, dir, s.farState)), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(fmt.Sprintf("[127.0.0.1]:%s %s\n", s.port, hostPub)), 0o600))
	must(t, os.WriteFile(s.config, []byte(fmt.Sprintf(`Host vigiltest
  HostName 127.0.0.1
  Port %s
  User %s
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s/known_hosts
  StrictHostKeyChecking yes
  LogLevel ERROR
`, s.port, u.Username, s.key, dir)), 0o600))
	cmd := exec.Command(bin, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	log, _ := os.Create(filepath.Join(dir, "sshd.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		testkit.Need(t, "a working sshd", fmt.Sprintf("sshd cannot start here: %v", err))
	}
	s.pid = cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", "127.0.0.1:"+s.port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			testkit.Need(t, "a working sshd", fmt.Sprintf("sshd did not listen (it may need root here): %s", b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := exec.Command("ssh", "-F", s.config, "-o", "BatchMode=yes", "vigiltest", "true").CombinedOutput(); err != nil {
		testkit.Need(t, "a working sshd", fmt.Sprintf("cannot log in to the test sshd (%v): %s", err, out))
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// dropLinks kills the server's processes for the open connections (every
// descendant of the sshd this test started: the per-connection monitor,
// its network child, the session's command): every link through it drops,
// as when a network goes away.
func (s *sshd) dropLinks(t *testing.T) int {
	t.Helper()
	var pids []int
	var walk func(pid int)
	walk = func(pid int) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			return
		}
		for _, f := range strings.Fields(string(b)) {
			if c, _ := strconv.Atoi(f); c > 0 {
				pids = append(pids, c)
				walk(c)
			}
		}
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", s.pid, s.pid)); err != nil {
		t.Skipf("cannot list sshd's connections: %v", err)
	}
	walk(s.pid)
	n := 0
	for _, pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// sshTmux is one tmux server and session for a test.
type sshTmux struct {
	t    *testing.T
	sock string
	name string
}

func newSSHTmux(t *testing.T, name string, w, h int, env []string, argv ...string) *sshTmux {
	t.Helper()
	testkit.Tool(t, "tmux", "the end-to-end test drives the real binary in tmux")
	ts := &sshTmux{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock"), name: name}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-s", name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "env", "TERM=xterm-256color"}
	args = append(append(args, env...), argv...)
	ts.run(args...)
	t.Cleanup(func() { exec.Command("tmux", "-S", ts.sock, "kill-server").Run() })
	ts.run("set-option", "-t", name, "remain-on-exit", "on")
	return ts
}

func (ts *sshTmux) run(args ...string) string {
	ts.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", ts.sock}, args...)...).CombinedOutput()
	if err != nil {
		ts.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (ts *sshTmux) screen() string { return ts.run("capture-pane", "-p", "-t", ts.name) }

func (ts *sshTmux) waitFor(want string, within time.Duration) string {
	ts.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := ts.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (ts *sshTmux) keys(k ...string) {
	ts.t.Helper()
	ts.run(append([]string{"send-keys", "-t", ts.name}, k...)...)
	time.Sleep(150 * time.Millisecond)
}
