package sqlitex

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// ChangesPage caps the rows one Changes call reads from each tailed table;
// when a table had more, the source sets Changes.More and the caller calls
// again.
const ChangesPage = 2000

// Tops reads, in one statement, the highest row id (idCol: "id" or "rowid")
// of each append-mostly table, plus one text expression (sig, "" for none)
// that summarises a small table rewritten in place. Most refreshes then
// learn from this one read that nothing grew and skip every other query.
func Tops(ctx context.Context, c *Stmts, db *sql.DB, idCol string, tables []string, sig string) (map[string]int64, string, error) {
	parts := make([]string, 0, len(tables)+1)
	for _, t := range tables {
		parts = append(parts, "(SELECT COALESCE(MAX("+idCol+"), 0) FROM "+t+")")
	}
	if sig == "" {
		sig = "''"
	}
	parts = append(parts, sig)
	vals := make([]int64, len(tables))
	dest := make([]any, 0, len(tables)+1)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	var s string
	dest = append(dest, &s)
	st, err := c.Prepare(ctx, db, "SELECT "+strings.Join(parts, ", "))
	if err != nil {
		return nil, "", err
	}
	if err := st.QueryRowContext(ctx).Scan(dest...); err != nil {
		return nil, "", err
	}
	tops := make(map[string]int64, len(tables))
	for i, t := range tables {
		tops[t] = vals[i]
	}
	return tops, s, nil
}

// IDList renders integer ids for an IN (…) list. They are integers, never
// text from a caller, so there is nothing to inject.
func IDList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
