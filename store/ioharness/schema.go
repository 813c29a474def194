package ioharness

import (
	"context"
	"database/sql"
)

// schemaInfo is which tables and columns a store has. io-harness only ever
// adds tables and nullable or defaulted columns, so an older store is read
// by leaving out what it lacks rather than refusing it.
type schemaInfo struct {
	tables map[string]map[string]bool
}

func loadSchema(ctx context.Context, db *sql.DB) (*schemaInfo, error) {
	rows, err := db.QueryContext(ctx,
		`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		 WHERE m.type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	si := &schemaInfo{tables: map[string]map[string]bool{}}
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
