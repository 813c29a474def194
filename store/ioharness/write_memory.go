package ioharness

import (
	"context"
	"database/sql"
	"errors"
	"unicode/utf8"
)

// GlobalMemory is the workspace name io-harness uses for memory shared by
// every workspace.
const GlobalMemory = "<global>"

// MaxMemoryEntryChars is io-harness's default cap on one memory value.
const MaxMemoryEntryChars = 2000

// MemoryPut writes a fact (or, with kind "decision", a decision) under a
// workspace key, as io-harness's memory_write does: the value is cut to the
// entry cap, the run's first write to a key keeps a restore point, and a
// pinned entry is never overwritten (written is false then). Eviction under
// the store-wide caps is the harness's policy and is left to it.
func (s *Store) MemoryPut(ctx context.Context, workspace, key, value, runID string, step int, kind string) (written bool, err error) {
	run, err := s.runKey(runID)
	if err != nil {
		return false, err
	}
	if kind == "" {
		kind = "fact"
	}
	value = truncateMemoryValue(value, MaxMemoryEntryChars)
	hasSnapshots := s.si().has("memory_snapshots")
	err = s.inTx(ctx, func(tx *sql.Tx) error {
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
		n, _ := res.RowsAffected()
		written = n > 0
		if !written && snapshotted {
			_, err = tx.ExecContext(ctx, "DELETE FROM memory_snapshots WHERE run_id = ? AND workspace = ? AND key = ?", run, workspace, key)
		}
		return err
	})
	return written, err
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

func (s *Store) memoryCols() string {
	return "workspace, key, value, run_id, step, created_at, " + s.si().col("memory", "kind", "NULL") + ", " +
		s.si().col("memory", "pinned", "NULL")
}

func scanMemory(r interface{ Scan(...any) error }) (MemoryEntry, error) {
	var m MemoryEntry
	var run int64
	var created string
	var kind sql.NullString
	var pinned sql.NullInt64
	err := r.Scan(&m.Workspace, &m.Key, &m.Value, &run, &m.Step, &created, &kind, &pinned)
	m.RunID, m.CreatedAt, m.Pinned = idStr(run), parseTime(created), pinned.Int64 == 1
	m.Kind = "fact"
	if kind.String == "decision" {
		m.Kind = "decision"
	}
	return m, err
}

// MemoryGet reads one entry; ok is false when there is none.
func (s *Store) MemoryGet(ctx context.Context, workspace, key string) (MemoryEntry, bool, error) {
	if !s.si().has("memory") {
		return MemoryEntry{}, false, nil
	}
	m, err := scanMemory(s.read.QueryRowContext(ctx, "SELECT "+s.memoryCols()+" FROM memory WHERE workspace = ? AND key = ?", workspace, key))
	if errors.Is(err, sql.ErrNoRows) {
		return MemoryEntry{}, false, nil
	}
	return m, err == nil, mapDriverErr(s.path, err)
}

// MemoryList lists a workspace's entries oldest first; an empty workspace
// lists every workspace's.
func (s *Store) MemoryList(ctx context.Context, workspace string) ([]MemoryEntry, error) {
	if !s.si().has("memory") {
		return nil, nil
	}
	q := "SELECT " + s.memoryCols() + " FROM memory"
	var args []any
	if workspace != "" {
		q += " WHERE workspace = ?"
		args = append(args, workspace)
	}
	var out []MemoryEntry
	err := s.eachRow(ctx, q+" ORDER BY created_at ASC, key ASC", args, func(r *sql.Rows) error {
		m, err := scanMemory(r)
		out = append(out, m)
		return err
	})
	return out, err
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
