package leviath

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// rowKind is what a timeline row stands for.
type rowKind uint8

const (
	rowUser      rowKind = iota // a UserMessage entry
	rowAssistant                // an AssistantTurn entry (one model turn, its tool calls)
	rowResult                   // a ToolResult entry
	rowMessage                  // a Message record
	rowStatus                   // the journaled status changed
	rowRestart                  // OwnershipChanged: a daemon restart took the run over
	rowJournal                  // the journal itself: a skipped or damaged frame
)

// entryLoc is where an entry's whole text lives in run.lvr: the frame (its
// length prefix) and the entry's place in that record (region or region
// delta index, entry index). Row text is read back from there on demand, so
// memory holds only summaries.
type entryLoc struct {
	off    int64
	region int32
	entry  int32
}

// row is one timeline entry. Its id (the Step's RowID) is derived from the
// journal itself (see rowID), so every process that reads the same bytes
// numbers them the same: ids increase within a run and are unique across
// runs.
type row struct {
	id       int64
	number   int // the assistant turn it belongs to (0 before the first)
	kind     rowKind
	decision string // one line
	toolCall string // a summary (assistant rows)
	head     string // the result's first line (result rows)
	tokens   int64  // spend attributed to the turn (assistant rows)
	at       int64
	loc      entryLoc
	fp       uint64
	name     string   // result rows: the tool; message rows: the role
	callID   string   // result rows: the call answered
	calls    []string // assistant rows: ids of its tool calls
	note     string   // status, restart and journal rows: the whole text
}

// sample is one replay point: a record that changed the context window.
type sample struct {
	id        int64
	step      int // the turn this window feeds: assistant turns so far + 1
	at        int64
	stage     string
	iteration int64
	status    string
	total     int64
	max       int64
	regions   int
	restart   bool         // the first window after a daemon restart
	usage     *usageRecord // the provider's count for the call made with it (HEAD)
}

// call is one provider call (InferenceUsage at HEAD; Inference if written).
type call struct {
	id      int64
	step    int
	attempt int
	u       usageRecord
}

// toolTiming is when a tool call was dispatched and finished (HEAD's
// ToolBatch and ToolCallDone; whole seconds).
type toolTiming struct {
	name       string
	dispatched int64
	done       int64
}

// region is a context region as vigil keeps it: no text, a fingerprint per
// entry and, for transcript entries, the row it became.
type region struct {
	name, kind string
	cur, max   int64
	entries    []entRef
}

type entRef struct {
	fp  uint64
	row int32 // index in runState.rows, or -1
}

// window is the folded context window.
type window struct {
	stage      string
	total, max int64
	regions    []*region
}

func (w *window) find(name string) (int, *region) {
	for i, r := range w.regions {
		if r.name == name {
			return i, r
		}
	}
	return -1, nil
}

// isTranscript says whether a region holds the conversation: the
// `conversation` region, and a blueprint's `history`-kind region too
// (docs/formats/leviath.md, "Timeline").
func isTranscript(name, kind string) bool { return name == "conversation" || kind == "history" }

// fileSig identifies a file's state cheaply.
type fileSig struct {
	exists bool
	size   int64
	mtime  int64
	ino    uint64
}

func sigOf(fi os.FileInfo) fileSig {
	return fileSig{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inodeOf(fi)}
}

// episode is one stretch of waiting_input: a read-only Question request.
type episode struct {
	n          int
	askedAt    int64
	step       int
	resolved   bool
	endStatus  string
	resolvedAt int64
}

