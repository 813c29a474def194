package harness

import (
	"context"
	"database/sql"
	"errors"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// Spawn is the persisted contract of a child run, kept so a resumed parent
// adopts the child instead of spawning it again.
type Spawn struct {
	ParentRunID string
	Step        int
	ChildRunID  string
	Goal        string
	VerifyFile  string
	Needle      string
	MaxSteps    *int64
	DenyWrite   string // JSON array of globs; "[]" when empty
	AsName      string // the child's address in the tree
}

// RecordSpawn writes a spawn row.
func (s *Store) RecordSpawn(ctx context.Context, sp Spawn) error {
	parent, err := s.runKey(sp.ParentRunID)
	if err != nil {
		return err
	}
	child, err := s.runKey(sp.ChildRunID)
	if err != nil {
		return err
	}
	deny := sp.DenyWrite
	if deny == "" {
		deny = "[]"
	}
	if s.si().HasCol("spawns", "as_name") {
		_, err = s.exec(ctx, `INSERT INTO spawns (parent_run_id, step, child_run_id, goal, verify_file, needle, max_steps, deny_write, as_name)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, parent, sp.Step, child, sp.Goal, sp.VerifyFile, sp.Needle,
			nullableInt(sp.MaxSteps), deny, sp.AsName)
	} else {
		_, err = s.exec(ctx, `INSERT INTO spawns (parent_run_id, step, child_run_id, goal, verify_file, needle, max_steps, deny_write)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, parent, sp.Step, child, sp.Goal, sp.VerifyFile, sp.Needle,
			nullableInt(sp.MaxSteps), deny)
	}
	return err
}

// FindSpawn looks a spawn up by its adoption key (parent, step, exact goal);
// the oldest row wins. ok is false when there is none.
func (s *Store) FindSpawn(ctx context.Context, parentRunID string, step int, goal string) (Spawn, bool, error) {
	parent, err := s.runKey(parentRunID)
	if err != nil {
		return Spawn{}, false, err
	}
	sp := Spawn{ParentRunID: parentRunID, Step: step}
	var child int64
	var max sql.NullInt64
	err = s.read.QueryRowContext(ctx, `SELECT child_run_id, goal, verify_file, needle, max_steps, deny_write, `+
		s.si().Col("spawns", "as_name", "''")+`
		FROM spawns WHERE parent_run_id = ? AND step = ? AND goal = ? ORDER BY id ASC LIMIT 1`, parent, step, goal).
		Scan(&child, &sp.Goal, &sp.VerifyFile, &sp.Needle, &max, &sp.DenyWrite, &sp.AsName)
	if errors.Is(err, sql.ErrNoRows) {
		return Spawn{}, false, nil
	}
	if err != nil {
		return Spawn{}, false, mapDriverErr(s.path, err)
	}
	sp.ChildRunID, sp.MaxSteps = schema.ID(child), nullInt(max)
	return sp, true, nil
}

func nullInt(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}
