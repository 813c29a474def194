package harness

import (
	"context"
	"database/sql"
	"errors"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// GlobalMemory is the workspace name io-harness uses for memory shared by
// every workspace.
const GlobalMemory = "<global>"

// MaxMemoryEntryChars is io-harness's default cap on one memory value
// (MEMORY_MAX_ENTRY_CHARS = MEMORY_MAX_CHARS / 8).
const MaxMemoryEntryChars = MaxMemoryChars / 8

// MaxMemoryEntries and MaxMemoryChars are io-harness's caps on one
// workspace's memory (MEMORY_MAX_ENTRIES, MEMORY_MAX_CHARS): a write past
// either evicts the workspace's least-proven entries until both hold.
const (
	MaxMemoryEntries = 64
	MaxMemoryChars   = 16_000
)

// MemoryWrite is what a memory write did: refused (the entry is pinned),
// or written, with the keys evicted to keep the workspace within its caps,
// in eviction order.
type MemoryWrite struct {
	Refused bool
	Evicted []string
}

// MemoryPut writes a fact (or, with kind "decision", a decision) under a
// workspace key, as io-harness's memory_write does (see MemoryWriteEntry);
// written is false when the entry is pinned.
func (s *Store) MemoryPut(ctx context.Context, workspace, key, value, runID string, step int, kind string) (written bool, err error) {
	w, err := s.MemoryWriteEntry(ctx, workspace, key, value, runID, step, kind)
	return err == nil && !w.Refused, err
}

// MemoryWriteEntry is io-harness's memory_write (memory_write_with under the
// default limits), statement for statement, in one transaction: the value
// is cut to the entry cap and marked, the run's first write to a key keeps a
// restore point, a pinned entry is never overwritten (Refused), and then
// enforce_memory_caps evicts until the workspace holds at most
// MaxMemoryEntries entries and MaxMemoryChars characters: least-recalled
// first (by distinct runs, then last recall, then age), never the entry
// just written nor a pinned one (pinned entries still count).
func (s *Store) MemoryWriteEntry(ctx context.Context, workspace, key, value, runID string, step int, kind string) (MemoryWrite, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return MemoryWrite{}, err
	}
	if kind == "" {
		kind = "fact"
	}
	value = truncateMemoryValue(value, MaxMemoryEntryChars)
	hasSnapshots := s.si().Has("memory_snapshots")
	var out MemoryWrite
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		out = MemoryWrite{}
		snapshotted := false
		if hasSnapshots {
			res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memory_snapshots (run_id, workspace, key, step, before, kind, state)
				SELECT ?, ?, ?, ?, m.value, m.kind, 'text' FROM memory m WHERE m.workspace = ? AND m.key = ?`,
				run, workspace, key, step, workspace, key)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				res, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO memory_snapshots (run_id, workspace, key, step, before, kind, state)
					VALUES (?, ?, ?, ?, NULL, NULL, 'absent')`, run, workspace, key, step)
				if err != nil {
					return err
				}
			}
			n, _ := res.RowsAffected()
			snapshotted = n > 0
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memory (workspace, key, value, run_id, step, created_at, kind, pinned)
			VALUES (?, ?, ?, ?, ?, `+isoNow+`, ?, 0)
			ON CONFLICT(workspace, key) DO UPDATE SET value = excluded.value, run_id = excluded.run_id,
				step = excluded.step, created_at = excluded.created_at, kind = excluded.kind
			WHERE memory.pinned IS NOT 1`, workspace, key, value, run, step, kind)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			out.Refused = true
			if snapshotted {
				_, err = tx.ExecContext(ctx, "DELETE FROM memory_snapshots WHERE run_id = ? AND workspace = ? AND key = ?", run, workspace, key)
			}
			return err
		}
		out.Evicted, err = s.enforceMemoryCaps(ctx, tx, workspace, key)
		return err
	})
	return out, err
}

// enforceMemoryCaps is io-harness's enforce_memory_caps with its
// MEMORY_CANDIDATES_SQL order.
func (s *Store) enforceMemoryCaps(ctx context.Context, tx *sql.Tx, workspace, keep string) ([]string, error) {
	recalls := `(SELECT COUNT(DISTINCT r.run_id) FROM memory_recalls r WHERE r.workspace = m.workspace AND r.key = m.key),
		(SELECT MAX(r.at) FROM memory_recalls r WHERE r.workspace = m.workspace AND r.key = m.key)`
	if !s.si().Has("memory_recalls") {
		recalls = "0, NULL" // a store from before recalls were recorded: none were
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.key, LENGTH(m.value), `+s.si().Col("memory", "pinned", "NULL")+`, `+recalls+`
		FROM memory m WHERE m.workspace = ? ORDER BY 4 ASC, 5 ASC, m.created_at ASC, m.id ASC`, workspace)
	if err != nil {
		return nil, err
	}
	type cand struct {
		key    string
		chars  int64
		pinned bool
	}
	var cands []cand
	for rows.Next() {
		var c cand
		var n sql.NullInt64
		var pinned sql.NullInt64
		var runs sql.NullInt64
		var last sql.NullString
		if err := rows.Scan(&c.key, &n, &pinned, &runs, &last); err != nil {
			rows.Close()
			return nil, err
		}
		c.chars, c.pinned = max(n.Int64, 0), pinned.Int64 == 1
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	count, chars := len(cands), int64(0)
	for _, c := range cands {
		chars += c.chars
	}
	var evicted []string
	for _, c := range cands {
		if count <= MaxMemoryEntries && chars <= MaxMemoryChars {
			break
		}
		if c.key == keep || c.pinned {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM memory WHERE workspace = ? AND key = ?", workspace, c.key); err != nil {
			return nil, err
		}
		count--
		chars -= c.chars
		evicted = append(evicted, c.key)
	}
	return evicted, nil
}

