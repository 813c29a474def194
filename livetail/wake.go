package livetail

import (
	"time"

	"github.com/vigil-run/vigil/watch"
)

// Wake tells every session to read again although the store has not
// moved: what a session shows beside the store changed (vigil serve: a key
// file that stopped granting, said on every status bar).
func (h *Hub) Wake() { h.broadcast(watch.Signal{Kind: watch.Changed, At: time.Now()}) }
