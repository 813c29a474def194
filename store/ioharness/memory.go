package ioharness

import (
	"context"
	"database/sql"
	"errors"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

func (s *Store) memoryCols() string { return schema.MemoryCols(s.si().Info) }

func scanMemory(r interface{ Scan(...any) error }) (MemoryEntry, error) { return schema.ScanMemory(r) }

// MemoryGet reads one entry of io-harness's cross-run memory; ok is false
// when there is none.
func (s *Store) MemoryGet(ctx context.Context, workspace, key string) (MemoryEntry, bool, error) {
	if !s.si().has("memory") {
		return MemoryEntry{}, false, nil
	}
	m, err := scanMemory(s.read.QueryRowContext(ctx, "SELECT "+s.memoryCols()+" FROM memory WHERE workspace = ? AND key = ?", workspace, key))
	if errors.Is(err, sql.ErrNoRows) {
		return MemoryEntry{}, false, nil
	}
	return m, err == nil, mapDriverErr(s.path, err)
}
