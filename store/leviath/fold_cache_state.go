package leviath

import "fmt"

// foldState is what a fold of a journal knows, up to Off, as the fold
// cache writes it (encoding/gob: exported fields). It is the journal's
// part of a runState only: meta.json, interactions.json, file signatures
// and the ledger are read again by every process.
type foldState struct {
	Off      int64
	Version  uint16
	TornAt   int64
	ScanFrom int64
	BadNoted bool

	Ident      runIdentity
	JMeta      runMeta
	HasJMeta   bool
	Win        cachedWindow
	Rows       []cachedRow
	Samples    []cachedSample
	Calls      []cachedCall
	Turns      int
	Attributed int64
	RowTokens  int64
	CallTurn   map[string]int
	Timing     map[string]toolTimingC
	Owners     int
	Ckpts      int
	OwnerAt    int64
	Restart    bool
	JStatus    string
	Paired     bool
	Records    int
	LastAt     int64
	Skipped    int
	Episodes   []cachedEpisode
	OrdRows    int
}

type cachedWindow struct {
	Stage      string
	Total, Max int64
	Regions    []cachedRegion
}

type cachedRegion struct {
	Name, Kind string
	Cur, Max   int64
	FPs        []uint64
	Rows       []int32
}

// cachedRow is a row without the run's id prefix: Local is the low 32 bits
// of its id (the prefix is the reading store's, see idPrefix).
type cachedRow struct {
	Local    int64
	Number   int
	Kind     uint8
	Decision string
	ToolCall string
	Head     string
	Tokens   int64
	At       int64
	Off      int64
	Region   int32
	Entry    int32
	FP       uint64
	Name     string
	CallID   string
	Calls    []string
	Note     string
}

type cachedSample struct {
	Local     int64
	Step      int
	At        int64
	Stage     string
	Iteration int64
	Status    string
	Total     int64
	Max       int64
	Regions   int
	Restart   bool
	Usage     *usageRecord
}

type cachedCall struct {
	Local   int64
	Step    int
	Attempt int
	U       usageRecord
}

type toolTimingC struct {
	Name       string
	Dispatched int64
	Done       int64
}

type cachedEpisode struct {
	N          int
	AskedAt    int64
	Step       int
	Resolved   bool
	EndStatus  string
	ResolvedAt int64
}

const localBits = 1<<32 - 1

// foldStateOf is rs's journal fold, to be written down.
func foldStateOf(rs *runState) *foldState {
	fs := &foldState{Off: rs.off, Version: rs.version, TornAt: rs.tornAt, ScanFrom: rs.scanFrom, BadNoted: rs.badNoted,
		Ident: rs.ident, JMeta: rs.jmeta, HasJMeta: rs.hasJMeta, Turns: rs.turns, Attributed: rs.attributed,
		RowTokens: rs.rowTokens, CallTurn: rs.callTurn, Timing: map[string]toolTimingC{}, Owners: rs.owners,
		Ckpts: rs.ckpts, OwnerAt: rs.ownerAt, Restart: rs.restart, JStatus: rs.jstatus, Paired: rs.paired,
		Records: rs.records, LastAt: rs.lastAt, Skipped: rs.skipped, OrdRows: rs.ordRows}
	fs.Win = cachedWindow{Stage: rs.win.stage, Total: rs.win.total, Max: rs.win.max}
	for _, r := range rs.win.regions {
		cr := cachedRegion{Name: r.name, Kind: r.kind, Cur: r.cur, Max: r.max,
			FPs: make([]uint64, len(r.entries)), Rows: make([]int32, len(r.entries))}
		for i, e := range r.entries {
			cr.FPs[i], cr.Rows[i] = e.fp, e.row
		}
		fs.Win.Regions = append(fs.Win.Regions, cr)
	}
	fs.Rows = make([]cachedRow, len(rs.rows))
	for i, r := range rs.rows {
		fs.Rows[i] = cachedRow{Local: r.id & localBits, Number: r.number, Kind: uint8(r.kind), Decision: r.decision,
			ToolCall: r.toolCall, Head: r.head, Tokens: r.tokens, At: r.at, Off: r.loc.off, Region: r.loc.region,
			Entry: r.loc.entry, FP: r.fp, Name: r.name, CallID: r.callID, Calls: r.calls, Note: r.note}
	}
	fs.Samples = make([]cachedSample, len(rs.samples))
	for i, sm := range rs.samples {
		fs.Samples[i] = cachedSample{Local: sm.id & localBits, Step: sm.step, At: sm.at, Stage: sm.stage,
			Iteration: sm.iteration, Status: sm.status, Total: sm.total, Max: sm.max, Regions: sm.regions,
			Restart: sm.restart, Usage: sm.usage}
	}
	fs.Calls = make([]cachedCall, len(rs.calls))
	for i, c := range rs.calls {
		fs.Calls[i] = cachedCall{Local: c.id & localBits, Step: c.step, Attempt: c.attempt, U: c.u}
	}
	for id, t := range rs.timing {
		fs.Timing[id] = toolTimingC{Name: t.name, Dispatched: t.dispatched, Done: t.done}
	}
	for _, e := range rs.episodes {
		fs.Episodes = append(fs.Episodes, cachedEpisode{N: e.n, AskedAt: e.askedAt, Step: e.step,
			Resolved: e.resolved, EndStatus: e.endStatus, ResolvedAt: e.resolvedAt})
	}
	return fs
}

