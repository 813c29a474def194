package tui

import (
	"context"
	"errors"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// failingEvents is a source whose tree-activity read fails.
type failingEvents struct{ store.Source }

func (failingEvents) AgentEvents(context.Context, ...string) ([]store.AgentEvent, error) {
	return nil, errors.New("disk I/O error")
}

// A tree whose live activity cannot be read says so: an empty strip would
// look like agents that are quiet.
func TestFailedTreeActivityIsShown(t *testing.T) {
	d := newDriver(t, 120, 40, func(o *Options) { o.Source = failingEvents{o.Source} })
	d.press("enter")
	d.contains("the tree's live activity: disk I/O error")
}
