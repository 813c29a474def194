package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// A decision the link takes with it is read again through a new link, by
// a new agent, while the old agent may still be writing it: the old
// agent's process outlives its link and finishes what it was doing (Agent
// waits for its calls). Read too early, the store still shows the request
// waiting, the near log says so, and a moment later the old agent writes
// the decision: a final audit line that contradicts the store.
//
// So an agent decides holding an exclusive lock on a file of the far
// account's own (the store's identity in its name), and reads requests
// holding a shared one: a new agent's read waits until the old agent has
// finished, or abandoned, the decision in flight.

// DecideLock is the lock file for the store at path in the directory dir
// (the far account's state directory).
func DecideLock(dir, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "locks", "decide-"+hex.EncodeToString(sum[:8])+".lock")
}

// lockDecisions takes the lock at path, exclusive to decide and shared to
// read, and returns its release. Without a path, or where the lock cannot
// be had (no state directory), there is nothing to wait for: it returns a
// release that does nothing.
func lockDecisions(path string, exclusive bool) func() {
	if path == "" {
		return func() {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	if err := flock(f, exclusive); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the file releases the lock
}
