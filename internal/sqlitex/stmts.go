package sqlitex

import (
	"context"
	"database/sql"
	"sync"
)

// maxStmts bounds the cache: queries with id lists vary, so it is dropped
// whole when it grows past this.
const maxStmts = 128

// Stmts caches prepared reads on one connection, since preparing costs
// more than running them. The zero value is ready to use.
type Stmts struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// Prepare returns the cached statement for q on db, preparing it once.
func (c *Stmts) Prepare(ctx context.Context, db *sql.DB, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	if c.m == nil || len(c.m) >= maxStmts {
		c.closeAll()
		c.m = map[string]*sql.Stmt{}
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.m[q] = st
	return st, nil
}

// EachRow runs a cached read and hands each row to fn, closing the result
// set before it returns so no read transaction outlives the call. Errors
// are the driver's (or fn's), for the caller to name.
func (c *Stmts) EachRow(ctx context.Context, db *sql.DB, q string, args []any, fn func(*sql.Rows) error) error {
	st, err := c.Prepare(ctx, db, q)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Close releases every cached statement.
func (c *Stmts) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeAll()
}

func (c *Stmts) closeAll() {
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}
