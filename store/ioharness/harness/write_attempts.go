package harness

import (
	"context"
	"fmt"

	"github.com/vigil-run/vigil/store/ioharness/internal/schema"
)

// Tool attempts (io-harness 0.65): the journal of a tool call whose effect a
// replay cannot repeat safely. A harness opens an attempt before such a call
// and closes it after, each its own commit outside the step transaction, so
// a driver that dies mid-call leaves the attempt open; io-harness's resume
// then stops (recovery_pause) until a person decides it with
// resume_with_recovery: retry, completed or abort.

// OpenAttempt records that a non-replayable call is about to be made
// (open_attempt, src/state/trace.rs). Returns the attempt's id.
func (s *Store) OpenAttempt(ctx context.Context, runID string, step int, tool string) (string, error) {
	run, err := s.runKey(runID)
	if err != nil {
		return "", err
	}
	if err := s.needTable("tool_attempts"); err != nil {
		return "", err
	}
	return s.insert(ctx, "INSERT INTO tool_attempts (run_id, step, tool) VALUES (?, ?, ?)", run, step, tool)
}

// CloseAttempt records that the call returned (close_attempt).
func (s *Store) CloseAttempt(ctx context.Context, attemptID string) error {
	id, ok := schema.ParseID(attemptID)
	if !ok {
		return fmt.Errorf("%q is not an attempt id", attemptID)
	}
	_, err := s.exec(ctx, "UPDATE tool_attempts SET completed_at = "+isoNow+" WHERE id = ? AND completed_at IS NULL", id)
	return err
}

// ResolveAttempt closes an attempt by an operator's decision: retry,
// completed or abort (resolve_attempt).
func (s *Store) ResolveAttempt(ctx context.Context, attemptID, resolution string) error {
	id, ok := schema.ParseID(attemptID)
	if !ok {
		return fmt.Errorf("%q is not an attempt id", attemptID)
	}
	_, err := s.exec(ctx, "UPDATE tool_attempts SET completed_at = "+isoNow+", resolution = ? WHERE id = ? AND completed_at IS NULL",
		resolution, id)
	return err
}