// runState is everything vigil knows about one run directory.
type runState struct {
	id, dir string

	// files as last read
	lvr, metaSig, interSig fileSig
	off                    int64 // the next frame's offset (0: preamble not read yet)
	version                uint16
	jerr                   error // the journal is refused: bad magic, newer version, unreadable
	tornAt                 int64 // where an incomplete or damaged frame starts (-1: none)
	scanFrom               int64 // restart-marker search resumes here
	badNoted               bool  // a row says the frame at tornAt is damaged
	// tornNotedAt is where a row says a frame is torn for good, its writer
	// gone (-1: none). Per process: the row is added after a read saves
	// its fold, and a later save has read past the tear.
	tornNotedAt int64

	// journal fold
	ident      runIdentity
	jmeta      runMeta
	hasJMeta   bool
	fmeta      runMeta // meta.json
	hasFMeta   bool
	fmetaErr   error
	win        window
	rows       []row
	samples    []sample
	calls      []call
	turns      int
	attributed int64 // spend already attributed to assistant rows
	rowTokens  int64 // sum of row tokens
	callTurn   map[string]int
	timing     map[string]*toolTiming
	owners     int   // OwnershipChanged records
	ckpts      int   // ContextCheckpoint and Checkpoint records
	ownerAt    int64 // the last one's time
	restart    bool  // the next replay point follows a restart
	jstatus    string
	paired     bool  // the newest sample already has its provider count
	records    int   // records folded
	lastAt     int64 // the newest record time seen
	skipped    int   // unknown variants skipped

	// waiting_input
	inter    *interaction
	episodes []episode

	loggedSig string

	pending bool          // the journal is left to the background fold (folding.go)
	done    chan struct{} // closed when that fold is in place (nil: never pending)
	foldTo  int64         // the background fold reads no further: the size at open

	prefix   int64 // the high bits of every id of the run (idPrefix)
	printOff int64 // the journal fingerprint below (journalPrint) covers this many bytes
	print    string
	// readPrint fingerprints the bytes read so far (printOf at off): a
	// journal whose bytes under it changed was written over in place.
	readPrint string
	ordRows   int   // ordinary rows so far (rowID)
	born      int64 // the log position of the run's first event
}

func newRunState(id, dir string) *runState {
	return &runState{id: id, dir: dir, tornAt: -1, tornNotedAt: -1, callTurn: map[string]int{}, timing: map[string]*toolTiming{}}
}

// meta is the run's RunMeta as it stands: the journal's, unless meta.json
// is newer (the journal is written first, so normally it is at least as
// new; meta.json alone exists before the daemon picks a run up).
func (rs *runState) meta() (*runMeta, bool) {
	switch {
	case rs.hasJMeta && rs.hasFMeta:
		if rs.fmeta.UpdatedAt > rs.jmeta.UpdatedAt {
			return &rs.fmeta, true
		}
		return &rs.jmeta, true
	case rs.hasJMeta:
		return &rs.jmeta, true
	case rs.hasFMeta:
		return &rs.fmeta, true
	}
	return nil, false
}

// status is the Leviath status in force.
func (rs *runState) status() string {
	if m, ok := rs.meta(); ok {
		return m.Status
	}
	return ""
}

// ledger hands out change-log positions and keeps the change log. Ids of
// rows, samples and calls are not positions: they come from the journal
// (rowID), the same in every process.
type ledger struct {
	seq     int64
	log     []event
	logging bool  // false while Open loads: nothing before the first cursor is logged
	cut     int64 // events up to this position were dropped from the log
	// catching marks the events logged while set as vigil's own reading
	// catching up (a background fold put in place), not a write.
	catching bool
}

type evKind uint8

const (
	evRun evKind = iota
	evStep
	evSample
	evCall
	evRequest
)

// event is one entry of the change log: something a cursor has not seen.
type event struct {
	seq    int64
	kind   evKind
	update bool // an item handed out before changed (a sample's count), not a new one
	caught bool // logged while catching: nothing was written
	run    *runState
	idx    int32
}

func (l *ledger) next() int64 { l.seq++; return l.seq }

// logCap bounds the change log; past it the older half is dropped, and a
// cursor from before the cut gets Reset (it reloads) instead of the events.
var logCap = 1 << 20

// note logs an event at a fresh position.
func (l *ledger) note(kind evKind, rs *runState, idx int) {
	if l.logging {
		l.add(event{seq: l.next(), kind: kind, caught: l.catching, run: rs, idx: int32(idx)})
	}
}

// noteUpdate logs that an item already handed out changed.
func (l *ledger) noteUpdate(kind evKind, rs *runState, idx int) {
	if l.logging {
		l.add(event{seq: l.next(), kind: kind, update: true, caught: l.catching, run: rs, idx: int32(idx)})
	}
}

func (l *ledger) add(e event) {
	if len(l.log) >= logCap {
		half := len(l.log) / 2
		l.cut = l.log[half-1].seq
		l.log = append(l.log[:0:0], l.log[half:]...)
	}
	l.log = append(l.log, e)
}

