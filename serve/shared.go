package serve

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Reads that follow a commit are the same in every session watching the
// same run: the followed step's detail, the tree's activity, the counts
// of the runs that moved. The hub makes each such read once per batch of
// its log, whoever asks first, and hands the others its result: fifty
// sessions cost the store one read. A result is kept under the log
// position at which it was asked for, so what a session gets was read
// after everything its cursor has seen.

type sharedCall struct {
	done chan struct{}
	val  any
	err  error
}

type sharedReads struct {
	pos   [2]int64 // the hub's epoch and log end the map is for
	calls map[string]*sharedCall
}

// shared returns read()'s result for key at the hub's current position,
// reading it if nobody has yet. A read that fails is not kept.
func shared[T any](ctx context.Context, h *Hub, key string, read func(context.Context) (T, error)) (T, error) {
	h.mu.Lock()
	pos := [2]int64{int64(h.epoch), h.base + int64(len(h.log))}
	if h.reads.pos != pos || h.reads.calls == nil {
		h.reads = sharedReads{pos: pos, calls: map[string]*sharedCall{}}
	}
	c, ok := h.reads.calls[key]
	if !ok {
		c = &sharedCall{done: make(chan struct{})}
		h.reads.calls[key] = c
	}
	calls := h.reads.calls
	h.mu.Unlock()
	if !ok {
		v, err := read(ctx)
		c.val, c.err = v, err
		close(c.done)
		if err != nil {
			h.mu.Lock()
			if calls[key] == c {
				delete(calls, key)
			}
			h.mu.Unlock()
		}
		return v, err
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	if c.err != nil {
		var zero T
		return zero, c.err
	}
	return c.val.(T), nil
}

func idsKey(kind string, ids []string) string {
	s := append([]string(nil), ids...)
	sort.Strings(s)
	return kind + "\x00" + strings.Join(s, "\x00")
}

func detailKey(run string, row int64) string { return fmt.Sprintf("detail\x00%s\x00%d", run, row) }
