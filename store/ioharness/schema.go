package ioharness

import (
	"context"
	"database/sql"
)

// schemaInfo is which tables and columns a store has. io-harness only ever
// adds tables and nullable or defaulted columns, so an older store is read
// by leaving out what it lacks rather than refusing it.
type schemaInfo struct {
	tables  map[string]map[string]bool
	version int64 // PRAGMA schema_version when learned
}

func loadSchema(ctx context.Context, db *sql.DB) (*schemaInfo, error) {
	si := &schemaInfo{tables: map[string]map[string]bool{}}
	// The version first: a change between the two reads is then seen again
	// by the next probe rather than lost.
	if err := db.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&si.version); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx,
		`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		 WHERE m.type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			return nil, err
		}
		if si.tables[table] == nil {
			si.tables[table] = map[string]bool{}
		}
		si.tables[table][col] = true
	}
	return si, rows.Err()
}

func (si *schemaInfo) has(table string) bool { return si.tables[table] != nil }

func (si *schemaInfo) hasCol(table, col string) bool { return si.tables[table][col] }

// col is the column's name when the store has it, else the fallback SQL
// expression (usually NULL or a default), so one query serves every version.
func (si *schemaInfo) col(table, col, fallback string) string {
	if si.hasCol(table, col) {
		return col
	}
	return fallback
}

// si is the schema as last learned.
func (s *Store) si() *schemaInfo { return s.schema.Load() }

func (s *Store) setSchema(si *schemaInfo) { s.schema.Store(si) }

// refreshSchema learns the schema again when PRAGMA schema_version says it
// changed since it was learned: io-harness adds tables and columns when a
// newer release opens the store (run_leases after an upgrade to 0.62, say),
// and a reader that kept what it learned at open would go on ignoring them.
// The probe that asks is one cheap pragma; the work happens only on a change.
func (s *Store) refreshSchema(ctx context.Context, version int64) error {
	if cur := s.si(); cur != nil && cur.version == version {
		return nil
	}
	si, err := loadSchema(ctx, s.read)
	if err != nil {
		return err
	}
	si.version = version
	s.setSchema(si)
	s.rows.forget() // row bounds were learned over the old tables
	s.zones.forget()
	return nil
}
