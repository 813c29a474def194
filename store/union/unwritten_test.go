package union

import (
	"context"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// scripted answers Changes with what it is told (after the real call, for
// a real cursor).
type scripted struct {
	store.Source
	next *store.Changes
}

func (s *scripted) Changes(ctx context.Context, cur store.Cursor) (*store.Changes, store.Cursor, error) {
	_, nc, err := s.Source.Changes(ctx, cur)
	ch := s.next
	s.next = &store.Changes{}
	return ch, nc, err
}

// The set's changes are Unwritten (a fold put in place, no write) only
// when every store's are, or have nothing: one store's write makes them
// a write.
func TestUnwrittenOnlyWhenEveryStoreIs(t *testing.T) {
	dir := t.TempDir()
	a, b := harnessStore(t, dir, "alpha.sqlite3", "a"), harnessStore(t, dir, "beta.sqlite3", "b")
	sa, sb := &scripted{Source: open(t, a)}, &scripted{Source: open(t, b)}
	set, err := New([]Member{{Name: a, Source: sa}, {Name: b, Source: sb}})
	if err != nil {
		t.Fatal(err)
	}
	src := set.Source()
	ctx := context.Background()
	cur, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	folded := func() *store.Changes {
		return &store.Changes{Runs: []store.Run{{ID: "7", Status: "completed"}}, Unwritten: true}
	}
	for _, c := range []struct {
		a, b *store.Changes
		want bool
	}{
		{folded(), &store.Changes{}, true},
		{folded(), folded(), true},
		{folded(), &store.Changes{Runs: []store.Run{{ID: "8", Status: "running"}}}, false},
		{&store.Changes{}, &store.Changes{}, false},
	} {
		sa.next, sb.next = c.a, c.b
		ch, next, err := src.Changes(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Unwritten != c.want {
			t.Errorf("a %+v, b %+v: Unwritten %v, want %v", c.a, c.b, ch.Unwritten, c.want)
		}
		cur = next
	}
}
