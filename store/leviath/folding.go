package leviath

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vigil-run/vigil/store"
)

// A long journal is folded after Open returns. Folding reads every byte
// (a 1 GB journal is seconds of it), and the first screen needs none of
// what only the fold knows: the run's row is its meta.json, and its lease
// names the daemon from the Header and the restarts, which a skim of the
// frames' first bytes finds. So at open a journal of deferBytes or more,
// whose meta.json decodes and does not say waiting_input (an open prompt's
// number counts the journal's waiting stretches), is left to one
// background pass (started by the first read that waits for it, or
// foldDelay after Open), and its run reads as not counted yet meanwhile:
//
//   - Runs, RecentRuns: no Summary and StatsKnown false (counts "not yet
//     known"), the status and lease from meta.json and the skim; Runs waits
//     for the fold (a command's list is exact), RecentRuns does not and says
//     the page is not all (the explorer draws it, then reads Runs);
//   - Steps, StepDetail, ContextSamples, ProviderCalls, RunStats, RunFacts,
//     Requests of every episode and Problems wait for the run's fold;
//   - Head and Changes do not wait. When a fold is put in place, Changes
//     gives the run again if it reads otherwise (with its Summary, once
//     finished) and the open prompt the journal ends in; its rows were in
//     the store before any cursor, and the reads above return them.
//
// Nothing is guessed: a value the fold has not reached is absent.

// deferBytes is the journal size from which the fold runs in the
// background (tests lower it).
var deferBytes int64 = 32 << 20

// foldDelay is how long after Open the background fold starts when no
// read asks for it first: the first screen is drawn without it beside.
const foldDelay = 250 * time.Millisecond

// foldGate, when set, holds the background fold until it is closed
// (tests: to see the store before a fold is in place).
var foldGate chan struct{}

// deferFold leaves rs's journal to the background fold when it is long
// and its meta.json says all the first screen shows, and skims the lease's
// facts (Open only: the store is not logging yet).
func (s *Store) deferFold(rs *runState, f *os.File, size int64) bool {
	if size < deferBytes || !rs.hasFMeta || rs.fmetaErr != nil || rs.fmeta.Status == "waiting_input" {
		return false
	}
	sk, n, ok := skimOwners(f, size)
	s.journalBytes.Add(n)
	if !ok {
		return false // damage near the start, or a header too long to skim: read it now
	}
	rs.ident, rs.owners, rs.ownerAt = sk.ident, sk.owners, sk.ownerAt
	rs.pending, rs.done, rs.foldTo = true, make(chan struct{}), size
	s.deferred = append(s.deferred, rs)
	return true
}

// foldDeferred folds, off the lock, each journal Open left, newest run
// first, and puts each in place as it is done.
func (s *Store) foldDeferred(list []*runState, gate chan struct{}) {
	if gate != nil {
		<-gate
	}
	sort.SliceStable(list, func(i, j int) bool { return created(list[i].id) > created(list[j].id) })
	for _, rs := range list {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		var nr *runState
		if !closed {
			nr = newRunState(rs.id, rs.dir)
			nr.prefix, nr.born, nr.foldTo = rs.prefix, rs.born, rs.foldTo
			var quiet ledger // logs nothing: these rows were there before any cursor
			nr = s.readJournal(&quiet, nr, false)
			nr.foldTo = 0
		}
		s.mu.Lock()
		if nr != nil && !s.closed && s.runs[rs.id] == rs {
			s.install(rs, nr)
		}
		rs.pending = false
		close(rs.done)
		s.mu.Unlock()
	}
}

// install puts a folded run in place of its deferred one (s.mu held),
// reads what was appended since, and logs what readers have not seen: the
// run as it now reads, and a prompt the journal leaves open.
func (s *Store) install(rs, nr *runState) {
	nr.metaSig, nr.fmeta, nr.hasFMeta, nr.fmetaErr = rs.metaSig, rs.fmeta, rs.hasFMeta, rs.fmetaErr
	nr.inter, nr.interSig, nr.loggedSig = rs.inter, rs.interSig, rs.loggedSig
	s.runs[rs.id] = nr
	for i, r := range s.order {
		if r == rs {
			s.order[i] = nr
		}
	}
	// What the fold knew of the journal as it was at open is no write:
	// logged as caught up, so a reader's "updated" keeps its time.
	s.catching = true
	for i := range nr.episodes {
		if !nr.episodes[i].resolved {
			s.note(evRequest, nr, i)
		}
	}
	// The run again, if it reads otherwise now (a finished run's Summary,
	// a newer journaled meta): its counts are RunStats'.
	if sig := s.runSig(nr); sig != nr.loggedSig {
		nr.loggedSig = sig
		s.noteUpdate(evRun, nr, 0)
	}
	s.catching = false
	// What was written since open (appended frames, a new meta.json): the
	// store's writes, logged as such.
	s.syncRun(nr)
	if cur := s.runs[rs.id]; cur == nr {
		if m, ok := nr.meta(); ok {
			nr.trackWaiting(&s.ledger, m.Status, m.UpdatedAt)
		}
		if sig := s.runSig(nr); sig != nr.loggedSig {
			nr.loggedSig = sig
			s.noteUpdate(evRun, nr, 0)
		}
	}
}

