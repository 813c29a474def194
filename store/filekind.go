package store

import (
	"io/fs"
	"syscall"
)

// FileKind names what a file that is not a regular file is, for a refusal
// ("a named pipe (FIFO)"): vigil reads stores from regular files and
// directories only, since opening a FIFO blocks until a writer comes and a
// device reads forever. It is "" for a regular file.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// NotRegular is the refusal of a file that is not a regular file: it says
// what the file is.
func NotRegular(path string, m fs.FileMode) *Error {
	return Errorf(path, ErrNotAStore, nil, "%s, not a store file: vigil reads regular files and directories only", FileKind(m))
}

// Inode is the file's inode number (0 where the system gives none): a
// format that tails files by offset tells a file replaced under its name
// from one appended to by it.
func Inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
