package sqlitex

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The header and schema are read on an immutable connection, which takes
// no lock (preflight.go): nothing keeps a writer out while they are read.
// A rollback-journal writer commits by writing the new page 1 (and its page
// count) among the other pages, and a checkpoint writes a WAL's pages into
// the file; a read across either can see a header ahead of the file
// ("truncated") or schema pages torn mid-write ("malformed"). Neither is
// damage, and a live store must never be called damaged. So a read counts
// only when it was steady: the file looked the same before and after it,
// and no rollback journal was live beside it. An unsteady read is taken
// again, for up to steadyFor.

// steadyFor bounds how long a header read waits for a pause in the
// writes; steadyEvery is the wait between tries.
const (
	steadyFor   = time.Second
	steadyEvery = 2 * time.Millisecond
)

// steadyHeader is readHeader taken while the file held still. steady says
// whether it was; when the file never paused within steadyFor, the last
// read is returned with steady false, and its verdict is not to be trusted.
func steadyHeader(abs string, tables bool) (head []byte, names map[string]bool, size int64, steady bool, err error) {
	deadline := time.Now().Add(steadyFor)
	for {
		before := statFiles(abs)
		head, names, err = readHeader(abs, tables)
		after := statFiles(abs)
		steady = !before.changed(after, readSnapshot) && !liveJournal(abs+"-journal")
		if steady || time.Now().After(deadline) {
			return head, names, after.size, steady, err
		}
		time.Sleep(steadyEvery)
	}
}

// journalMagic opens every rollback journal SQLite writes while a
// transaction is under way; a journal at rest is absent, empty (TRUNCATE)
// or has its header zeroed (PERSIST).
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// liveJournal reports whether p is a rollback journal a transaction is
// writing (or left hot). It reads the file directly: SQLite's locks are on
// the database file, never on its -journal, so closing it drops none.
func liveJournal(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := make([]byte, len(journalMagic))
	if _, err := io.ReadFull(f, h); err != nil {
		return false
	}
	return bytes.Equal(h, journalMagic)
}

// unsteadyErr is the refusal of a file that did not hold still for
// steadyFor: busy, not damaged.
func unsteadyErr(abs string) error {
	why := "it was written without a pause for " + steadyFor.String() + "; try again"
	if liveJournal(abs + "-journal") {
		why = filepath.Base(abs) + "-journal sits beside it (a writer mid-transaction, or one that stopped mid-transaction) and the file cannot be judged until that is rolled back or committed"
	}
	return store.Errorf(abs, store.ErrLocked, nil, "%s", store.Because(store.ErrLocked, why))
}
