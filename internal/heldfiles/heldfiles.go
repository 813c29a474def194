// Package heldfiles counts this process's SQLite connections by the
// device and inode of their database file, so that code reading files
// by other means can leave such a file alone.
//
// On POSIX, close() of any descriptor of a file drops every lock this
// process holds on it, SQLite's included: a WAL connection's SHARED lock
// goes, and the next connection of another process to close thinks it is
// the last, checkpoints and unlinks the -wal the writer here still writes
// into. SQLite keeps its own descriptors of one file in step (its inode
// table defers their closes), but it cannot see an os.Open of the file by
// Go code beside it. Every connection vigil opens is counted here (see
// internal/sqlitex), and code that opens files with the os (the Leviath
// journal reader) asks Held first. This package imports no SQLite, so the
// formats that need none may use it.
package heldfiles

import (
	"sync"
	"syscall"
)

type inode struct{ dev, ino uint64 }

var held = struct {
	sync.Mutex
	n map[inode]int
}{n: map[inode]int{}}

// Hold counts one more SQLite connection to the file (dev, ino); release
// takes it back (only its first call counts).
func Hold(dev, ino uint64) (release func()) {
	k := inode{dev, ino}
	held.Lock()
	held.n[k]++
	held.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			held.Lock()
			if held.n[k]--; held.n[k] <= 0 {
				delete(held.n, k)
			}
			held.Unlock()
		})
	}
}

// HoldPath is Hold for the file at path, or a release that does nothing
// when there is no file there (SQLite then creates it: a new file's
// connection is counted from its next open).
func HoldPath(path string) (release func()) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return func() {}
	}
	return Hold(uint64(st.Dev), uint64(st.Ino))
}

// Held reports whether this process has a SQLite connection open to the
// file at path (followed through links, as open() would).
func Held(path string) bool {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return false
	}
	held.Lock()
	defer held.Unlock()
	return held.n[inode{uint64(st.Dev), uint64(st.Ino)}] > 0
}
