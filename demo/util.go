package demo

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// compactJSON renders v the way serde_json does: compact, keys of maps in
// order, and no HTML escaping (so "&&" stays "&&").
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own literals are encoded
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// rustQuote is Rust's {:?} of a plain string: the way io-harness quotes a
// grep pattern or a glob in a decision.
func rustQuote(s string) string { return strconv.Quote(s) }

// hunk renders the one-hunk unified diff io-harness keeps in edits.hunk:
// the changed middle between the common head and tail, with three lines of
// context. It returns the hunk and the lines added and removed.
func hunk(before, after string) (string, int, int) {
	if before == after {
		return "", 0, 0
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	old, cur := split(before), split(after)
	head := 0
	for head < len(old) && head < len(cur) && old[head] == cur[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(cur)-head && old[len(old)-1-tail] == cur[len(cur)-1-tail] {
		tail++
	}
	const context = 3
	from := max(head-context, 0)
	oldTo := min(len(old)-tail+context, len(old))
	newTo := min(len(cur)-tail+context, len(cur))
	var b strings.Builder
	start := func(n int) int {
		if n == 0 {
			return from
		}
		return from + 1
	}
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", start(oldTo-from), oldTo-from, start(newTo-from), newTo-from)
	for _, l := range old[from:head] {
		b.WriteString(" " + l + "\n")
	}
	removed := old[head : len(old)-tail]
	added := cur[head : len(cur)-tail]
	for _, l := range removed {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range added {
		b.WriteString("+" + l + "\n")
	}
	for _, l := range old[len(old)-tail : oldTo] {
		b.WriteString(" " + l + "\n")
	}
	return b.String(), len(added), len(removed)
}

// Timestamp formats io-harness writes: ISO-8601 with milliseconds, and
// SQLite's datetime('now') for a few older columns.
const (
	isoMillis = "2006-01-02T15:04:05.000Z"
	dtFormat  = "2006-01-02 15:04:05"
)

// stamp is one timestamp the scenario wrote, at scenario time t (an offset
// from the start of the live tree; history runs lie before it). SQLite
// stamped the row with the wall clock; the rewrite puts base+t there.
type stamp struct {
	table, col string
	dt         bool   // datetime('now') format instead of ISO-ms
	ms         bool   // the value is a millisecond count (duration_ms), t itself
	where      string // SQL condition naming the row
	args       []any
	t          time.Duration
	history    bool // written by a history run (Run backdates these)
}

// stampLog keeps the stamps in write order; a later stamp of the same
// row and column replaces the earlier one (a renewed lease).
type stampLog struct {
	list  []stamp
	index map[string]int
}

func (l *stampLog) add(s stamp) {
	if l.index == nil {
		l.index = map[string]int{}
	}
	key := s.table + "\x00" + s.col + "\x00" + s.where + "\x00" + fmt.Sprint(s.args...)
	if i, ok := l.index[key]; ok {
		l.list[i] = s
		return
	}
	l.index[key] = len(l.list)
	l.list = append(l.list, s)
}

// openRaw opens a plain connection to the store file, for the one thing
// the store API does not do: rewriting the timestamps SQLite stamped. It
// is sqlitex's, so it is counted with this process's other connections to
// the file (internal/heldfiles) like every other.
func openRaw(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return sqlitex.OpenWrite(abs)
}

// applyStamps rewrites, in one transaction, every stamp keep selects to
// base plus its scenario time. extra runs inside the same transaction.
func applyStamps(ctx context.Context, path string, stamps []stamp, base time.Time, keep func(stamp) bool,
	extra func(*sql.Tx) error) error {
	db, err := openRaw(path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stamps {
		if keep != nil && !keep(s) {
			continue
		}
		var v any
		switch {
		case s.ms:
			v = s.t.Milliseconds()
		case s.dt:
			v = base.Add(s.t).UTC().Format(dtFormat)
		default:
			v = base.Add(s.t).UTC().Format(isoMillis)
		}
		q := "UPDATE " + s.table + " SET " + s.col + " = ? WHERE " + s.where
		if _, err := tx.ExecContext(ctx, q, append([]any{v}, s.args...)...); err != nil {
			return fmt.Errorf("rewrite %s.%s: %w", s.table, s.col, err)
		}
	}
	if extra != nil {
		if err := extra(tx); err != nil {
			return err
		}
	}
	return tx.Commit()
}
