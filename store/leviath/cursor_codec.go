package leviath

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/vigil-run/vigil/store"
)

// A cursor written down (store.CursorCodec) is what the reader has of each
// run, in terms every process reading the same journals agrees on: ids
// come from the journal (ids.go), not from the order one process read it
// in. Read back by another process (vigil agent started for a new link),
// Changes compares those marks with what that process read: rows after the
// last row id, samples, calls and waiting stretches after their counts, the
// newest sample when its provider count was still to come, the open prompt
// and the run's row when they read otherwise now. A run gone, a journal
// shorter than the bytes the marks cover, or other bytes under them (a
// fingerprint of the journal's head and of the bytes before the marks'
// end), or a run numbered otherwise: Reset, and the cursor says why.

// cursorCodecVersion is the written cursor's layout: another one is not read.
const cursorCodecVersion = 1

type wireCursor struct {
	V      int                  `json:"v"`
	Format string               `json:"format"`
	Runs   map[string]*runMarks `json:"runs"`
	Reset  string               `json:"reset,omitempty"` // a cursor that must reload, and why
	// Folding are the runs left out of Runs because they were still being
	// folded: given whole once they are, that is no write (Unwritten).
	Folding []string `json:"folding,omitempty"`
	// FoldingAt is what the reader has of each of them (cursor_folding.go;
	// absent from an older vigil's cursor).
	FoldingAt map[string]foldMark `json:"folding_at,omitempty"`
}

// caughtRun is a mark's Run when the run reads otherwise only because its
// fold was put in place: send it again, marked as no write.
const caughtRun = "="

// runMarks is how far a reader has one run.
type runMarks struct {
	Prefix   int64  `json:"prefix"`           // the run's id prefix (idPrefix)
	Off      int64  `json:"off"`              // journal bytes the marks cover
	Journal  string `json:"journal"`          // fingerprint of those bytes' head and tail
	Row      int64  `json:"row"`              // the last row id the reader has (0: none)
	Samples  int    `json:"samples"`          // samples the reader has
	Unpaired bool   `json:"unpaired"`         // the last of them had no provider count yet
	Calls    int    `json:"calls"`            // provider calls the reader has
	Waits    int    `json:"waits"`            // waiting stretches the reader has
	Open     string `json:"open,omitempty"`   // the last one, open, as the reader has it ("*": send it again)
	Run      string `json:"run,omitempty"`    // the run's row as the reader has it ("": send it again)
	Torn     bool   `json:"torn,omitempty"`   // the journal was unreadable past Off then (no fingerprint check past it)
	Absent   bool   `json:"absent,omitempty"` // no journal yet
}

var _ store.CursorCodec = (*Store)(nil)

