package leviath

import (
	"testing"

	"github.com/vigil-run/vigil/store"
)

// Leviath's facts: checkpoints (each ContextCheckpoint and Checkpoint),
// resumes (each daemon restart's OwnershipChanged) and the cache counts of
// HEAD's InferenceUsage; the rest are not recorded.
func TestRunFacts(t *testing.T) {
	_, s := openFx(t)
	f, err := s.RunFacts(bg, idRoot)
	if err != nil {
		t.Fatal(err)
	}
	// The new run's checkpoint and the restart's.
	if f.Checkpoints != 2 || f.Resumes() != 1 {
		t.Errorf("root: %d checkpoints, %d resumes; want 2, 1", f.Checkpoints, f.Resumes())
	}
	if l, _ := s.RunFacts(bg, idLinks); l.Checkpoints != 2 || l.Resumes() != 0 {
		t.Errorf("links (a Checkpoint record): %d checkpoints, %d resumes", l.Checkpoints, l.Resumes())
	}
	for _, fact := range []store.Fact{store.FactRunEvents, store.FactCitations, store.FactServerTools, store.FactGates, store.FactTodos} {
		if f.Recorded.Has(fact) {
			t.Errorf("Leviath records %s?", fact)
		}
	}
	calls, err := s.ProviderCalls(bg, idChangelog)
	if err != nil {
		t.Fatal(err)
	}
	u := store.SumUsage(calls)
	if u.Calls != 3 || u.CacheRead == nil || *u.CacheRead != 1600 || *u.CacheWrite != 1600 || u.Reasoning != nil {
		t.Errorf("changelog usage %+v", u)
	}
	if _, err := s.RunFacts(bg, "nope"); err == nil {
		t.Error("facts of a run that does not exist")
	}
	last, err := s.LastWrite(bg)
	if err != nil || last.IsZero() {
		t.Errorf("last write %v, %v", last, err)
	}
}
