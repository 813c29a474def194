package union

import (
	"context"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// EachStepRow reads a stretch of a run's timeline from the store that owns
// it.
func (u *Source) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]store.StepRow) error) error {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return err
	}
	src, _ := m.source()
	return m.named(src.EachStepRow(ctx, own, from, to, func(rows []store.StepRow) error {
		for i := range rows {
			rows[i].RunID = join(m.prefix, rows[i].RunID)
		}
		return fn(rows)
	}))
}

// ProviderCallsFor reads a run's provider attempts under steps lo..hi from
// the store that owns it.
func (u *Source) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]store.ProviderCall, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	cs, err := src.ProviderCallsFor(ctx, own, lo, hi)
	for i := range cs {
		cs[i] = outCall(m.prefix, cs[i])
	}
	return cs, m.named(err)
}

// StepDetails reads every step's detail of a run from the store that owns
// it.
func (u *Source) StepDetails(ctx context.Context, runID string) ([]store.StepDetail, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	ds, err := src.StepDetails(ctx, own)
	for i := range ds {
		ds[i] = outDetail(m.prefix, ds[i])
	}
	return ds, m.named(err)
}

// HasRun asks the store the id names.
func (u *Source) HasRun(ctx context.Context, id string) (bool, error) {
	m, own, err := u.s.owner(id)
	if err != nil {
		return false, nil // an id of no store of the set is no run of it
	}
	src, _ := m.source()
	ok, err := src.HasRun(ctx, own)
	return ok, m.named(err)
}

// ReadingNote is each store's note that has one, naming its store.
func (u *Source) ReadingNote() string {
	var notes []string
	for _, m := range u.s.ms {
		src, _ := m.source()
		if n := src.ReadingNote(); n != "" {
			notes = append(notes, m.prefix+": "+n)
		}
	}
	return strings.Join(notes, "; ")
}