// apply folds one record (docs/formats/leviath.md, "Records and the fold").
func (rs *runState) apply(l *ledger, off int64, rec *runRecord) {
	rs.records++
	if at := rec.at(); at > rs.lastAt {
		rs.lastAt = at
	}
	switch {
	case rec.Header != nil:
		h := rec.Header
		rs.ident = h.Identity
		rs.win = window{}
		rs.setMeta(l, &h.Meta, h.Meta.UpdatedAt)
	case rec.OwnershipChanged != nil:
		o := rec.OwnershipChanged
		rs.ident.MachineID, rs.ident.WorldID = o.MachineID, o.WorldID
		rs.owners++
		rs.ownerAt = o.At
		rs.restart = true
		rs.addNote(l, rowRestart, o.At, fmt.Sprintf("restart: a new daemon took the run over (machine %s, world %s)",
			orUnknown(o.MachineID), orUnknown(o.WorldID)))
	case rec.Inference != nil:
		in := rec.Inference
		rs.addCall(l, usageRecord{Kind: "stage", Stage: in.Stage, Iteration: in.Iteration, Model: in.Request.Model,
			PromptTokens: in.Response.PromptTokens, CompletionTokens: in.Response.CompletionTokens,
			CachedTokens: in.Response.CachedTokens, CacheWriteTokens: in.Response.CacheWriteTokens, At: in.At})
	case rec.ToolBatch != nil:
		b := rec.ToolBatch
		for _, c := range b.Calls {
			t := rs.timing[c.ID]
			if t == nil {
				t = &toolTiming{name: c.Name, dispatched: b.At}
				rs.timing[c.ID] = t
			}
			if len(c.Result) > 0 && string(c.Result) != "null" && t.done == 0 {
				t.done = b.At
			}
		}
	case rec.ContextCheckpoint != nil:
		c := rec.ContextCheckpoint
		rs.ckpts++
		rs.replaceWindow(l, off, &c.Snapshot, c.At)
		rs.point(l, c.At)
	case rec.ContextDiff != nil:
		d := rec.ContextDiff
		rs.applyDelta(l, off, &d.Delta, d.At)
		rs.point(l, d.At)
	case rec.Message != nil:
		m := rec.Message
		r := row{kind: rowMessage, number: rs.turns, at: m.At, loc: entryLoc{off: off}, name: m.Message.Role,
			fp:       fingerprint("Message", m.Message.Role, m.Message.Content.hash, nil, ""),
			decision: orText(m.Message.Role, "message") + ": " + firstLineOf(m.Message.Content)}
		rs.addRow(l, r)
	case rec.StatusChanged != nil:
		sc := rec.StatusChanged
		if rs.hasJMeta {
			m := rs.jmeta
			m.Status = sc.Status
			if sc.At > m.UpdatedAt {
				m.UpdatedAt = sc.At
			}
			rs.setMeta(l, &m, sc.At)
		}
	case rec.Checkpoint != nil:
		c := rec.Checkpoint
		rs.ckpts++
		rs.setMeta(l, &c.Meta, c.At)
		rs.replaceWindow(l, off, &c.Context, c.At)
		rs.point(l, c.At)
	case rec.Progress != nil:
		p := rec.Progress
		rs.setMeta(l, &p.Meta, p.At)
		rs.applyDelta(l, off, &p.Delta, p.At)
		rs.point(l, p.At)
	case rec.InferenceUsage != nil:
		rs.addCall(l, *rec.InferenceUsage)
	case rec.ToolCallDone != nil:
		d := rec.ToolCallDone
		t := rs.timing[d.CallID]
		if t == nil {
			t = &toolTiming{}
			rs.timing[d.CallID] = t
		}
		t.done = d.At
	}
}

// setMeta takes a journaled RunMeta; a status change becomes a row.
func (rs *runState) setMeta(l *ledger, m *runMeta, at int64) {
	prev := rs.jstatus
	rs.jmeta, rs.hasJMeta = *m, true
	// A field longer than the fold keeps (a long frame's skeleton cut it)
	// keeps its head.
	jm := &rs.jmeta
	jm.Task, jm.Workdir, jm.CurrentStage = cutMarks(jm.Task), cutMarks(jm.Workdir), cutMarks(jm.CurrentStage)
	if jm.Error != nil {
		e := cutMarks(*jm.Error)
		jm.Error = &e
	}
	rs.jstatus = m.Status
	if prev != "" && m.Status != prev {
		text := "status: " + m.Status
		if e := m.errText(); e != "" && m.Status == "error" {
			text += " — " + e
		}
		rs.addNote(l, rowStatus, at, text)
	}
	rs.trackWaiting(l, m.Status, at)
}

// addNote adds a row that is not a transcript entry (status, restart,
// journal damage): its whole text is kept in memory.
func (rs *runState) addNote(l *ledger, kind rowKind, at int64, text string) {
	if at == 0 {
		at = rs.lastAt
	}
	rs.addRow(l, row{kind: kind, number: rs.turns, at: at, decision: firstLine(text), note: text, loc: entryLoc{off: -1}})
}

