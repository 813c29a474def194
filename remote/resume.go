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

func (a *agent) tokenHead(ctx context.Context, src store.Source, codec store.CursorCodec) (wireCursor, error) {
	cur, err := src.Head(ctx)
	if err != nil {
		return wireCursor{}, err
	}
	return a.tokenCursor(codec, cur)
}

func (a *agent) tokenCursor(codec store.CursorCodec, cur store.Cursor) (wireCursor, error) {
	b, err := codec.EncodeCursor(cur)
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
		if codec, ok := src.(store.CursorCodec); ok {
			if c, err := a.tokenHead(ctx, src, codec); err == nil {
				next = c
			}
		}
		return changesResult{Changes: &store.Changes{Reset: true}, Next: next, Note: why}, nil
	}
	codec, ok := src.(store.CursorCodec)
	if !ok {
		return reset("the store at " + src.Path() + " is now of a format whose cursors cannot be resumed (" + src.Format() + ")")
	}
	cur, err := codec.DecodeCursor(token)
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
	nc, err := a.tokenCursor(codec, next)
	if err != nil {
		return changesResult{}, err
	}
	return changesResult{Changes: ch, Next: nc}, nil
}
