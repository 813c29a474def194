package leviath

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vigil-run/vigil/store"
)

// refreshLocked brings memory up to date with the directory: new runs,
// appended frames, rewritten meta.json and sidecars. Each run costs a few
// stats; only appended journal bytes are read.
func (s *Store) refreshLocked() error {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return statErr(s.root, err)
	}
	var names []string
	for _, e := range ents {
		if isDirEntry(s.root, e) {
			names = append(names, e.Name())
		}
	}
	sortRunNames(names)
	var subset map[string]bool
	if s.single != "" {
		subset = s.subset(names)
	}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
		rs := s.runs[n]
		if rs == nil {
			if subset != nil && !subset[n] {
				continue
			}
			dir := filepath.Join(s.root, n)
			if !isRunDir(dir) {
				continue // a run directory the CLI has made but not filled yet
			}
			rs = newRunState(n, dir)
			rs.prefix = s.idPrefix(n)
			s.runs[n] = rs
			s.order = append(s.order, rs)
			s.note(evRun, rs, 0) // before any of its rows
			rs.born = s.seq
		}
		s.syncRun(rs)
	}
	for id, rs := range s.runs {
		if !present[id] {
			s.dropRun(rs)
		}
	}
	s.publishEnded()
	return nil
}

// rewound marks a change a cursor cannot follow (a run deleted, a journal
// replaced or shortened): every older cursor gets Reset.
func (s *Store) rewound() {
	s.resetAt = s.next()
}

