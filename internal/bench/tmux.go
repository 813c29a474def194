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
// rather than a process started, so the screen can be looked at within
// a fraction of a millisecond of every write vigil makes to it.
type term struct {
	sock    string
	ctl     *exec.Cmd
	in      io.WriteCloser
	mu      sync.Mutex    // one command at a time
	replies chan []string // each command's reply lines
	output  chan struct{} // a pulse for each burst of pane output
	w, h    int
}

func newTerm(dir string, w, h int) (*term, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("the explorer is measured in tmux, which is not installed")
	}
	t := &term{sock: filepath.Join(dir, fmt.Sprintf("tmux-%d.sock", os.Getpid())), w: w, h: h,
		replies: make(chan []string, 4), output: make(chan struct{}, 1)}
	if out, err := exec.Command("tmux", "-S", t.sock, "-f", "/dev/null", "new-session", "-d", "-s", "bench",
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sleep 86400").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux: %v: %s", err, out)
	}
	t.ctl = exec.Command("tmux", "-S", t.sock, "-C", "attach", "-t", "bench")
	var err error
	if t.in, err = t.ctl.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := t.ctl.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := t.ctl.Start(); err != nil {
		return nil, err
	}
	go t.read(out)
	// The attach's own reply comes first; then keep the window at its size
	// whatever the control client's is.
	select {
	case _, ok := <-t.replies:
		if !ok {
			t.close()
			return nil, fmt.Errorf("tmux control mode ended as it attached")
		}
	case <-time.After(5 * time.Second):
		t.close()
		return nil, fmt.Errorf("tmux control mode did not answer")
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

func (t *term) read(r io.Reader) {
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
			t.replies <- block
		case in:
			block = append(block, line)
		case strings.HasPrefix(line, "%output "), strings.HasPrefix(line, "%extended-output "):
			select {
			case t.output <- struct{}{}:
			default:
			}
		}
	}
	close(t.replies)
}

// do runs one tmux command and returns its reply lines.
func (t *term) do(cmd string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := io.WriteString(t.in, cmd+"\n"); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-t.replies:
		if !ok {
			return nil, fmt.Errorf("tmux went away")
		}
		if n := len(r); n > 0 && r[n-1] == "%error" {
			return nil, fmt.Errorf("tmux %s: %s", cmd, strings.Join(r[:n-1], " "))
		}
		return r, nil
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("tmux %s: no reply", cmd)
	}
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
	// Drop the pulses of the program that ran before.
	select {
	case <-t.output:
	default:
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

// waitFor looks at the screen after every write to it (and every
// millisecond besides) until ok says yes, and returns when it first did.
func (t *term) waitFor(ok func(screen string) bool, limit time.Duration) (time.Time, bool) {
	deadline := time.After(limit)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if ok(t.screen()) {
			return time.Now(), true
		}
		select {
		case <-t.output:
		case <-tick.C:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// stop ends the program in the window.
func (t *term) stop() { t.do("respawn-pane -k -t bench 'sleep 86400'") }

func (t *term) close() {
	if t.in != nil {
		t.in.Close()
	}
	exec.Command("tmux", "-S", t.sock, "kill-server").Run()
	if t.ctl != nil && t.ctl.Process != nil {
		t.ctl.Wait()
	}
	os.Remove(t.sock)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// tmuxQuote quotes one argument of a tmux command line.
func tmuxQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`).Replace(s) + `"`
}
