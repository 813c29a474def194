package harness

import (
	"errors"
	"path/filepath"
	"syscall"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// createDirErr is why a new store cannot be made in abs's directory, in the
// directory's words: the temporary name Create builds under is vigil's
// business, not the user's, so it never appears in the message.
func createDirErr(abs string, err error) error {
	dir := filepath.Dir(abs)
	why := func(kind error, detail string) error {
		return &store.Error{Path: abs, Kind: kind, Detail: "cannot create the store: " + detail, Err: err}
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		return why(store.ErrNotFound, "there is no directory "+dir)
	case errors.Is(err, syscall.ENOTDIR):
		return why(store.ErrNotFound, dir+" is not a directory")
	case errors.Is(err, syscall.EROFS):
		return why(store.ErrReadOnly, dir+" is on a read-only file system")
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return why(store.ErrReadOnly, "no permission to write in "+dir)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return sqlitex.DiskFullError(abs)
	}
	var no syscall.Errno
	if errors.As(err, &no) {
		return why(store.ErrIO, no.Error()+" in "+dir)
	}
	return why(store.ErrIO, "cannot make a file in "+dir)
}
