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
	// of and id are the store handle the winners were read for and that
	// store's identity (audit.StoreID): a store replaced at the path is
	// another store, whose decisions were made by others.
	of store.Source
	id string
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
		h.mu.Lock()
		err := h.loadWinnersLocked(tail.Source())
		h.mu.Unlock()
		if err != nil {
			tail.Close()
			return nil, err
		}
	}
	return h, nil
}

// loadWinnersLocked reads, for the store src is open on, who won each
// decision logged against it (by its identity, not its path).
func (h *Hub) loadWinnersLocked(src store.Source) error {
	id := audit.StoreID(src.Path())
	w, err := audit.Winners(h.audit.Path(), src.Path(), id)
	if err != nil {
		return err
	}
	h.winners, h.of, h.id = w, src, id
	return nil
}

// currentLocked makes the winners those of the store the tail reads now:
// after the tail opened the store again (it was replaced, or its cursor
// could not be followed) they are read again for that store's identity.
func (h *Hub) currentLocked() {
	src := h.Hub.Source()
	if src == h.of {
		return
	}
	if h.audit == nil || h.loadWinnersLocked(src) != nil {
		// No log, or one that cannot be read: nobody is named, rather
		// than the old store's deciders.
		h.winners, h.of, h.id = nil, src, audit.StoreID(src.Path())
	}
}
