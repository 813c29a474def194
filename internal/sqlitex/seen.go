package sqlitex

// Seen is what one look at a SQLite file through SQLite told (Preflight.Look):
// its header and the tables its own pages name, with the file's state at
// the look. Opening a store takes one such look: the formats that try the
// file in turn ask it (HasTable) instead of each opening a connection of its
// own, and the one that opens the file takes its header (Fits) instead of
// reading it again.
type Seen struct {
	Abs    string
	Head   []byte
	Tables map[string]bool // the tables in the file's own pages; nil when they could not be read
	at     files           // the files as they were just before the look
}

// HasTable says whether the file holds table name, and whether that answer
// is sure. The look reads the file's own pages, not its WAL or rollback
// journal: a table it names is there (no format here drops its tables), but
// one it does not name may still be in commits a WAL holds, or under a
// journal a writer is rolling back, so "no" is sure only without either.
func (s *Seen) HasTable(name string) (has, sure bool) {
	if s.Tables == nil {
		return false, false
	}
	if s.Tables[name] {
		return true, true
	}
	if s.at.wal && walHasFrames(s.Abs+"-wal", s.at.walSize) {
		return false, false
	}
	if Exists(s.Abs + "-journal") {
		return false, false
	}
	return false, true
}

// Fits reports whether the header still stands for the file at abs: the
// same path, and the file and its companions unchanged since the look. A
// format's Open takes the header only then, and reads it again otherwise.
func (s *Seen) Fits(abs string) bool {
	if s == nil || s.Abs != abs {
		return false
	}
	now := statFiles(abs)
	return s.at.sameFile(now) && !s.at.changed(now, readSnapshot)
}