// EncodeCursor writes a Leviath cursor down (store.CursorCodec). It does
// not wait for a background fold: a run not folded yet is left out of the
// marks, as a run the reader has not seen, and Changes after the cursor
// gives it whole once it is folded (a remote reader's first screen is
// drawn as soon as a local one's).
func (s *Store) EncodeCursor(cur store.Cursor) ([]byte, error) {
	c, ok := cur.(*Cursor)
	if !ok || c == nil {
		name := "nil"
		if cur != nil {
			name = cur.CursorFormat()
		}
		return nil, fmt.Errorf("a %s cursor is not a Leviath one", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	w := wireCursor{V: cursorCodecVersion, Format: Format}
	switch {
	case c.dead != "":
	case c.marks != nil:
		w.Runs = c.marks
		w.Folding, w.FoldingAt = wireFolding(c.folding)
	case c.src != s:
		w.Reset = "the cursor was made on another Leviath source"
	case c.seq < s.resetAt:
		w.Reset = "a run was deleted or a journal replaced after the cursor"
	case c.seq < s.cut:
		w.Reset = "the cursor is older than the change log keeps"
	default:
		// The runs being folded when the cursor was made, and those still
		// being folded now: the reader has not got their folds.
		folding := make(map[string]foldMark, len(c.folding))
		for id, m := range c.folding {
			folding[id] = m
		}
		for _, rs := range s.order {
			if _, ok := folding[rs.id]; !ok && rs.pending && rs.born <= c.seq {
				folding[rs.id] = foldMarkOf(rs)
			}
		}
		w.Runs = s.marksAt(c.seq, folding)
		w.Folding, w.FoldingAt = wireFolding(folding)
	}
	if c.dead != "" {
		w.Reset, w.Runs = c.dead, nil
	}
	return json.Marshal(w)
}

// DecodeCursor reads back what EncodeCursor wrote (store.CursorCodec).
// Whether the journals are still the ones it was made on is for Changes
// to tell (Reset), as for any cursor.
func (s *Store) DecodeCursor(b []byte) (store.Cursor, error) {
	var w wireCursor
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errors.New("not a written Leviath cursor: " + err.Error())
	}
	if w.Format != Format || w.V != cursorCodecVersion {
		return nil, fmt.Errorf("a written %s cursor of layout %d; this vigil reads leviath layout %d", w.Format, w.V, cursorCodecVersion)
	}
	if w.Reset != "" {
		return &Cursor{dead: w.Reset}, nil
	}
	if w.Runs == nil {
		return nil, errors.New("a written Leviath cursor without marks")
	}
	return &Cursor{marks: w.Runs, folding: readFolding(w.Folding, w.FoldingAt)}, nil
}

// ResetReason says why Changes answered Reset to the cursor before this
// one (store.ResetReason).
func (c *Cursor) ResetReason() string { return c.why }

// marksAt is what a reader at log position seq has of every run (s.mu
// held): each run as it is now, less what the log holds after seq. The
// runs in folding the reader has not got the fold of: they are left out.
func (s *Store) marksAt(seq int64, folding map[string]foldMark) map[string]*runMarks {
	out := map[string]*runMarks{}
	byRun := map[*runState]*runMarks{}
	for _, rs := range s.order {
		if _, f := folding[rs.id]; rs.born > seq || rs.pending || f {
			continue // the reader has not seen it (or not its fold)
		}
		m := s.marksNow(rs)
		out[rs.id], byRun[rs] = m, m
	}
	type firsts struct {
		row, sample, call, wait int32 // the first new item after seq (-1: none)
		updSample, updWait      map[int32]bool
	}
	fs := map[*runState]*firsts{}
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].seq > seq })
	for _, e := range s.log[i:] {
		m := byRun[e.run]
		if m == nil {
			continue
		}
		f := fs[e.run]
		if f == nil {
			f = &firsts{row: -1, sample: -1, call: -1, wait: -1, updSample: map[int32]bool{}, updWait: map[int32]bool{}}
			fs[e.run] = f
		}
		first := func(p *int32) {
			if *p < 0 {
				*p = e.idx
			}
		}
		switch {
		case e.kind == evRun && e.caught:
			if m.Run != "" {
				m.Run = caughtRun // only its fold put in place: again, as no write
			}
		case e.kind == evRun:
			m.Run = "" // changed since: send it again
		case e.kind == evStep:
			first(&f.row)
		case e.kind == evSample && e.update:
			f.updSample[e.idx] = true
		case e.kind == evSample:
			first(&f.sample)
		case e.kind == evCall:
			first(&f.call)
		case e.kind == evRequest && e.update:
			f.updWait[e.idx] = true
		case e.kind == evRequest:
			first(&f.wait)
		}
	}
	for rs, f := range fs {
		m := byRun[rs]
		if f.row >= 0 {
			m.Row = 0
			if f.row > 0 {
				m.Row = rs.rows[f.row-1].id
			}
		}
		if f.sample >= 0 {
			m.Samples = int(f.sample)
		}
		if m.Samples > 0 {
			last := int32(m.Samples - 1)
			m.Unpaired = rs.samples[last].usage == nil || f.updSample[last]
		} else {
			m.Unpaired = false
		}
		if f.call >= 0 {
			m.Calls = int(f.call)
		}
		if f.wait >= 0 {
			m.Waits = int(f.wait)
		}
		m.Open = ""
		if m.Waits > 0 {
			last := int32(m.Waits - 1)
			switch ep := &rs.episodes[last]; {
			case f.updWait[last]:
				m.Open = "*" // resolved or reworded since: the reader's copy is old
			case !ep.resolved:
				m.Open = s.requestSig(rs, ep)
			}
		}
	}
	return out
}

