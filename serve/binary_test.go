package serve

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/internal/testkit/fixture"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// vigilBinary is the vigil binary, built once for the package's tests.
func vigilBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-serve-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "vigil")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/vigil-run/vigil").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// served is a `vigil serve` process on a fixture store with one viewer,
// whose private key is in an OpenSSH key file for the stock ssh client.
type served struct {
	pid    int
	port   string
	dir    string
	key    string // the viewer's private key file
	viewer user
	store  string
}

func serveBinary(t *testing.T, args ...string) *served {
	t.Helper()
	bin := vigilBinary(t)
	dir := t.TempDir()
	path, err := fixture.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sv := &served{dir: dir, key: filepath.Join(dir, "id_ed25519"), viewer: user{name: "vera@laptop", signer: signer},
		port: freePort(t), store: path}
	if err := os.WriteFile(sv.key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := writeKeys(t, dir, "viewers", sv.viewer)
	cmd := exec.Command(bin, append([]string{"serve", "--store", path, "--authorized-keys", keys,
		"--listen", "127.0.0.1:" + sv.port, "--rate-limit", "10000"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("vigil serve did not start")
	}
	sv.pid = cmd.Process.Pid
	return sv
}

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		testkit.Skip(t, "no /proc: cannot measure the server's memory")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// stockSSH is the stock OpenSSH client in a terminal of cols×rows that
// script(1) gives it, connected to sv as its viewer.
type stockSSH struct {
	out *syncBuf
	in  io.WriteCloser
	cmd *exec.Cmd
}

func runStockSSH(t *testing.T, sv *served, cols, rows int) *stockSSH {
	t.Helper()
	testkit.Tool(t, "ssh", "the stock OpenSSH client")
	testkit.Tool(t, "script", "a terminal for the stock ssh client")
	ssh := fmt.Sprintf("stty rows %d cols %d; exec ssh -tt -F /dev/null -i %s -p %s -o IdentitiesOnly=yes -o BatchMode=yes "+
		"-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR vera@127.0.0.1",
		rows, cols, sv.key, sv.port)
	cmd := exec.Command("script", "-qfec", ssh, "/dev/null")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	s := &stockSSH{out: &syncBuf{}, cmd: cmd}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	var err error
	if s.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return s
}

// waitOut waits until the client has been sent want (escape sequences
// removed).
func (s *stockSSH) waitOut(t *testing.T, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(ansi.Strip(s.out.String()), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q not sent within %s; the last of it:\n%s", want, within, tail(ansi.Strip(s.out.String()), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMain removes the binary vigilBinary built, and says what Need and
// Skip skipped.
func TestMain(m *testing.M) {
	code := testkit.Main(m)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
