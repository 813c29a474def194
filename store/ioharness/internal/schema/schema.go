package schema

import (
	"context"
	"database/sql"
	_ "embed"
)

// FormatVersion is io-harness's CHECKPOINT_FORMAT, stored as PRAGMA
// user_version. A store stamped above it was written by a newer io-harness.
const FormatVersion = 7

// SQL is io-harness 0.66's schema: every CREATE TABLE and CREATE INDEX a new
// store gets.
//
//go:embed schema.sql
var SQL string

// ContextAssembled is the context_events kind of a turn's assembled
// window, with the assembler's estimate. io-harness's other kinds
// (memory_write, compaction, …) are audit rows.
const ContextAssembled = "assembled"

// Info is which tables and columns a store has. io-harness only ever adds
// tables and nullable or defaulted columns, so an older store is read by
// leaving out what it lacks rather than refusing it.
type Info struct {
	Tables  map[string]map[string]bool // table → column → present
	Version int64                      // PRAGMA schema_version when learned
}

// Load learns db's tables and columns.
func Load(ctx context.Context, db *sql.DB) (*Info, error) {
	si := &Info{Tables: map[string]map[string]bool{}}
	// The version first: a change between the two reads is then seen again
	// by the next probe rather than lost.
	if err := db.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&si.Version); err != nil {
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
		if si.Tables[table] == nil {
			si.Tables[table] = map[string]bool{}
		}
		si.Tables[table][col] = true
	}
	return si, rows.Err()
}

// Has reports whether the store has the table.
func (si *Info) Has(table string) bool { return si.Tables[table] != nil }

// HasCol reports whether the store's table has the column.
func (si *Info) HasCol(table, col string) bool { return si.Tables[table][col] }

// Col is the column's name when the store has it, else the fallback SQL
// expression (usually NULL or a default), so one query serves every version.
func (si *Info) Col(table, col, fallback string) string {
	if si.HasCol(table, col) {
		return col
	}
	return fallback
}
