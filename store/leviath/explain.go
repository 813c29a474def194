package leviath

import (
	"os"
	"path/filepath"

	"github.com/vigil-run/vigil/store"
)

// Explain says why a path that looks meant for Leviath (a file named
// run.lvr, or a directory holding run.lvr or meta.json) is not a run vigil
// can read, so that the user hears about the journal's torn magic or the
// FIFO in the run directory rather than that the path is not SQLite or is
// a directory. Detect has already said no; Explain never opens anything
// but a regular file.
func Explain(path string) error {
	abs := path
	if a, err := filepath.Abs(path); err == nil {
		abs = a
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		if filepath.Base(abs) != "run.lvr" {
			return nil
		}
		return explainJournal(abs)
	}
	for _, name := range []string{"run.lvr", "meta.json"} {
		inner := filepath.Join(abs, name)
		fi, err := os.Stat(inner)
		if err != nil || fi.IsDir() {
			continue
		}
		if !fi.Mode().IsRegular() {
			return store.NotRegular(inner, fi.Mode())
		}
	}
	if isFile(filepath.Join(abs, "run.lvr")) {
		return explainJournal(filepath.Join(abs, "run.lvr"))
	}
	if isFile(filepath.Join(abs, "meta.json")) {
		return newErr(abs, store.ErrNotAStore, "not a Leviath run: its meta.json has no run_id and status, and there is no run.lvr", nil)
	}
	return nil
}

const sqliteMagic = "SQLite format 3\x00"

// explainJournal is the refusal of a run.lvr Detect did not take: what its
// first bytes are instead of the magic, or why it cannot be read.
func explainJournal(p string) error {
	if refuseHeld(p) != nil {
		return nil // a SQLite file this process has open: the SQLite formats say what it is
	}
	f, err := openFile(p)
	if err != nil {
		return statErr(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return statErr(p, err)
	}
	var head [16]byte
	if n, _ := f.ReadAt(head[:], 0); string(head[:n]) == sqliteMagic {
		return nil // a SQLite file under that name: the SQLite formats say what it is
	}
	if _, _, _, err := readPreamble(f, fi.Size()); err != nil {
		return newErr(p, store.ErrNotAStore, err.Error(), err)
	}
	return newErr(p, store.ErrNotAStore, "not a Leviath journal: it ends before its magic", nil)
}
