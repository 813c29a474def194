package runmodel

import (
	"math"

	"github.com/vigil-run/vigil/store"
)

// DriftStats sums an agent's context samples. Gap is reported minus
// estimate (positive: the estimate was low); drift is the gap as a share of
// what the provider reported. Turns the provider did not report are counted
// apart, never filled in with the estimate.
type DriftStats struct {
	Turns, Missing        int
	NoEstimate            int   // turns with a reported count but no estimate
	SumEst, SumReported   int64 // over reported turns only
	SumGap                int64
	MeanAbsGap            float64
	Cumulative            float64 // SumGap / SumReported
	MaxEst, MaxReported   int64
	HasReported, Complete bool
	sumAbsGap             float64
}

// ComputeDrift sums the samples.
func ComputeDrift(samples []store.ContextSample) DriftStats {
	var s DriftStats
	s.Add(samples)
	return s.Finish()
}

// Add folds samples into the running sums; a reader that sums a growing
// list keeps the sums of the samples that can no longer change and adds
// only the rest.
func (s *DriftStats) Add(samples []store.ContextSample) {
	for _, c := range samples {
		s.Turns++
		if !c.NoEstimate {
			s.MaxEst = max(s.MaxEst, c.Estimated)
		}
		if c.Reported == nil {
			s.Missing++
			continue
		}
		r := *c.Reported
		s.MaxReported = max(s.MaxReported, r)
		if c.NoEstimate {
			s.NoEstimate++
			continue
		}
		s.SumEst += c.Estimated
		s.SumReported += r
		s.SumGap += r - c.Estimated
		s.sumAbsGap += math.Abs(float64(r - c.Estimated))
	}
}

// Finish derives the means and shares from the sums.
func (s DriftStats) Finish() DriftStats {
	if n := s.Turns - s.Missing - s.NoEstimate; n > 0 {
		s.HasReported = true
		s.MeanAbsGap = s.sumAbsGap / float64(n)
	}
	if s.SumReported != 0 {
		s.Cumulative = float64(s.SumGap) / float64(s.SumReported)
	}
	s.Complete = s.Missing == 0
	return s
}