func (s *Store) dropRun(rs *runState) {
	delete(s.runs, rs.id)
	for i, r := range s.order {
		if r == rs {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.rewound()
}

// reloadRun reads a run again from scratch (its journal was replaced).
func (s *Store) reloadRun(rs *runState) *runState {
	nr := newRunState(rs.id, rs.dir)
	nr.prefix, nr.born = rs.prefix, rs.born
	s.runs[rs.id] = nr
	for i, r := range s.order {
		if r == rs {
			s.order[i] = nr
		}
	}
	s.rewound()
	return nr
}

// subset is, in single mode, the opened run and every run below it: a
// sibling belongs when its parent_run_id (or a member's children list)
// says so.
func (s *Store) subset(names []string) map[string]bool {
	in := map[string]bool{s.single: true}
	for changed := true; changed; {
		changed = false
		for _, n := range names {
			if in[n] {
				continue
			}
			p, ok := s.parentOf(n)
			if (ok && in[p]) || in[s.childOf[n]] {
				in[n], changed = true, true
			}
		}
	}
	return in
}

// parentOf reads a sibling's parent_run_id (cached once known).
func (s *Store) parentOf(name string) (string, bool) {
	if rs := s.runs[name]; rs != nil {
		if m, ok := rs.meta(); ok {
			return m.parent(), true
		}
	}
	if p, ok := s.parents[name]; ok {
		return p, true
	}
	dir := filepath.Join(s.root, name)
	var m struct {
		Parent *string `json:"parent_run_id"`
	}
	if b, err := readCapped(filepath.Join(dir, "meta.json"), 4<<20); err == nil && json.Unmarshal(b, &m) == nil {
		s.parents[name] = orNil(m.Parent)
		return s.parents[name], true
	}
	if h := readHeader(filepath.Join(dir, "run.lvr")); h != nil {
		s.parents[name] = h.Meta.parent()
		return s.parents[name], true
	}
	return "", false
}

// readHeader decodes a journal's first frame when it is a Header.
func readHeader(p string) *struct {
	Identity runIdentity `json:"identity"`
	Meta     runMeta     `json:"meta"`
} {
	f, err := openFile(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	v, ok, _, err := readPreamble(f, fi.Size())
	if err != nil || !ok || v > MaxJournalVersion {
		return nil
	}
	var rec runRecord
	readFrames(f, preambleLen, fi.Size(), func(_ int64, payload []byte) bool {
		decodeFrame(payload, &rec)
		return false
	})
	return rec.Header
}

// syncRun reads what changed in one run directory.
func (s *Store) syncRun(rs *runState) {
	before := rs.state()
	s.readMeta(rs)
	rs = s.readJournal(&s.ledger, rs, !s.logging)
	s.readInteractions(rs)
	s.noteTornTail(rs)
	if rs.state() == before && rs.loggedSig != "" {
		return // nothing new: skip rebuilding the run's signature
	}
	if m, ok := rs.meta(); ok && !rs.pending {
		// (A run whose journal is not folded yet numbers no waiting
		// stretch: the journal's come first.)
		rs.trackWaiting(&s.ledger, m.Status, m.UpdatedAt)
		for _, c := range m.Children {
			if c != "" && c != rs.id {
				s.childOf[c] = rs.id
			}
		}
	}
	sig := s.runSig(rs)
	if sig != rs.loggedSig {
		if rs.loggedSig != "" {
			s.noteUpdate(evRun, rs, 0)
		}
		rs.loggedSig = sig
	}
}

// readMeta re-reads meta.json when it was replaced. The callback_secret
// in it is never decoded (runMeta has no field for it) and the bytes are
// cleared after decoding.
func (s *Store) readMeta(rs *runState) {
	p := filepath.Join(rs.dir, "meta.json")
	fi, err := os.Stat(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			rs.fmetaErr = statErr(p, err)
		}
		return
	}
	sig := sigOf(fi)
	if sig == rs.metaSig {
		return
	}
	b, err := readCapped(p, 4<<20)
	if err != nil {
		rs.fmetaErr = statErr(p, err)
		return
	}
	defer clear(b)
	var m runMeta
	if err := json.Unmarshal(b, &m); err != nil {
		rs.fmetaErr = newErr(p, store.ErrCorrupt, "meta.json does not decode as a Leviath RunMeta: "+err.Error(), err)
		rs.metaSig = sig
		return
	}
	rs.fmeta, rs.hasFMeta, rs.fmetaErr, rs.metaSig = m, true, nil, sig
}

// readJournal reads the frames appended to run.lvr since the last read,
// from the last good offset. It returns the run's state (a new one when the
// journal was replaced and had to be read again from the start).
//
// l is the ledger rows are logged in: the store's, or (the background fold
// of a long journal, off the lock) one of its own that logs nothing.
// mayDefer lets a long journal at open be left to that fold (deferFold).
func (s *Store) readJournal(l *ledger, rs *runState, mayDefer bool) *runState {
	if rs.pending {
		return rs // the background fold reads it (folding.go)
	}
	p := filepath.Join(rs.dir, "run.lvr")
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if rs.lvr.exists {
				rs = s.reloadRun(rs)
				s.readMeta(rs)
			}
			return rs
		}
		rs.jerr = statErr(p, err)
		return rs
	}
	sig := sigOf(fi)
	if rs.lvr.exists && (sig.ino != rs.lvr.ino || sig.size < rs.lvr.size) {
		rs = s.reloadRun(rs) // replaced or shortened: start over
		s.readMeta(rs)
	} else if rs.lvr.exists && sig != rs.lvr && rs.readPrint != "" && journalPrintAt(p, rs.off) != rs.readPrint {
		rs = s.reloadRun(rs) // written over in place: other bytes under what was read
		s.readMeta(rs)
	}
	if sig == rs.lvr && (rs.jerr != nil || rs.off > 0) {
		return rs // nothing new
	}
	if rs.jerr != nil && errors.Is(rs.jerr, store.ErrIO) {
		rs.jerr = nil // it may be readable now
	}
	if rs.jerr != nil {
		rs.lvr = sig
		return rs
	}
	f, err := openFile(p)
	if err != nil {
		rs.jerr = statErr(p, err)
		return rs
	}
	defer f.Close()
	size := sig.size
	if rs.foldTo > 0 && rs.foldTo < size {
		// The background fold stops where the journal ended at open: what
		// came after is read once it is in place, and logged for cursors.
		size, sig.size, sig.mtime = rs.foldTo, rs.foldTo, 0
	}
	from := rs.off     // (a summary from the fold cache moves it on)
	var hash *foldHash // of every byte this fold reads, when it may write a summary
	if rs.off == 0 {
		v, ok, n, err := readPreamble(f, size)
		s.journalBytes.Add(n)
		switch {
		case err != nil:
			rs.jerr = newErr(p, store.ErrCorrupt, err.Error(), nil)
		case !ok:
			// Fewer than 6 bytes so far: the writer is starting it.
		case v > MaxJournalVersion:
			rs.jerr = newErr(p, store.ErrNewerFormat, fmt.Sprintf(
				"journal format version %d is newer than vigil reads (version %d, Leviath 0.1 to 0.4): upgrade vigil", v, MaxJournalVersion), nil)
		case v == 0:
			rs.jerr = newErr(p, store.ErrCorrupt, "journal format version 0 does not exist", nil)
		default:
			rs.version, rs.off = v, preambleLen
		}
		if rs.jerr != nil || rs.off == 0 {
			rs.lvr = sig
			return rs
		}
		if !l.logging && size >= foldCacheBytes {
			// A long journal read for the first time: a summary of its fold
			// another process wrote leaves only the tail to read. When that
			// tail is long enough to fold in the background, the summary is
			// checked (its bytes hashed) only by that fold, which finds it
			// again: at open it would be hashed for nothing.
			cand, why := loadFold(p, rs.id, f)
			hash, _ = hashJournalTo(f, preambleLen)
			use := func() {
				fs, fh, why := cand.verifyFold(f)
				if why != "" {
					foldCacheDebug(p, "not used ("+why+"): folding the journal from its start")
					return
				}
				fs.restore(rs)
				from, hash = rs.off, fh
				foldCacheDebug(p, fmt.Sprintf("%d of %d bytes from the summary", fs.Off, size))
			}
			switch {
			case why != "":
				foldCacheDebug(p, "not used ("+why+"): folding the journal from its start")
			case cand != nil && cand.hd.Off <= size && (!mayDefer || size-cand.hd.Off < deferBytes):
				use()
			case cand != nil && cand.hd.Off <= size:
				if s.deferFold(rs, f, size) {
					return rs // the background fold checks and uses the summary
				}
				use()
			}
		}
		if rs.off == preambleLen && mayDefer && s.deferFold(rs, f, size) {
			return rs
		}
	}
	var rec runRecord
	fold := func(off int64, payload []byte) bool {
		switch v, err := decodeFrame(payload, &rec); v {
		case frameOK:
			rs.apply(l, off, &rec)
		case frameUnknown:
			rs.skipped++
		case frameBadShape:
			rs.addNote(l, rowJournal, 0, fmt.Sprintf("journal: skipped a %s record at byte %d that does not decode (%s)",
				rec.name(), off, decodeWhy(err)))
		case frameInvalid:
			return false
		}
		return true
	}
	for {
		next, st, n, err := readFramesHashed(f, rs.off, size, hash, fold)
		s.journalBytes.Add(n)
		rs.off = next
		if err != nil || st == tailClean {
			rs.tornAt = -1
			break
		}
		// An incomplete frame (the writer may be mid-append: it is read
		// again next time) or a damaged one. Either way, a later daemon
		// restart appends after the bad bytes: resume at its first frame.
		if rs.tornAt != rs.off {
			rs.tornAt, rs.scanFrom, rs.badNoted = rs.off, rs.off+9, false
		}
		at, n, _ := findRestart(f, rs.off, rs.scanFrom, size)
		s.journalBytes.Add(n)
		if at < 0 {
			rs.scanFrom = max(rs.off+9, size-int64(len(restartMarker))+1)
			if st == tailBad && !rs.badNoted {
				rs.badNoted = true
				rs.addSlotNote(l, slotDamaged, fmt.Sprintf("journal: the frame at byte %d is damaged; nothing after it can be read until the daemon restarts the run", rs.off))
			}
			break
		}
		rs.addSlotNote(l, slotResumed, fmt.Sprintf("journal: bytes %d to %d are a frame a crash tore; reading resumes at the daemon's restart", rs.off, at))
		rs.off, rs.tornAt = at, -1
	}
	rs.lvr = sig
	rs.readPrint = printOf(f, rs.off)
	if !l.logging && rs.jerr == nil && rs.off-max(from, preambleLen) >= foldCacheBytes {
		saveFold(p, rs, f, hash) // vigil's reading, not a refresh's: the next process starts here
	}
	return rs
}

