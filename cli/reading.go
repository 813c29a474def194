package cli

import (
	"context"
	"slices"
	"time"

	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// reading is the run model as runs and show print it: the explorer's own
// model, loaded at once, every state told against one clock.
type reading struct {
	src store.Source
	now time.Time
	md  *runmodel.Model
}

func (a *app) read(ctx context.Context, src store.Source) (*reading, error) {
	now := a.now()
	md, err := runmodel.Load(ctx, src, now)
	if err != nil {
		return nil, err
	}
	return &reading{src: src, now: now, md: md}, nil
}

// openRequests are the undecided requests of the runs ids (every run's
// when ids is nil) as the CLI lists them: by kind — approvals, then
// questions, then plans — each oldest first.
func (rd *reading) openRequests(in func(runID string) bool) []store.Request {
	var out []store.Request
	for _, q := range rd.md.Requests() {
		if in == nil || in(q.RunID) {
			out = append(out, q.Request)
		}
	}
	slices.SortStableFunc(out, func(a, b store.Request) int { return int(a.Kind) - int(b.Kind) })
	return out
}

// delivery says whether a decision on q would reach its run now.
func (rd *reading) delivery(q store.Request) (store.Delivery, string) {
	return rd.md.Delivery(rd.src, q, rd.now)
}
