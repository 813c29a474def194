package schema

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Err is a *store.Error in io-harness's wording: the sentinel's own text,
// then what makes this case specific ("no such run: 7").
func Err(path string, kind error, detail string, err error) *store.Error {
	e := &store.Error{Path: path, Kind: kind, Err: err}
	if detail != "" {
		e.Detail = store.Because(kind, detail)
	}
	return e
}

// NewerDetail says a store's format is newer than vigil reads.
func NewerDetail(v int64) string {
	return fmt.Sprintf("io-harness store format %d, vigil reads up to %d; upgrade vigil", v, FormatVersion)
}

// Check refuses a newer format or a file without the io-harness tables, and
// says which tables and columns this store has (0.22 and 0.29 stores lack
// later ones). Corruption inside a file shows only when a query touches
// it, so it touches the tables every reader and writer needs: a damaged
// store fails at open.
func Check(ctx context.Context, db *sql.DB, path string) (*Info, error) {
	var v int64
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return nil, sqlitex.MapErr(path, err)
	}
	if v > FormatVersion {
		return nil, Err(path, store.ErrNewerFormat, NewerDetail(v), nil)
	}
	si, err := Load(ctx, db)
	if err != nil {
		return nil, sqlitex.MapErr(path, err)
	}
	if !si.Has("runs") || !si.Has("steps") {
		return nil, Err(path, store.ErrNotAStore, "SQLite, but without io-harness's runs and steps tables", nil)
	}
	for _, q := range []string{
		"SELECT id FROM runs ORDER BY id DESC LIMIT 1",
		"SELECT id FROM steps ORDER BY id DESC LIMIT 1",
	} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, sqlitex.MapErr(path, err)
		}
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, sqlitex.MapErr(path, err)
		}
	}
	return si, nil
}
