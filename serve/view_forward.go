package serve

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vigil-run/vigil/livetail"
	"github.com/vigil-run/vigil/store"
)

// The rest of store.Source: each read goes to the hub's store (through
// the hub's shared reads where sessions ask the same), so a session reads
// what the store offers — a windowed timeline, the first page, fields
// whole, who decided — as the local explorer does.

// ViewLacks is what a View does not offer that its store may: its
// cursors are positions in this process's hub, which no other process can
// resume (vigil agent writes the store's own cursors down itself).
const ViewLacks = store.CapCursorCodec

// Capabilities are the store's, but for ViewLacks.
func (v *View) Capabilities() store.Capabilities { return v.src.Capabilities() &^ ViewLacks }

func (v *View) Activity(ctx context.Context, q store.ActivityQuery) (store.Activity, error) {
	key := fmt.Sprintf("%s\x00%d\x00%d", idsKey("activity", q.RunIDs), q.After, q.PerRun)
	return livetail.Shared(ctx, v.hub.Hub, key, func(ctx context.Context) (store.Activity, error) {
		return v.src.Activity(ctx, q)
	})
}

func (v *View) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	return v.src.RunFacts(ctx, runID)
}

func (v *View) LastWrite(ctx context.Context) (time.Time, error) { return v.src.LastWrite(ctx) }

func (v *View) Run(ctx context.Context, id string) (store.Run, error) { return v.src.Run(ctx, id) }

func (v *View) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	q, err := v.src.Request(ctx, key)
	if err == nil {
		reqs := []store.Request{q}
		v.hub.decorate(reqs)
		q = reqs[0]
	}
	return q, err
}

func (v *View) HasRun(ctx context.Context, id string) (bool, error) { return v.src.HasRun(ctx, id) }

func (v *View) RecentRuns(ctx context.Context, limit int) ([]store.Run, bool, error) {
	return v.src.RecentRuns(ctx, limit)
}

// HeadNewest is the hub's position, as Head: the hub already follows
// every run, so it is whole and as cheap as the store's quick head.
func (v *View) HeadNewest(ctx context.Context, _ int) (store.Cursor, bool, error) {
	cur, err := v.Head(ctx)
	return cur, true, err
}

// WholeHead is the cursor itself: a hub position follows every run.
func (v *View) WholeHead(_ context.Context, cur store.Cursor) (store.Cursor, error) { return cur, nil }

func (v *View) EachStepRow(ctx context.Context, runID string, from, to int64, fn func([]store.StepRow) error) error {
	return v.src.EachStepRow(ctx, runID, from, to, fn)
}

func (v *View) ProviderCallsFor(ctx context.Context, runID string, lo, hi int) ([]store.ProviderCall, error) {
	return v.src.ProviderCallsFor(ctx, runID, lo, hi)
}

func (v *View) StepDetails(ctx context.Context, runID string) ([]store.StepDetail, error) {
	return v.src.StepDetails(ctx, runID)
}

func (v *View) WriteStepField(ctx context.Context, runID string, rowID int64, field string, w io.Writer) error {
	return v.src.WriteStepField(ctx, runID, rowID, field, w)
}

func (v *View) PolicyEvents(ctx context.Context, runID string) ([]store.PolicyEvent, error) {
	return v.src.PolicyEvents(ctx, runID)
}

func (v *View) CarriesReason(kind store.RequestKind, verdict store.Verdict) bool {
	return v.src.CarriesReason(kind, verdict)
}

func (v *View) Problems() []error { return v.src.Problems() }

// ReadingNote is the store's, and what is wrong with the server's key
// files (the status bar shows it).
func (v *View) ReadingNote() string {
	note := v.src.ReadingNote()
	if v.sess.KeyNote != nil {
		if k := v.sess.KeyNote(); k != "" && note != "" {
			note += "; " + k
		} else if k != "" {
			note = k
		}
	}
	return note
}

func (v *View) revoked() string {
	if v.sess.Revoked == nil {
		return ""
	}
	return v.sess.Revoked()
}

func (v *View) EncodeCursor(store.Cursor) ([]byte, error) { return nil, errNoCodec }

func (v *View) DecodeCursor([]byte) (store.Cursor, error) { return nil, errNoCodec }

var errNoCodec = fmt.Errorf("a vigil serve session's cursors cannot be resumed in another process: %w", store.ErrUnsupported)

func (v *View) WriteCanonicalTrace(ctx context.Context, runID string, w io.Writer) error {
	return v.src.WriteCanonicalTrace(ctx, runID, w)
}
