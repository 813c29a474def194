package harness

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// Migrating an older store for the write API.
//
// io-harness's Store::open (src/state/schema.rs, from_conn) brings any store
// up to date on every open: it runs every CREATE TABLE and CREATE INDEX IF
// NOT EXISTS of every release, adds each column a release added with ALTER
// TABLE ... ADD COLUMN (ignoring the "duplicate column" error a store that
// has it gives), and raises user_version to CHECKPOINT_FORMAT. Its changes
// are additive: tables, nullable or defaulted columns, indexes. OpenWriter
// does the same to a store that lacks any of it — a 0.22 or 0.29 store has
// no plans, run_leases or step_turns, no runs.turn_kind, no memory.kind — so
// a write never fails half way through a run on a table or column the store
// does not have. All of it is one transaction: the store is migrated whole,
// or (on an error) left as it was. Browsing never migrates.

// addedColumns are from_conn's ALTER TABLE ... ADD COLUMN statements, in its
// order. Tables created since carry their later columns in schema.sql, in
// the order these leave them, so a migrated store and a fresh one end up
// with the same columns in the same order.
var addedColumns = []struct{ table, def string }{
	{"steps", "prompt TEXT NOT NULL DEFAULT ''"}, // 0.2.0
	{"steps", "tool_call TEXT NOT NULL DEFAULT ''"},
	{"steps", "tokens INTEGER NOT NULL DEFAULT 0"},
	{"runs", "provider TEXT"},                          // 0.3.0
	{"runs", "parent_run_id INTEGER"},                  // 0.5.0
	{"runs", "depth INTEGER NOT NULL DEFAULT 0"},       //
	{"runs", "status TEXT NOT NULL DEFAULT 'running'"}, // 0.7.0
	{"runs", "started_at TEXT"},                        //
	{"memory", "kind TEXT"},                            // 0.30.0
	{"memory", "pinned INTEGER"},                       //
	{"runs", "turn_kind TEXT"},                         // 0.37.0
	{"edits", "hunk TEXT"},                             // 0.51.0
	{"rewinds", "undid_step INTEGER"},                  //
	{"spawns", "as_name TEXT NOT NULL DEFAULT ''"},     // 0.60.0
}

// schemaStatements splits schema.sql into its CREATE TABLE and CREATE INDEX
// statements.
func schemaStatements() (tables, indexes []string) {
	for _, st := range strings.Split(schema.SQL, ";") {
		var lines []string
		for _, l := range strings.Split(st, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
				lines = append(lines, l)
			}
		}
		stmt := strings.TrimSpace(strings.Join(lines, "\n"))
		switch {
		case strings.HasPrefix(stmt, "CREATE TABLE"):
			tables = append(tables, stmt)
		case strings.HasPrefix(stmt, "CREATE INDEX"), strings.HasPrefix(stmt, "CREATE UNIQUE INDEX"):
			indexes = append(indexes, stmt)
		}
	}
	return tables, indexes
}

// needsMigration reports whether the store lacks a table, column or index
// of the current schema, or is stamped below schema.FormatVersion.
func needsMigration(ctx context.Context, db *sql.DB, si *schema.Info) (bool, error) {
	var v int64
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, err
	}
	if v < schema.FormatVersion {
		return true, nil
	}
	want, err := currentSchema(ctx)
	if err != nil {
		return false, err
	}
	for t, cols := range want.Tables {
		for c := range cols {
			if !si.HasCol(t, c) {
				return true, nil
			}
		}
	}
	var have int
	_, indexes := schemaStatements()
	for _, ix := range indexes {
		name := indexName(ix)
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?", name).Scan(&n); err != nil {
			return false, err
		}
		have += n
	}
	return have < len(indexes), nil
}

// indexName is the name in "CREATE [UNIQUE] INDEX IF NOT EXISTS name ON …".
func indexName(stmt string) string {
	f := strings.Fields(stmt)
	for i, w := range f {
		if w == "EXISTS" && i+1 < len(f) {
			return f[i+1]
		}
	}
	return ""
}

// currentSchema is the tables and columns of a fresh store of this schema.
func currentSchema(ctx context.Context) (*schema.Info, error) {
	m, err := Memory()
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.si(), nil
}

// migrate brings the store up to the current schema in one transaction, as
// io-harness's open would.
func (s *Store) migrate(ctx context.Context) error {
	need, err := needsMigration(ctx, s.read, s.si())
	if err != nil || !need {
		return mapDriverErr(s.path, err)
	}
	tables, indexes := schemaStatements()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for _, t := range tables {
			if _, err := tx.ExecContext(ctx, t); err != nil {
				return fmt.Errorf("migrating: %w", err)
			}
		}
		for _, c := range addedColumns {
			_, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.def)
			if err != nil && !strings.Contains(err.Error(), "duplicate column name") {
				return fmt.Errorf("migrating %s: %w", c.table, err)
			}
		}
		for _, ix := range indexes {
			if _, err := tx.ExecContext(ctx, ix); err != nil {
				return fmt.Errorf("migrating: %w", err)
			}
		}
		var v int64
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		if v < schema.FormatVersion {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schema.FormatVersion)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return storeErr(s.path, store.ErrUnsupported, fmt.Sprintf("could not bring the store up to io-harness 0.66's schema, and left it as it was: %v", err), err)
	}
	si, err := schema.Load(ctx, s.read)
	if err != nil {
		return mapDriverErr(s.path, err)
	}
	s.setSchema(si)
	return nil
}
