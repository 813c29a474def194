package remote

import (
	"context"
	"encoding/json"

	"github.com/vigil-run/vigil/store"
)

// Cursors with a token (protocol 2): the store's own cursor, written down
// and read back on every call, so the agent keeps nothing per reader and
// an agent started for a new link reads a cursor the old one gave out.
// A refresh costs one decode, the store's own Changes and one encode:
// O(the cursor's open rows), as the store's Changes already is.

// head is the cursor Head answers: the store's own written down when its
// format can (a token), else a position in this agent's hub.
func (a *agent) head(ctx context.Context, src store.Source) (wireCursor, error) {
	if !src.Capabilities().Has(store.CapCursorCodec) {
		e, s := a.hub.Mark()
		return wireCursor{Instance: a.instance, Epoch: e, Seq: s}, nil
	}
	cur, err := src.Head(ctx)
	if err != nil {
		return wireCursor{}, err
	}
	return a.tokenCursor(src, cur)
}

func (a *agent) tokenCursor(src store.Source, cur store.Cursor) (wireCursor, error) {
	b, err := src.EncodeCursor(cur)
	if err != nil {
		return wireCursor{}, err
	}
	return wireCursor{Instance: a.instance, Token: json.RawMessage(b)}, nil
}

// tokenChanges is Changes after a written-down cursor. One the store
// cannot read back, or no longer matches, answers Reset with why.
func (a *agent) tokenChanges(ctx context.Context, src store.Source, token json.RawMessage) (changesResult, error) {
	reset := func(why string) (changesResult, error) {
		next := wireCursor{Instance: a.instance}
		if src.Capabilities().Has(store.CapCursorCodec) {
			if c, err := a.head(ctx, src); err == nil {
				next = c
			}
		}
		return changesResult{Changes: &store.Changes{Reset: true}, Next: next, Note: why}, nil
	}
	if !src.Capabilities().Has(store.CapCursorCodec) {
		return reset("the store at " + src.Path() + " is now of a format whose cursors cannot be resumed (" + src.Format() + ")")
	}
	cur, err := src.DecodeCursor(token)
	if err != nil {
		return reset("the cursor cannot be resumed here: " + err.Error())
	}
	ch, next, err := src.Changes(ctx, cur)
	if err != nil {
		return changesResult{}, err
	}
	if ch.Reset {
		if r, ok := next.(store.ResetReason); ok && r.ResetReason() != "" {
			return reset("the store at " + src.Path() + " is not the one the cursor was made on: " + r.ResetReason())
		}
		return reset("the store at " + src.Path() + " is not the one the cursor was made on (replaced or rewritten)")
	}
	nc, err := a.tokenCursor(src, next)
	if err != nil {
		return changesResult{}, err
	}
	return changesResult{Changes: ch, Next: nc}, nil
}
