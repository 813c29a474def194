//go:build !unix

package leviath

import "os"

// openFile opens a file of a run directory for reading, refusing anything
// but a regular file.
func openFile(p string) (*os.File, error) {
	if err := refuseHeld(p); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
