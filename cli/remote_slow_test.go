package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A far side that does not answer is said to be so after a second, on a
// terminal (before the explorer draws, it is otherwise silent for 30 s;
// a script's standard error gets no notice), and a signal then ends the
// command within a second with one line that says why, not the cancelled
// read's own words.
func TestASilentFarSideIsSaidAndASignalEndsIt(t *testing.T) {
	ssh := filepath.Join(t.TempDir(), "ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb syncBuffer
		a := newApp(nil, &out, &errb, []string{"VIGIL_SSH=" + ssh})
		a.stderrTTY = &tty
		done := make(chan int, 1)
		go func() { done <- a.run(ctx, []string{"runs", "--store", "ssh://build1/srv/runs.sqlite3"}) }()
		connecting := ""
		if tty {
			connecting = "vigil: connecting to ssh://build1/srv/runs.sqlite3: no answer yet (Ctrl-C stops)\n"
			deadline := time.Now().Add(5 * time.Second)
			for errb.String() != connecting && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
		} else {
			time.Sleep(1500 * time.Millisecond)
		}
		if errb.String() != connecting {
			t.Fatalf("terminal %v: stderr before the signal: %q", tty, errb.String())
		}
		start := time.Now()
		cancel()
		select {
		case code := <-done:
			if took := time.Since(start); code != ExitError || took > time.Second {
				t.Errorf("terminal %v: exit %d after %v", tty, code, took)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("terminal %v: the command did not end on the signal", tty)
		}
		if got, want := strings.TrimPrefix(errb.String(), connecting), "vigil: stopped by a signal before it finished\n"; got != want {
			t.Errorf("terminal %v: stderr after the signal: %q, want %q", tty, got, want)
		}
	}
}
