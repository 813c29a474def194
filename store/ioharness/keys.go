package ioharness

import "github.com/vigil-run/vigil/store"

// runKey turns a run id into the integer key, refusing text that is not one.
func (s *Store) runKey(id string) (int64, error) {
	n, ok := parseID(id)
	if !ok {
		return 0, storeErr(s.path, store.ErrNoSuchRun, id, nil)
	}
	return n, nil
}
