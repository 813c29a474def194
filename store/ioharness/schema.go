package ioharness

import (
	"context"
	"database/sql"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// schemaInfo is which tables and columns a store has (schema.Info), in
// the words this package's queries use.
type schemaInfo struct{ *schema.Info }

func loadSchema(ctx context.Context, db *sql.DB) (*schemaInfo, error) {
	si, err := schema.Load(ctx, db)
	if err != nil {
		return nil, err
	}
	return &schemaInfo{si}, nil
}

func (si *schemaInfo) has(table string) bool { return si.Has(table) }

func (si *schemaInfo) hasCol(table, col string) bool { return si.HasCol(table, col) }

func (si *schemaInfo) col(table, col, fallback string) string { return si.Col(table, col, fallback) }

// si is the schema as last learned.
func (s *Store) si() *schemaInfo { return s.schema.Load() }

func (s *Store) setSchema(si *schemaInfo) { s.schema.Store(si) }

// refreshSchema learns the schema again when PRAGMA schema_version says it
// changed since it was learned: io-harness adds tables and columns when a
// newer release opens the store (run_leases after an upgrade to 0.62, say),
// and a reader that kept what it learned at open would go on ignoring them.
// The probe that asks is one cheap pragma; the work happens only on a change.
func (s *Store) refreshSchema(ctx context.Context, version int64) error {
	if cur := s.si(); cur != nil && cur.Version == version {
		return nil
	}
	si, err := loadSchema(ctx, s.read)
	if err != nil {
		return err
	}
	si.Version = version
	s.setSchema(si)
	s.rows.forget() // row bounds were learned over the old tables
	s.zones.forget()
	return nil
}