func (rs *runState) addRow(l *ledger, r row) int32 {
	rs.ordRows++
	r.id = rs.id64(int64(rs.ordRows) * rowSlots)
	return rs.keepRow(l, r)
}

// addSlotNote adds a journal note whose presence depends on when the
// journal was read (a damaged frame seen before or with its restart): it
// takes a slot after the ordinary row before it, so it moves no other id.
func (rs *runState) addSlotNote(l *ledger, slot int64, text string) {
	r := row{kind: rowJournal, number: rs.turns, at: rs.lastAt, decision: firstLine(text), note: text, loc: entryLoc{off: -1}}
	r.id = rs.id64(int64(rs.ordRows)*rowSlots + slot)
	rs.keepRow(l, r)
}

func (rs *runState) keepRow(l *ledger, r row) int32 {
	rs.rows = append(rs.rows, r)
	rs.rowTokens += r.tokens
	l.note(evStep, rs, len(rs.rows)-1)
	return int32(len(rs.rows) - 1)
}

// addCall records a provider call; a stage call also gives the newest
// replay point its reported size (the window it was made with).
func (rs *runState) addCall(l *ledger, u usageRecord) {
	if u.Kind == "" {
		u.Kind = "stage"
	}
	step := rs.turns + 1
	attempt := 1
	for i := len(rs.calls) - 1; i >= 0 && rs.calls[i].step == step; i-- {
		attempt++
	}
	c := call{id: rs.id64(int64(len(rs.calls) + 1)), step: step, attempt: attempt, u: u}
	rs.calls = append(rs.calls, c)
	l.note(evCall, rs, len(rs.calls)-1)
	if u.Kind == "stage" && len(rs.samples) > 0 && !rs.paired {
		i := len(rs.samples) - 1
		uu := u
		rs.samples[i].usage = &uu
		rs.paired = true
		l.noteUpdate(evSample, rs, i) // a point already handed out now has its count
	}
}

// point records a replay point with the meta in force.
func (rs *runState) point(l *ledger, at int64) {
	sm := sample{id: rs.id64(int64(len(rs.samples) + 1)), step: rs.turns + 1, at: at, stage: rs.win.stage, total: rs.win.total, max: rs.win.max,
		regions: len(rs.win.regions), restart: rs.restart}
	if rs.hasJMeta {
		sm.iteration, sm.status = rs.jmeta.Iteration, rs.jmeta.Status
	}
	rs.restart, rs.paired = false, false
	rs.samples = append(rs.samples, sm)
	l.note(evSample, rs, len(rs.samples)-1)
}

// replaceWindow takes a whole window (ContextCheckpoint, Checkpoint).
// Entries vigil has already seen keep their rows; only new ones add rows.
func (rs *runState) replaceWindow(l *ledger, off int64, snap *contextSnapshot, at int64) {
	w := window{stage: snap.StageName, total: snap.TotalTokens, max: snap.MaxTokens}
	for ri := range snap.Regions {
		rsn := &snap.Regions[ri]
		var old []entRef
		if _, o := rs.win.find(rsn.Name); o != nil {
			old = o.entries
		}
		w.regions = append(w.regions, rs.takeRegion(l, off, ri, rsn, old, at))
	}
	rs.win = w
}

// takeRegion builds a region from a snapshot, matching its entries against
// the ones the region held before.
func (rs *runState) takeRegion(l *ledger, off int64, ri int, rsn *regionSnapshot, old []entRef, at int64) *region {
	r := &region{name: rsn.Name, kind: rsn.Kind, cur: rsn.CurrentTokens, max: rsn.MaxTokens}
	tr := isTranscript(rsn.Name, rsn.Kind)
	j := 0
	for ei := range rsn.Entries {
		e := &rsn.Entries[ei]
		fp := entryFP(e)
		// Greedy in-order match: what a sliding window kept (its tail), a
		// compaction kept, or a restart re-wrote is found in order; what is
		// not found is new.
		found := -1
		for k := j; k < len(old); k++ {
			if old[k].fp == fp {
				found = k
				break
			}
		}
		if found >= 0 {
			r.entries = append(r.entries, old[found])
			j = found + 1
			continue
		}
		ref := entRef{fp: fp, row: -1}
		if tr {
			ref.row = rs.entryRow(l, e, fp, entryLoc{off: off, region: int32(ri), entry: int32(ei)}, at)
		}
		r.entries = append(r.entries, ref)
	}
	return r
}

