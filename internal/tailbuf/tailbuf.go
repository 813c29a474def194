// Package tailbuf keeps the end of what a child process writes (its
// standard error), to say in one line why it ended.
package tailbuf

import (
	"strings"
	"sync"
)

// Buffer keeps the last Max bytes written to it; it is safe for concurrent
// use.
type Buffer struct {
	Max int

	mu sync.Mutex
	b  []byte
}

func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		t.b = t.b[len(t.b)-t.Max:]
	}
	return len(p), nil
}

// String is what is kept.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// LastLine is the last line kept that is not blank, trimmed.
func (t *Buffer) LastLine() string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