// marksNow is what a reader that has everything has of rs.
func (s *Store) marksNow(rs *runState) *runMarks {
	m := &runMarks{Prefix: rs.prefix, Off: rs.off, Samples: len(rs.samples), Calls: len(rs.calls), Waits: len(rs.episodes),
		Run: sigHash(rs.loggedSig), Torn: rs.tornAt >= 0, Absent: !rs.lvr.exists}
	if n := len(rs.rows); n > 0 {
		m.Row = rs.rows[n-1].id
	}
	if n := len(rs.samples); n > 0 {
		m.Unpaired = rs.samples[n-1].usage == nil
	}
	if n := len(rs.episodes); n > 0 && !rs.episodes[n-1].resolved {
		m.Open = s.requestSig(rs, &rs.episodes[n-1])
	}
	if rs.lvr.exists && rs.jerr == nil {
		m.Journal = s.journalPrint(rs, rs.off)
	}
	return m
}

func (s *Store) requestSig(rs *runState, ep *episode) string {
	b, _ := json.Marshal(s.request(rs, ep))
	return sigHash(string(b))
}

func sigHash(sig string) string {
	if sig == "" {
		return ""
	}
	h := fnv.New64a()
	io.WriteString(h, sig)
	return strconv.FormatUint(h.Sum64(), 16)
}

// printBytes is how much of a journal's head, and of the bytes before a
// mark, its fingerprint covers.
const printBytes = 4 << 10

// journalPrint fingerprints run.lvr's bytes before off: its first and its
// last printBytes ("" when they cannot be read). A journal written over
// in place has other bytes there.
func (s *Store) journalPrint(rs *runState, off int64) string {
	if rs.printOff == off && rs.print != "" {
		return rs.print
	}
	p := journalPrintAt(filepath.Join(rs.dir, "run.lvr"), off)
	if p != "" {
		rs.printOff, rs.print = off, p
	}
	return p
}

