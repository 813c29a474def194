package sqlitex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vigil-run/vigil/store"
)

// Preflight answers the cheap questions about a path before SQLite sees it:
// missing, a directory, empty, unreadable, not SQLite, truncated. A reader
// opening a WAL database nobody else has open creates -wal and -shm beside
// it, and a file a source refuses should be left exactly as it was found.
//
// The two refusals that depend on what the format expected are worded by
// the adapter; empty fields say the sentinels' own words.
type Preflight struct {
	IsDir string // why a directory is not this format's store
	Empty string // why an empty file is not
}

// Check runs the preflight and returns the absolute path and the file's
// first 100 bytes (the SQLite header, for UserVersion).
//
// It opens and closes the file itself. POSIX drops every fcntl lock a
// process holds on a file when any descriptor of it is closed, so Check
// must not be run on a file this process already has open through SQLite.
func (p Preflight) Check(path string) (abs string, head []byte, err error) {
	abs, err = filepath.Abs(path)
	if err != nil {
		return "", nil, store.Errorf(path, store.ErrNotFound, err, "%v", err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil, store.Errorf(abs, store.ErrNotFound, err, "")
	case errors.Is(err, os.ErrPermission):
		return "", nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, "permission denied"))
	case err != nil:
		return "", nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, err.Error()))
	case fi.IsDir():
		return "", nil, store.Errorf(abs, store.ErrIsDirectory, nil, "%s", p.IsDir)
	case fi.Size() == 0:
		return "", nil, store.Errorf(abs, store.ErrNotAStore, nil, "%s", or(p.Empty, store.Because(store.ErrNotAStore, "the file is empty")))
	}
	f, err := os.Open(abs)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return "", nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, "permission denied"))
		}
		return "", nil, store.Errorf(abs, store.ErrIO, err, "%s", store.Because(store.ErrIO, err.Error()))
	}
	defer f.Close()
	head = make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	if kind, detail := HeaderProblem(head[:n], fi.Size()); kind != nil {
		e := store.Errorf(abs, kind, nil, "")
		if detail != "" {
			e.Detail = store.Because(kind, detail)
		}
		return "", nil, e
	}
	return abs, head[:n], nil
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

var magic = []byte("SQLite format 3\x00")

// HeaderProblem judges a file by its first 100 bytes and its size. It
// returns the sentinel kind and a detail, or nil.
func HeaderProblem(h []byte, size int64) (kind error, detail string) {
	if len(h) < len(magic) || string(h[:len(magic)]) != string(magic) {
		return store.ErrNotSQLite, ""
	}
	if len(h) < 100 {
		return store.ErrCorrupt, "shorter than a SQLite header"
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return store.ErrCorrupt, "bad page size in the header"
	}
	// The in-header page count is valid when its version-valid-for number
	// matches the change counter (SQLite 3.7.0 and later always write it).
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if binary.BigEndian.Uint32(h[92:96]) == binary.BigEndian.Uint32(h[24:28]) && pages > 0 && size < pages*pageSize {
		return store.ErrCorrupt, fmt.Sprintf("truncated: %d of %d bytes", size, pages*pageSize)
	}
	return nil, ""
}

// UserVersion is PRAGMA user_version as the header stores it.
func UserVersion(h []byte) int64 {
	if len(h) < 64 {
		return 0
	}
	return int64(int32(binary.BigEndian.Uint32(h[60:64])))
}
