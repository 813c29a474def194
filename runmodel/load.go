package runmodel

import (
	"context"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Load reads a source's runs, counts every run whose counts its run list
// leaves unknown, and reads the undecided requests: the whole model at
// once, as a command that prints and exits needs it. (The explorer loads
// the same way in steps, so the screen fills before the counts arrive.)
func Load(ctx context.Context, src store.Source, now time.Time) (*Model, error) {
	runs, err := src.Runs(ctx)
	if err != nil {
		return nil, err
	}
	m := New(src.RecordsLeases())
	m.SetRuns(runs)
	if ids := m.Unknown(); len(ids) > 0 {
		st, err := src.RunStats(ctx, ids)
		if err != nil {
			return nil, err
		}
		m.ApplyStats(st)
	}
	reqs, err := src.Requests(ctx, true)
	if err != nil {
		return nil, err
	}
	m.SetRequests(reqs, now)
	return m, nil
}