// journalPrintAt is printOf the journal at path.
func journalPrintAt(path string, off int64) string {
	f, err := openFile(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return printOf(f, off)
}

// printOf fingerprints f's first printBytes and the printBytes before off
// ("" when they cannot be read: the file is shorter). Two small reads,
// whatever the journal's length: they are not counted as journal bytes
// read (journalBytes counts frames).
func printOf(f *os.File, off int64) string {
	if off <= 0 {
		return ""
	}
	h := fnv.New64a()
	buf := make([]byte, printBytes)
	n, _ := f.ReadAt(buf[:min(off, printBytes)], 0)
	h.Write(buf[:n])
	from := max(0, off-printBytes)
	m, _ := f.ReadAt(buf[:off-from], from)
	h.Write(buf[:m])
	if int64(n) < min(off, printBytes) || int64(m) < off-from {
		return "" // shorter than off: not the bytes read
	}
	return strconv.FormatInt(off, 10) + ":" + strconv.FormatUint(h.Sum64(), 16)
}

// changesSince is Changes after a written-down cursor (s.mu held, store
// refreshed and folded): what this process read that the marks do not
// cover, a page at a time.
func (s *Store) changesSince(c *Cursor) (*store.Changes, store.Cursor) {
	ch := &store.Changes{}
	reset := func(why string) (*store.Changes, store.Cursor) {
		return &store.Changes{Reset: true}, &Cursor{src: s, seq: s.seq, why: why}
	}
	if c.dead != "" {
		return reset(c.dead)
	}
	// The runs the reader has must all be here, numbered as it has them,
	// over the same bytes.
	ids := make([]string, 0, len(c.marks))
	for id := range c.marks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m, rs := c.marks[id], s.runs[id]
		switch {
		case rs == nil:
			return reset("run " + id + " is gone")
		case rs.prefix != m.Prefix:
			return reset("run " + id + "'s rows are numbered otherwise here (two runs share an id hash)")
		case m.Absent || m.Off == 0:
		case !rs.lvr.exists || rs.lvr.size < m.Off:
			return reset("the journal of run " + id + " is shorter than the cursor read")
		case rs.jerr == nil && m.Journal != "" && s.journalPrint(rs, m.Off) != m.Journal:
			return reset("the journal of run " + id + " was written over (other bytes under the cursor)")
		case rs.off < m.Off && !m.Torn:
			return reset("the journal of run " + id + " reads shorter here than the cursor read")
		case len(rs.samples) < m.Samples || len(rs.calls) < m.Calls:
			return reset("the journal of run " + id + " folds to fewer records here than the cursor read")
		case len(rs.episodes) < m.Waits:
			return reset("run " + id + "'s waiting stretches are counted otherwise here")
		}
	}
	next := make(map[string]*runMarks, len(s.order))
	for id, m := range c.marks {
		cp := *m
		next[id] = &cp
	}
	// Runs still being folded: next time, with the marks the reader has
	// (none, for a run it was not given at all).
	still := make(map[string]foldMark, len(c.folding))
	for id, m := range c.folding {
		still[id] = m
	}
	written := false // something given is a write, not a fold put in place
	budget := changesPage
	for _, rs := range s.order {
		if budget <= 0 {
			ch.More = true
			break
		}
		m, had := c.marks[rs.id]
		if !had && rs.pending {
			if _, ok := still[rs.id]; !ok {
				still[rs.id] = foldMark{} // new to the reader: a write when it comes
			}
			continue // given whole once it is folded (the marks have not got it)
		}
		now := s.marksNow(rs)
		// A run the reader did not have because it was being folded comes
		// whole as no write; a run whose fold alone changed it, its row.
		fm, whole := c.folding[rs.id]
		whole = whole && !had
		if whole && writtenSince(rs, fm) {
			written = true // appended to, or its meta.json rewritten, after the cursor
		}
		delete(still, rs.id)
		if !had {
			m = &runMarks{}
		}
		nm := next[rs.id]
		if nm == nil {
			nm = &runMarks{}
			next[rs.id] = nm
		}
		if !had || m.Run != now.Run {
			ch.Runs = append(ch.Runs, s.runOf(rs))
			budget--
			written = written || !(whole || (had && m.Run == caughtRun))
		}
		itemsBefore := len(ch.Steps) + len(ch.Context) + len(ch.Calls) + len(ch.Requests)
		i := sort.Search(len(rs.rows), func(i int) bool { return rs.rows[i].id > m.Row })
		end := min(len(rs.rows), i+max(budget, 0))
		for k := i; k < end; k++ {
			ch.Steps = append(ch.Steps, stepRowOf(rs, &rs.rows[k]))
		}
		budget -= end - i
		if m.Unpaired && m.Samples > 0 && rs.samples[m.Samples-1].usage != nil {
			ch.Context = append(ch.Context, sampleOf(rs, &rs.samples[m.Samples-1]))
		}
		for k := m.Samples; k < len(rs.samples); k++ {
			ch.Context = append(ch.Context, sampleOf(rs, &rs.samples[k]))
		}
		for k := m.Calls; k < len(rs.calls); k++ {
			ch.Calls = append(ch.Calls, callOf(rs, &rs.calls[k]))
		}
		if m.Waits > 0 && (m.Open == "*" || (m.Open != "" && s.requestSig(rs, &rs.episodes[m.Waits-1]) != m.Open)) {
			ch.Requests = append(ch.Requests, s.request(rs, &rs.episodes[m.Waits-1]))
		}
		for k := m.Waits; k < len(rs.episodes); k++ {
			ch.Requests = append(ch.Requests, s.request(rs, &rs.episodes[k]))
		}
		if len(ch.Steps)+len(ch.Context)+len(ch.Calls)+len(ch.Requests) > itemsBefore && !whole {
			written = true
		}
		if end < len(rs.rows) {
			// The page ends inside this run's rows: the rest next time.
			part := *now
			part.Row = m.Row
			if end > i {
				part.Row = rs.rows[end-1].id
			}
			*nm = part
			ch.More = true
			break
		}
		*nm = *now
	}
	ch.Unwritten = !written && !ch.Empty()
	if !ch.More {
		return ch, s.liveCursor(still)
	}
	return ch, &Cursor{marks: next, folding: still}
}
