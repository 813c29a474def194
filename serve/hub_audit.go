package serve

import (
	"sync"
	"time"

	"github.com/vigil-run/vigil/internal/audit"
	"github.com/vigil-run/vigil/livetail"
	"github.com/vigil-run/vigil/store"
)

// Hub is one store's shared tail (livetail.Hub), which every session that
// shows the store reads, and the audit log of the decisions made through
// vigil serve with who won each (view.go names them).
type Hub struct {
	*livetail.Hub

	audit   *audit.Log
	mu      sync.Mutex
	winners map[string]audit.Record // request → the audit line of the decision that won
}

// HubOptions tune a hub.
type HubOptions struct {
	// Poll forces polling at this interval instead of file events.
	Poll time.Duration
	// Audit is the decision log (nil: no session may decide).
	Audit *audit.Log
}

// NewHub opens the store with open and starts following it.
func NewHub(open func() (store.Source, error), opt HubOptions) (*Hub, error) {
	tail, err := livetail.New(open, livetail.Options{Poll: opt.Poll})
	if err != nil {
		return nil, err
	}
	h := &Hub{Hub: tail, audit: opt.Audit}
	if opt.Audit != nil {
		w, err := audit.Winners(opt.Audit.Path(), tail.Source().Path())
		if err != nil {
			tail.Close()
			return nil, err
		}
		h.winners = w
	}
	return h, nil
}