func truncateMemoryValue(v string, max int) string {
	if utf8.RuneCountInString(v) <= max {
		return v
	}
	keep := max - 12
	if keep < 0 {
		keep = 0
	}
	i, n := 0, 0
	for i < len(v) && n < keep {
		_, size := utf8.DecodeRuneInString(v[i:])
		i += size
		n++
	}
	return v[:i] + "…[truncated]"
}

func (s *Store) memoryCols() string { return schema.MemoryCols(s.si()) }

// MemoryGet reads one entry; ok is false when there is none.
func (s *Store) MemoryGet(ctx context.Context, workspace, key string) (MemoryEntry, bool, error) {
	if !s.si().Has("memory") {
		return MemoryEntry{}, false, nil
	}
	m, err := schema.ScanMemory(s.read.QueryRowContext(ctx, "SELECT "+s.memoryCols()+" FROM memory WHERE workspace = ? AND key = ?", workspace, key))
	if errors.Is(err, sql.ErrNoRows) {
		return MemoryEntry{}, false, nil
	}
	return m, err == nil, mapDriverErr(s.path, err)
}

// MemoryList lists a workspace's entries oldest first; an empty workspace
// lists every workspace's.
func (s *Store) MemoryList(ctx context.Context, workspace string) ([]MemoryEntry, error) {
	if !s.si().Has("memory") {
		return nil, nil
	}
	q := "SELECT " + s.memoryCols() + " FROM memory"
	var args []any
	if workspace != "" {
		q += " WHERE workspace = ?"
		args = append(args, workspace)
	}
	rows, err := s.read.QueryContext(ctx, q+" ORDER BY created_at ASC, key ASC", args...)
	if err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	defer rows.Close()
	var out []MemoryEntry
	for rows.Next() {
		m, err := schema.ScanMemory(rows)
		if err != nil {
			return nil, mapDriverErr(s.path, err)
		}
		out = append(out, m)
	}
	return out, mapDriverErr(s.path, rows.Err())
}

// MemoryDelete removes one entry; it reports whether there was one.
func (s *Store) MemoryDelete(ctx context.Context, workspace, key string) (bool, error) {
	res, err := s.exec(ctx, "DELETE FROM memory WHERE workspace = ? AND key = ?", workspace, key)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// MemoryClear removes a workspace's entries and returns how many.
func (s *Store) MemoryClear(ctx context.Context, workspace string) (int, error) {
	res, err := s.exec(ctx, "DELETE FROM memory WHERE workspace = ?", workspace)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