// applyDelta applies a ContextDelta (docs/formats/leviath.md, "Context
// windows and deltas"); a delta naming an unknown region is skipped.
func (rs *runState) applyDelta(l *ledger, off int64, d *contextDelta, at int64) {
	rs.win.stage, rs.win.total, rs.win.max = d.StageName, d.TotalTokens, d.MaxTokens
	for ri := range d.Regions {
		rd := &d.Regions[ri]
		switch {
		case rd.Set != nil:
			i, old := rs.win.find(rd.Set.Name)
			var prev []entRef
			if old != nil {
				prev = old.entries
			}
			nr := rs.takeRegion(l, off, ri, rd.Set, prev, at)
			if i >= 0 {
				rs.win.regions[i] = nr
			} else {
				rs.win.regions = append(rs.win.regions, nr)
			}
		case rd.Append != nil:
			_, r := rs.win.find(rd.Append.Name)
			if r == nil {
				continue
			}
			tr := isTranscript(r.name, r.kind)
			for ei := range rd.Append.Entries {
				e := &rd.Append.Entries[ei]
				fp := entryFP(e)
				ref := entRef{fp: fp, row: -1}
				if tr {
					ref.row = rs.entryRow(l, e, fp, entryLoc{off: off, region: int32(ri), entry: int32(ei)}, at)
				}
				r.entries = append(r.entries, ref)
			}
			r.cur = rd.Append.CurrentTokens
		case rd.Clear != nil:
			if _, r := rs.win.find(rd.Clear.Name); r != nil {
				r.entries, r.cur = nil, 0
			}
		case rd.Remove != nil:
			if i, r := rs.win.find(rd.Remove.Name); r != nil {
				rs.win.regions = append(rs.win.regions[:i], rs.win.regions[i+1:]...)
			}
		}
	}
}

// entryRow turns a new transcript entry into a row (-1 for Text entries).
func (rs *runState) entryRow(l *ledger, e *entrySnapshot, fp uint64, loc entryLoc, at int64) int32 {
	r := row{at: at, loc: loc, fp: fp}
	switch e.Kind.Type {
	case kindUser:
		r.kind, r.number = rowUser, rs.turns
		r.decision = "user: " + firstLineOf(e.Content)
	case kindAssistant:
		rs.turns++
		r.kind, r.number = rowAssistant, rs.turns
		spend := rs.jmeta.spend()
		if spend > rs.attributed {
			r.tokens = spend - rs.attributed
		}
		rs.attributed = spend
		var names, summary []string
		for _, c := range e.Kind.ToolCalls {
			names = append(names, c.Name)
			summary = append(summary, strings.TrimSpace(c.Name+" "+string(c.Arguments)))
			r.calls = append(r.calls, c.ID)
			if c.ID != "" {
				rs.callTurn[c.ID] = rs.turns
			}
		}
		switch line := firstLineOf(e.Content); {
		case line != "":
			r.decision = "assistant: " + line
		case len(names) > 0:
			r.decision = "assistant → " + strings.Join(names, ", ")
		default:
			r.decision = "assistant (no text)"
		}
		r.toolCall = cut(strings.Join(summary, "; "), toolCallSummaryBytes)
	case kindResult:
		r.kind = rowResult
		r.number = rs.turns
		if n, ok := rs.callTurn[e.Kind.ToolCallID]; ok {
			r.number = n
		}
		r.name, r.callID, r.head = e.Kind.ToolName, e.Kind.ToolCallID, firstLineOf(e.Content)
		verb := "result"
		if e.Kind.IsError {
			verb = "error"
		}
		r.decision = strings.TrimSpace(verb + " " + e.Kind.ToolName)
	default:
		return -1
	}
	return rs.addRow(l, r)
}

// toolCallSummaryBytes caps a row's tool-call summary (the detail has it whole).
const toolCallSummaryBytes = 240

// decisionBytes caps a row's one-line text.
const decisionBytes = 240

func entryFP(e *entrySnapshot) uint64 {
	var ids []string
	for _, c := range e.Kind.ToolCalls {
		ids = append(ids, c.ID+"\x1f"+c.Name)
	}
	return fingerprint(orText(e.Kind.Type, kindText), e.Kind.ToolCallID, e.Content.hash, ids, orNil(e.Key))
}

func orNil(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orText(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func orUnknown(s string) string { return orText(s, "unknown") }

// firstLine is the first non-blank line of s, cut to one row.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return cut(s, decisionBytes)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
