package union

import (
	"context"
	"errors"

	"github.com/vigil-run/vigil/store"
)

// EachStepRow reads a stretch of a run's timeline from the store that owns
// it, when that store can (store.StepRanger); errors.ErrUnsupported when it
// cannot, so a caller reads the run whole with Steps.
func (u *Source) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]store.StepRow) error) error {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return err
	}
	src, _ := m.source()
	sr, ok := src.(store.StepRanger)
	if !ok {
		return errors.ErrUnsupported
	}
	return m.named(sr.EachStepRow(ctx, own, from, to, func(rows []store.StepRow) error {
		for i := range rows {
			rows[i].RunID = join(m.prefix, rows[i].RunID)
		}
		return fn(rows)
	}))
}

// ProviderCallsFor reads a run's provider attempts under steps lo..hi from
// the store that owns it (errors.ErrUnsupported as EachStepRow).
func (u *Source) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]store.ProviderCall, error) {
	m, own, err := u.s.owner(runID)
	if err != nil {
		return nil, err
	}
	src, _ := m.source()
	sr, ok := src.(store.StepRanger)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	cs, err := sr.ProviderCallsFor(ctx, own, lo, hi)
	for i := range cs {
		cs[i] = outCall(m.prefix, cs[i])
	}
	return cs, m.named(err)
}
