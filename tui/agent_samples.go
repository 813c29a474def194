package tui

import (
	"math"

	"github.com/vigil-run/vigil/store"
)

// packedSample is a context sample as the explorer keeps it for the drift
// pane: four integers a turn with no pointers (the pane draws neither the
// run id nor the detail), packed column by column once its chunk is full
// (chunked), so a run of a million turns is a few MB at most the collector
// need not scan. Counts beyond 32 bits are kept beside it (sampleWide).
type packedSample struct {
	estimated int32
	reported  int32
	step      int32
	flags     uint8
}

func (p packedSample) fields() [packFields]int64 {
	return [packFields]int64{int64(p.estimated), int64(p.reported), int64(p.step), int64(p.flags)}
}

func (packedSample) withFields(f [packFields]int64) packedSample {
	return packedSample{estimated: int32(f[0]), reported: int32(f[1]), step: int32(f[2]), flags: uint8(f[3])}
}

const (
	sampleNoEstimate = 1 << iota
	sampleReported
	sampleWide // the counts are in sampleLog.wide
)

// sampleLog is an agent's samples, packed: the drift pane's
// views.DriftSamples. Only the newest few samples can change in place (a
// late provider count), so only their row ids are kept.
type sampleLog struct {
	runID string
	s     chunked[packedSample]
	wide  map[int][2]int64 // counts too big to pack, by index
	rows  []sampleRow      // the newest samples' rows, oldest first
}

type sampleRow struct {
	i   int
	row int64
}

// sampleTail is how many of the newest samples may still change in place.
const sampleTail = 16

func newSampleLog(runID string, samples []store.ContextSample) *sampleLog {
	l := &sampleLog{runID: runID}
	for _, cs := range samples {
		l.push(cs)
	}
	return l
}

func fits32(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

func (l *sampleLog) pack(i int, cs store.ContextSample) packedSample {
	p := packedSample{step: int32(cs.Step)}
	var rep int64
	if cs.NoEstimate {
		p.flags |= sampleNoEstimate
	}
	if cs.Reported != nil {
		p.flags |= sampleReported
		rep = *cs.Reported
	}
	delete(l.wide, i)
	if !fits32(cs.Estimated) || !fits32(rep) || !fits32(int64(cs.Step)) {
		p.flags |= sampleWide
		if l.wide == nil {
			l.wide = map[int][2]int64{}
		}
		l.wide[i] = [2]int64{cs.Estimated, rep}
		return p
	}
	p.estimated, p.reported = int32(cs.Estimated), int32(rep)
	return p
}

func (l *sampleLog) push(cs store.ContextSample) {
	i := l.s.Len()
	l.s.Append(l.pack(i, cs))
	l.rows = append(l.rows, sampleRow{i, cs.RowID})
	if len(l.rows) > 2*sampleTail {
		l.rows = append(l.rows[:0], l.rows[len(l.rows)-sampleTail:]...)
	}
}

func (l *sampleLog) Len() int {
	if l == nil {
		return 0
	}
	return l.s.Len()
}

func (l *sampleLog) At(i int) store.ContextSample {
	p := l.s.At(i)
	est, rep := int64(p.estimated), int64(p.reported)
	if p.flags&sampleWide != 0 {
		w := l.wide[i]
		est, rep = w[0], w[1]
	}
	cs := store.ContextSample{RunID: l.runID, Step: int(p.step), Estimated: est, NoEstimate: p.flags&sampleNoEstimate != 0}
	for _, r := range l.rows {
		if r.i == i {
			cs.RowID = r.row
		}
	}
	if p.flags&sampleReported != 0 {
		cs.Reported = &rep
	}
	return cs
}

// upsert takes a new turn, or a recent one whose provider count arrived.
func (l *sampleLog) upsert(cs store.ContextSample) {
	for k := len(l.rows) - 1; k >= 0 && k >= len(l.rows)-sampleTail; k-- {
		if r := l.rows[k]; r.row == cs.RowID {
			l.s.Set(r.i, l.pack(r.i, cs))
			return
		}
	}
	if n := len(l.rows); n > 0 && cs.RowID < l.rows[n-1].row {
		return // already loaded with the agent
	}
	l.push(cs)
}
