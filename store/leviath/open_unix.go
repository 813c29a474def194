//go:build unix

package leviath

import (
	"os"
	"syscall"
)

// openFile opens a file of a run directory for reading, refusing anything
// but a regular file before a read can block: O_NONBLOCK makes the open of
// a FIFO return at once instead of waiting for a writer (it changes nothing
// for a regular file), and fstat then says what was opened.
func openFile(p string) (*os.File, error) {
	if err := refuseHeld(p); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
