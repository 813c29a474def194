package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ScanField hands fn the whole TEXT or BLOB value in column of table's row
// rowid, a piece at a time, and returns its length (CopyField's rules on
// the table, NULL and encoding hold).
//
// Unlike CopyField, fn is called inside the read transaction, straight
// from SQLite's buffer: it must only compute in memory (a shrinker, a
// counter, a hash), never wait on I/O, and never keep the slice. In
// return, a session is bounded by time (FieldHold), not by 16 MiB: each
// new session walks the value's overflow chain to where it starts, and on
// 200 MB the walks of 13 sessions cost three times the reading itself.
// So that a slow machine (sessions cut short by the clock) never brings
// that back, a session reads at least as much as its walk (what was read
// before it), and 16 MiB: the walks cost at most the reading.
// A value whose length changes between sessions is ErrFieldChanged.
func ScanField(ctx context.Context, db *sql.DB, table, column string, rowid int64, fn func([]byte) error) (size int64, err error) {
	size = -1
	var off int64
	for size < 0 || off < size {
		got, total, err := scanSession(ctx, db, table, column, rowid, off, fn)
		if errors.Is(err, errNoBlob) {
			_, size, err := copyWhole(ctx, db, table, column, rowid, writerFn(fn), -1)
			return size, err
		}
		if err != nil {
			return size, err
		}
		if size >= 0 && total != size {
			return size, ErrFieldChanged
		}
		size = total
		if got == 0 && off < size {
			return size, ErrFieldChanged
		}
		off += got
	}
	return size, nil
}

// FieldHold is how long one read transaction of ScanField reads before it
// lets the connection go (it reads at least one piece).
var FieldHold = 250 * time.Millisecond

func scanSession(ctx context.Context, db *sql.DB, table, column string, rowid, off int64, fn func([]byte) error) (n, size int64, err error) {
	err = onBlobConn(ctx, db, off == 0, func(h sqlite3Handle) error {
		n, size, err = h.scan(ctx, table, column, rowid, off, -1, time.Now().Add(FieldHold), max(off, int64(FieldSession)), fn)
		return err
	})
	return n, size, err
}

type writerFn func([]byte) error

func (f writerFn) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}