// check says why a decoded state cannot be a fold of a journal of size
// bytes ("" when it can): what a damaged or foreign file would break
// (an index past its slice, an offset past the journal).
func (fs *foldState) check(size int64) string {
	switch {
	case fs.Off < preambleLen || fs.Off > size:
		return fmt.Sprintf("it covers %d bytes of a %d-byte journal", fs.Off, size)
	case fs.Version == 0 || fs.Version > MaxJournalVersion:
		return fmt.Sprintf("journal version %d", fs.Version)
	case fs.TornAt >= 0 && fs.TornAt != fs.Off:
		return "a torn frame that is not at its offset"
	}
	for _, r := range fs.Win.Regions {
		if len(r.FPs) != len(r.Rows) {
			return "a region of mismatched entries"
		}
		for _, i := range r.Rows {
			if i < -1 || int(i) >= len(fs.Rows) {
				return "an entry of a row it does not hold"
			}
		}
	}
	for _, r := range fs.Rows {
		if r.Off >= fs.Off || r.Kind > uint8(rowJournal) {
			return "a row past what it covers"
		}
	}
	return ""
}

// restore puts the state into rs, a run not read yet, its ids under rs's
// prefix.
func (fs *foldState) restore(rs *runState) {
	rs.off, rs.version, rs.tornAt, rs.scanFrom, rs.badNoted = fs.Off, fs.Version, fs.TornAt, fs.ScanFrom, fs.BadNoted
	rs.ident, rs.jmeta, rs.hasJMeta = fs.Ident, fs.JMeta, fs.HasJMeta
	rs.turns, rs.attributed, rs.rowTokens = fs.Turns, fs.Attributed, fs.RowTokens
	rs.owners, rs.ckpts, rs.ownerAt, rs.restart = fs.Owners, fs.Ckpts, fs.OwnerAt, fs.Restart
	rs.jstatus, rs.paired, rs.records, rs.lastAt, rs.skipped, rs.ordRows = fs.JStatus, fs.Paired, fs.Records, fs.LastAt, fs.Skipped, fs.OrdRows
	rs.callTurn = fs.CallTurn
	if rs.callTurn == nil {
		rs.callTurn = map[string]int{}
	}
	rs.timing = make(map[string]*toolTiming, len(fs.Timing))
	for id, t := range fs.Timing {
		rs.timing[id] = &toolTiming{name: t.Name, dispatched: t.Dispatched, done: t.Done}
	}
	rs.win = window{stage: fs.Win.Stage, total: fs.Win.Total, max: fs.Win.Max}
	for _, cr := range fs.Win.Regions {
		r := &region{name: cr.Name, kind: cr.Kind, cur: cr.Cur, max: cr.Max, entries: make([]entRef, len(cr.FPs))}
		for i := range cr.FPs {
			r.entries[i] = entRef{fp: cr.FPs[i], row: cr.Rows[i]}
		}
		rs.win.regions = append(rs.win.regions, r)
	}
	rs.rows = make([]row, len(fs.Rows))
	for i, r := range fs.Rows {
		rs.rows[i] = row{id: rs.id64(r.Local), number: r.Number, kind: rowKind(r.Kind), decision: r.Decision,
			toolCall: r.ToolCall, head: r.Head, tokens: r.Tokens, at: r.At,
			loc: entryLoc{off: r.Off, region: r.Region, entry: r.Entry}, fp: r.FP, name: r.Name, callID: r.CallID,
			calls: r.Calls, note: r.Note}
	}
	rs.samples = make([]sample, len(fs.Samples))
	for i, sm := range fs.Samples {
		rs.samples[i] = sample{id: rs.id64(sm.Local), step: sm.Step, at: sm.At, stage: sm.Stage, iteration: sm.Iteration,
			status: sm.Status, total: sm.Total, max: sm.Max, regions: sm.Regions, restart: sm.Restart, usage: sm.Usage}
	}
	rs.calls = make([]call, len(fs.Calls))
	for i, c := range fs.Calls {
		rs.calls[i] = call{id: rs.id64(c.Local), step: c.Step, attempt: c.Attempt, u: c.U}
	}
	rs.episodes = nil
	for _, e := range fs.Episodes {
		rs.episodes = append(rs.episodes, episode{n: e.N, askedAt: e.AskedAt, step: e.Step, resolved: e.Resolved,
			endStatus: e.EndStatus, resolvedAt: e.ResolvedAt})
	}
}
