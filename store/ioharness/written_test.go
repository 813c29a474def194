package ioharness

import (
	"context"
	"errors"
	"testing"

	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// twin is the harness's handle (store/ioharness/harness), named so that
// written can embed it beside the reader's Store.
type twin = harness.Store

// written is one store file as a harness and vigil share it: written
// through the harness twin, read (and decided) through the reader.
type written struct {
	*twin
	*Store
}

// readBack opens the reader on the file w writes; both close with the test.
func readBack(t testing.TB, w *harness.Store) *written {
	t.Helper()
	r, err := Open(w.Path())
	if err != nil {
		w.Close()
		t.Fatal(err)
	}
	s := &written{w, r}
	t.Cleanup(func() { s.Close() })
	return s
}

// Close closes the reader, then the harness's handle.
func (s *written) Close() error { return errors.Join(s.Store.Close(), s.twin.Close()) }

// Path is the store's file.
func (s *written) Path() string { return s.Store.Path() }

// MemoryGet is the harness's read of its memory.
func (s *written) MemoryGet(ctx context.Context, workspace, key string) (MemoryEntry, bool, error) {
	return s.twin.MemoryGet(ctx, workspace, key)
}
