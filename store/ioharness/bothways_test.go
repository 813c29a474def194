package ioharness

import "testing"

// bothWays reads the store at path twice, each time on a fresh read-only
// handle: once with *raw on (rows read on SQLite's own handle) and once
// with it off (through database/sql). *raw is put back after.
func bothWays[T any](t *testing.T, path string, raw *bool, read func(s *Store) T) (onHandle, viaSQL T) {
	t.Helper()
	defer func(v bool) { *raw = v }(*raw)
	var got [2]T
	for i, on := range []bool{true, false} {
		*raw = on
		s, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = read(s)
		s.Close()
	}
	return got[0], got[1]
}
