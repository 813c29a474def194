package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A far side that does not answer is said to be so after a second (before
// the explorer draws, the terminal is otherwise silent for up to 30 s),
// and a signal then ends the command within a second with one line that
// says why, not the cancelled read's own words.
func TestASilentFarSideIsSaidAndASignalEndsIt(t *testing.T) {
	ssh := filepath.Join(t.TempDir(), "ssh")
	if err := os.WriteFile(ssh, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, []string{"runs", "--store", "ssh://build1/srv/runs.sqlite3"}, nil, &out, &errb, []string{"VIGIL_SSH=" + ssh})
	}()
	connecting := "vigil: connecting to ssh://build1/srv/runs.sqlite3: no answer yet (Ctrl-C stops)\n"
	deadline := time.Now().Add(5 * time.Second)
	for errb.String() != connecting && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if errb.String() != connecting {
		t.Fatalf("stderr before the signal: %q", errb.String())
	}
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		if took := time.Since(start); code != ExitError || took > time.Second {
			t.Errorf("exit %d after %v", code, took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the command did not end on the signal")
	}
	if got, want := strings.TrimPrefix(errb.String(), connecting), "vigil: stopped by a signal before it finished\n"; got != want {
		t.Errorf("stderr after the signal: %q, want %q", got, want)
	}
}
