package tui

import "github.com/vigil-run/vigil/store"

// packedSample is a context sample as the explorer keeps it for the drift
// pane: no pointers and no strings (the pane draws neither the run id nor
// the detail), 32 bytes a turn, so a run of a million turns is 32 MB the
// collector need not scan.
type packedSample struct {
	row       int64
	estimated int64
	reported  int64
	step      int32
	flags     uint8
}

const (
	sampleNoEstimate = 1 << iota
	sampleReported
)

// sampleLog is an agent's samples, packed: the drift pane's
// views.DriftSamples.
type sampleLog struct {
	runID string
	s     []packedSample
}

func packSample(cs store.ContextSample) packedSample {
	p := packedSample{row: cs.RowID, estimated: cs.Estimated, step: int32(cs.Step)}
	if cs.NoEstimate {
		p.flags |= sampleNoEstimate
	}
	if cs.Reported != nil {
		p.flags |= sampleReported
		p.reported = *cs.Reported
	}
	return p
}

func newSampleLog(runID string, samples []store.ContextSample) *sampleLog {
	l := &sampleLog{runID: runID, s: make([]packedSample, 0, len(samples))}
	for _, cs := range samples {
		l.s = append(l.s, packSample(cs))
	}
	return l
}

func (l *sampleLog) Len() int {
	if l == nil {
		return 0
	}
	return len(l.s)
}

func (l *sampleLog) At(i int) store.ContextSample {
	p := l.s[i]
	cs := store.ContextSample{RowID: p.row, RunID: l.runID, Step: int(p.step), Estimated: p.estimated, NoEstimate: p.flags&sampleNoEstimate != 0}
	if p.flags&sampleReported != 0 {
		r := p.reported
		cs.Reported = &r
	}
	return cs
}

// upsert takes a new turn, or a recent one whose provider count arrived.
func (l *sampleLog) upsert(cs store.ContextSample) {
	for i := len(l.s) - 1; i >= 0 && i >= len(l.s)-16; i-- {
		if l.s[i].row == cs.RowID {
			l.s[i] = packSample(cs)
			return
		}
	}
	if n := len(l.s); n > 0 && cs.RowID < l.s[n-1].row {
		return // already loaded with the agent
	}
	l.s = append(l.s, packSample(cs))
}
