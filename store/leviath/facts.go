package leviath

import (
	"context"
	"time"

	"github.com/vigil-run/vigil/store"
)

// The facts Leviath's journal carries that vigil's contract names
// (store/facts.go):
//
//   - the token breakdown: InferenceUsage (0.4.0) carries cached_tokens and
//     cache_write_tokens beside prompt and completion, read into each
//     provider call (no reasoning or server-tool count);
//   - checkpoints: the ContextCheckpoint and Checkpoint records; resumes:
//     each OwnershipChanged, a restarted daemon taking the run over.
//
// The rest (citations, server tools, gates, memory, plans, queues, messages,
// processes, a live event stream) stay in the daemon's memory or its stage
// files: not recorded.

var (
	_ store.FactReader = (*Store)(nil)
	_ store.WriteClock = (*Store)(nil)
)

// RunFacts reads the run's checkpoints and restarts from its fold.
func (s *Store) RunFacts(ctx context.Context, runID string) (store.RunFacts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.findFolded(ctx, runID)
	if err != nil {
		return store.RunFacts{}, err
	}
	f := store.RunFacts{RunID: runID, Recorded: store.FactSet{}, Checkpoints: rs.ckpts}
	f.Recorded.Add(store.FactUsage, store.FactCheckpoints)
	for range rs.owners {
		f.Markers = append(f.Markers, store.Marker{Kind: "resume", Detail: "a restarted daemon took the run over"})
	}
	return f, nil
}

// LastWrite is the newest time the runs' files record: each journal's
// newest record and each meta's updated_at, as of the last refresh.
func (s *Store) LastWrite(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return time.Time{}, err
	}
	var last int64
	for _, rs := range s.runs {
		last = max(last, rs.lastAt)
		if m, ok := rs.meta(); ok {
			last = max(last, m.UpdatedAt)
		}
	}
	if last == 0 {
		return time.Time{}, nil
	}
	return unixTime(last), nil
}