// readInteractions reads interactions.json while the run waits (or while
// one is there).
func (s *Store) readInteractions(rs *runState) {
	if rs.status() != "waiting_input" && !rs.interSig.exists {
		return
	}
	p := filepath.Join(rs.dir, "interactions.json")
	fi, err := os.Stat(p)
	if err != nil {
		if rs.interSig.exists {
			rs.inter, rs.interSig = nil, fileSig{}
		}
		return
	}
	sig := sigOf(fi)
	if sig == rs.interSig {
		return
	}
	b, err := readCapped(p, maxSidecar)
	if err != nil {
		return
	}
	rs.inter, rs.interSig = parseInteractions(b), sig
	if n := len(rs.episodes); n > 0 && !rs.episodes[n-1].resolved {
		s.noteUpdate(evRequest, rs, n-1)
	}
}

// decodeWhy says in a few words why a known record did not decode.
func decodeWhy(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: a JSON %s where %s belongs", te.Field, te.Value, te.Type)
	}
	return oneLine(err.Error())
}

// runFiles is what syncRun compares to tell whether anything was read.
type runFiles struct {
	lvr, meta, inter fileSig
	rows, episodes   int
	jerr, fmetaErr   bool
}

func (rs *runState) state() runFiles {
	return runFiles{rs.lvr, rs.metaSig, rs.interSig, len(rs.rows), len(rs.episodes), rs.jerr != nil, rs.fmetaErr != nil}
}
