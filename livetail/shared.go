package livetail

import (
	"context"
	"fmt"

	"golang.org/x/sync/singleflight"
)

// Reads that follow a commit are the same in every session watching the
// same run: the followed step's detail, the tree's activity, the counts
// of the runs that moved. The hub makes each such read once per batch of
// its log, whoever asks first, and hands the others its result: fifty
// sessions cost the store one read. A result is kept under the log
// position at which it was asked for, so what a session gets was read
// after everything its cursor has seen.
//
// singleflight joins the sessions that ask while the read is in flight;
// what it forgets when the read returns, kept holds for those who ask
// later at the same position (sessions woken by one batch do not all ask
// at once).

type sharedReads struct {
	flights singleflight.Group
	pos     [2]int64       // the hub's epoch and log end kept is for (under Hub.mu)
	kept    map[string]any // key → a read's result at pos
}

// Shared returns read()'s result for key at the hub's current position,
// reading it if nobody has yet. A read that fails is not kept; those
// waiting on it get its error.
func Shared[T any](ctx context.Context, h *Hub, key string, read func(context.Context) (T, error)) (T, error) {
	h.mu.Lock()
	pos := [2]int64{int64(h.epoch), h.base + int64(len(h.log))}
	if h.reads.pos != pos || h.reads.kept == nil {
		h.reads.pos, h.reads.kept = pos, map[string]any{}
	}
	h.mu.Unlock()
	v, err, _ := h.reads.flights.Do(fmt.Sprintf("%d\x00%d\x00%s", pos[0], pos[1], key), func() (any, error) {
		h.mu.Lock()
		v, ok := h.reads.kept[key]
		ok = ok && h.reads.pos == pos
		h.mu.Unlock()
		if ok {
			return v, nil
		}
		v, err := read(ctx)
		if err == nil {
			h.mu.Lock()
			if h.reads.pos == pos {
				h.reads.kept[key] = v
			}
			h.mu.Unlock()
		}
		return v, err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	t, _ := v.(T) // v is nil only when T is an interface and read returned nil
	return t, nil
}
