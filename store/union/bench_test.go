package union

import (
	"context"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// What the set adds to a refresh with nothing new, and to a full load,
// beside the same reads of one store alone.
func BenchmarkChangesIdle(b *testing.B) {
	set, _, _ := twoStores(b)
	bench(b, "one", set.ms[0].src)
	bench(b, "set-of-two", set.Source())
}

func bench(b *testing.B, name string, src store.Source) {
	ctx := context.Background()
	b.Run(name+"/changes", func(b *testing.B) {
		cur, err := src.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, cur, err = src.Changes(ctx, cur); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/runs+requests", func(b *testing.B) {
		for b.Loop() {
			if _, err := src.Runs(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := src.Requests(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
