package e2e

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// A command that fails on a terminal that never answers queries (the Linux
// console, script(1), many serial and web terminals) prints its one line
// at once and asks the terminal nothing: fang, handed the error, would ask
// for the background colour twice and wait 2 s for each answer, and a late
// answer lands at the user's shell prompt as typed text.
func TestErrorsOnAMuteTerminalAreOneLineAtOnce(t *testing.T) {
	bin := vigilBinary(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "--store", "/nonexistent/runs.sqlite3"}, "vigil: /nonexistent/runs.sqlite3: no such file"},
		{[]string{"runs", "--bogus"}, "vigil: unknown flag: --bogus (see 'vigil runs --help')"},
		{[]string{"show"}, "vigil: missing RUN (see 'vigil show --help')"},
		{[]string{"tail", "1", "--poll", "1ns"}, "vigil: --poll 1ns: an interval below 10ms would read the store without pause (see 'vigil tail --help')"},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Dir = t.TempDir()
		start := time.Now()
		tty, err := pty.Start(cmd) // stdin, stdout and stderr on the pty; no one answers on it
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		io.Copy(&out, tty) // until the process exits and the pty closes
		cmd.Wait()
		tty.Close()
		took := time.Since(start)
		got := strings.TrimRight(out.String(), "\r\n")
		if got != c.want {
			t.Errorf("%q wrote %q, want %q", c.args, got, c.want)
		}
		if took > time.Second {
			t.Errorf("%q took %v on a terminal that does not answer", c.args, took.Round(time.Millisecond))
		}
	}
}

// The explorer started where there is no terminal at all (cron, CI, a
// pipe in a session without a controlling terminal) says so in one line
// of its own words, not the UI library's.
func TestTheExplorerWithoutATerminalSaysSo(t *testing.T) {
	bin := vigilBinary(t)
	store := hostileOutcomes(t, t.TempDir())
	cmd := exec.Command(bin, store)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: no /dev/tty
	out, err := cmd.CombinedOutput()
	want := "vigil: the explorer needs a terminal to read keys from, and this process has none: vigil runs, show, tail and trace work without one\n"
	if err == nil || string(out) != want {
		t.Errorf("%v: %q, want %q", err, out, want)
	}
}