// settle waits, s.mu held, until the runs named (every run, when none is)
// are folded, or ctx ends.
func (s *Store) settle(ctx context.Context, ids ...string) error {
	for {
		var wait *runState
		if len(ids) == 0 {
			for _, rs := range s.deferred {
				if rs.pending {
					wait = rs
					break
				}
			}
		}
		for _, id := range ids {
			if rs := s.runs[id]; rs != nil && rs.pending {
				wait = rs
				break
			}
		}
		if wait == nil {
			return nil
		}
		s.startFold()
		s.mu.Unlock()
		select {
		case <-wait.done:
		case <-ctx.Done():
		}
		s.mu.Lock()
		if err := ctx.Err(); err != nil && wait.pending {
			return newErr(filepath.Join(wait.dir, "run.lvr"), store.ErrIO, "still reading the journal: "+err.Error(), err)
		}
		if err := s.usable(); err != nil {
			return err
		}
	}
}

var (
	_ store.RecentRunner = (*Store)(nil)
	_ store.RunFinder    = (*Store)(nil)
)

// RecentRuns is the newest runs without waiting for a background fold:
// a run not folded yet has no counts (StatsKnown false, no Summary), and
// all is false while one is, so that the reader reads Runs after.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, false, err
	}
	runs := s.listRuns()
	all := true
	for _, rs := range s.deferred {
		all = all && !rs.pending
	}
	if limit > 0 && len(runs) > limit {
		// A run whose root is older than the page is left for Runs.
		in := map[string]bool{}
		for _, r := range runs[:limit] {
			in[r.ID] = true
		}
		page := runs[:0:0]
		for _, r := range runs[:limit] {
			if anc := s.ancestry(r.ID); len(anc) == 0 || in[anc[0]] {
				page = append(page, r)
			}
		}
		runs, all = page, false
	}
	return runs, all, nil
}

// HasRun says whether the store holds the run, without waiting for a fold.
func (s *Store) HasRun(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return false, err
	}
	return s.runs[id] != nil, nil
}

// skimmed is what a skim of a journal found.
type skimmed struct {
	ident   runIdentity
	owners  int
	ownerAt int64
}

// skimOwners walks a journal's frames by their length prefixes, reading
// each frame's first bytes only, and decodes the Header and the
// OwnershipChanged frames (both small): the lease's facts, without
// folding. ok is false on a length no frame can have, or a header or
// restart frame too long to be one.
func skimOwners(f *os.File, size int64) (sk skimmed, n int64, ok bool) {
	const maxSmall = 4 << 20
	headerMark := []byte(`{"Header":`)
	r := &skimReader{f: f, size: size}
	defer func() { n = r.read }()
	for off := int64(preambleLen); off < size; {
		head, err := r.at(off, 8+len(restartMarker))
		if err != nil {
			return sk, 0, false
		}
		if len(head) < 8 {
			return sk, 0, true // a length still being written: the fold reads it
		}
		l := binary.BigEndian.Uint64(head[:8])
		if l > maxFrame {
			return sk, 0, false
		}
		if int64(l) > size-off-8 {
			return sk, 0, true // a frame not whole yet
		}
		body := head[8:]
		isHeader, isOwner := bytes.HasPrefix(body, headerMark), bytes.HasPrefix(body, restartMarker)
		if isHeader || isOwner {
			if l > maxSmall {
				return sk, 0, false
			}
			payload := make([]byte, l)
			m, err := f.ReadAt(payload, off+8)
			r.read += int64(m)
			if err != nil && !errors.Is(err, io.EOF) {
				return sk, 0, false
			}
			var rec runRecord
			if v, _ := decodeFrame(payload[:m], &rec); v == frameOK {
				switch {
				case rec.Header != nil:
					sk.ident = rec.Header.Identity
				case rec.OwnershipChanged != nil:
					o := rec.OwnershipChanged
					sk.ident.MachineID, sk.ident.WorldID = o.MachineID, o.WorldID
					sk.owners++
					sk.ownerAt = o.At
				}
			}
		}
		r.last = int64(l)
		off += 8 + int64(l)
	}
	return sk, 0, true
}

// skimReader reads small pieces of a file at increasing offsets: a window
// of the file when frames are short (many frames a read), a few bytes a
// frame when they are long.
type skimReader struct {
	f    *os.File
	size int64
	buf  []byte
	base int64 // the file offset of buf[0]
	last int64 // the previous frame's length
	read int64 // bytes read from the file
}

func (r *skimReader) at(off int64, k int) ([]byte, error) {
	if off >= r.base && off+int64(k) <= r.base+int64(len(r.buf)) {
		return r.buf[off-r.base : off-r.base+int64(k)], nil
	}
	want := int64(512)
	if r.last < 16<<10 {
		want = 64 << 10
	}
	want = max(want, int64(k))
	want = min(want, r.size-off)
	if cap(r.buf) < int(want) {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, off)
	r.read += int64(m)
	r.buf, r.base = r.buf[:m], off
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return r.buf[:min(m, k)], nil
}
