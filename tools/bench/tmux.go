package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// term is a tmux server of the bench's own with one window, driven
// through a control-mode client: a screen capture is a line on a pipe
// rather than a process started, so the screen can be looked at every
// millisecond.
type term struct {
	sock string
	mu   sync.Mutex // one command at a time
	ctl  *control   // the control client now attached
	w, h int
}

// control is one control-mode client of the bench's tmux server.
type control struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan []string // each command's reply lines; closed when the client ends
	stderr  strings.Builder
	exit    string // the reason tmux gave on its %exit line, if any
}

func newTerm(dir string, w, h int) (*term, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("the explorer is measured in tmux, which is not installed")
	}
	t := &term{sock: filepath.Join(dir, fmt.Sprintf("tmux-%d.sock", os.Getpid())), w: w, h: h}
	if out, err := exec.Command("tmux", "-S", t.sock, "-f", "/dev/null", "new-session", "-d", "-s", "bench",
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sleep 86400").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux: %v: %s", err, out)
	}
	if err := t.attach(); err != nil {
		t.close()
		return nil, err
	}
	for _, c := range []string{"set-option -g window-size manual", fmt.Sprintf("resize-window -t bench -x %d -y %d", w, h),
		"set-option -g remain-on-exit on"} {
		if _, err := t.do(c); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// attach starts a control client on the bench's session. A control client
// can end under the bench (tmux drops one it thinks too far behind), and
// the server and the program in the window outlive it: do attaches again.
func (t *term) attach() error {
	c := &control{replies: make(chan []string, 4)}
	// No pane output to the client: tmux 3.3 to 3.6 dies when a pane is
	// respawned while a control client is behind on its output
	// (tmux/tmux#5499), and this client often was, by a frame (the bench
	// lost tmux in about half its runs). The screen is read by capture-pane.
	c.cmd = exec.Command("tmux", "-S", t.sock, "-C", "attach", "-f", "no-output", "-t", "bench")
	c.cmd.Env = withoutTMUX(os.Environ())
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.cmd.Start(); err != nil {
		return err
	}
	go c.read(out)
	// The attach's own reply comes first.
	select {
	case _, ok := <-c.replies:
		if !ok {
			c.end()
			return fmt.Errorf("tmux control mode ended as it attached%s", c.why())
		}
	case <-time.After(5 * time.Second):
		c.end()
		return fmt.Errorf("tmux control mode did not answer")
	}
	t.ctl = c
	return nil
}

func (c *control) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var block []string
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "%begin "):
			in, block = true, nil
		case in && (strings.HasPrefix(line, "%end ") || strings.HasPrefix(line, "%error ")):
			in = false
			if strings.HasPrefix(line, "%error ") {
				block = append(block, "%error")
			}
			c.replies <- block
		case in:
			block = append(block, line)
		case strings.HasPrefix(line, "%exit"):
			c.exit = strings.TrimSpace(strings.TrimPrefix(line, "%exit"))
		}
	}
	if err := sc.Err(); err != nil && c.exit == "" {
		c.exit = "reading its output: " + err.Error()
	}
	close(c.replies)
}

// why says, as well as tmux told, why the client ended (after end).
func (c *control) why() string {
	var parts []string
	if c.exit != "" {
		parts = append(parts, c.exit)
	}
	if e := strings.TrimSpace(c.stderr.String()); e != "" {
		parts = append(parts, e)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

func (c *control) end() {
	c.in.Close()
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
	// The reader finishes before Wait closes the pipe it reads.
	for range c.replies {
	}
	c.cmd.Wait()
}

// do runs one tmux command and returns its reply lines. A control client
// that ended or stopped answering is reported on stderr with tmux's reason
// and replaced once.
func (t *term) do(cmd string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, err, gone := t.ctl.run(cmd)
	if gone {
		t.ctl.end()
		reason := t.ctl.why()
		fmt.Fprintf(os.Stderr, "bench: the tmux control client ended%s; attaching again\n", reason)
		if aerr := t.attach(); aerr != nil {
			return nil, fmt.Errorf("tmux control client ended%s, and attaching again failed: %v", reason, aerr)
		}
		r, err, _ = t.ctl.run(cmd)
	}
	return r, err
}

// run sends one command; gone says the client ended or is out of step.
func (c *control) run(cmd string) (reply []string, err error, gone bool) {
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return nil, err, true
	}
	select {
	case r, ok := <-c.replies:
		if !ok {
			return nil, fmt.Errorf("tmux went away"), true
		}
		if n := len(r); n > 0 && r[n-1] == "%error" {
			return nil, fmt.Errorf("tmux %s: %s", cmd, strings.Join(r[:n-1], " ")), false
		}
		return r, nil, false
	case <-time.After(10 * time.Second):
		// Its reply may still come, to this client: a new one keeps the
		// replies in step with the commands.
		return nil, fmt.Errorf("tmux %s: no reply in 10 s", cmd), true
	}
}

func withoutTMUX(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "TMUX=") && !strings.HasPrefix(e, "TMUX_PANE=") {
			out = append(out, e)
		}
	}
	return out
}

// screen is what the window shows now.
func (t *term) screen() string {
	lines, err := t.do("capture-pane -p -t bench")
	if err != nil {
		return ""
	}
	return strings.Join(lines, "\n")
}

// start runs a command line in the window in place of whatever ran there,
// and returns when tmux was asked to (the moment its clock starts).
func (t *term) start(argv ...string) (time.Time, error) {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	at := time.Now()
	_, err := t.do("respawn-pane -k -t bench " + tmuxQuote("exec env TERM=xterm-256color "+strings.Join(q, " ")))
	return at, err
}

// pid is the process in the window (vigil: the shell execs it).
func (t *term) pid() int {
	r, err := t.do("display-message -p -t bench '#{pane_pid}'")
	if err != nil || len(r) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(r[0]))
	return n
}

// waitFor looks at the screen every millisecond until ok says yes, and
// returns when it first did.
func (t *term) waitFor(ok func(screen string) bool, limit time.Duration) (time.Time, bool) {
	deadline := time.After(limit)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if ok(t.screen()) {
			return time.Now(), true
		}
		select {
		case <-tick.C:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// stop ends the program in the window.
func (t *term) stop() { t.do("respawn-pane -k -t bench 'sleep 86400'") }

func (t *term) close() {
	exec.Command("tmux", "-S", t.sock, "kill-server").Run()
	if t.ctl != nil {
		t.ctl.end()
	}
	os.Remove(t.sock)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tmuxQuote quotes one argument of a tmux command line.
func tmuxQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`).Replace(s) + `"`
}
