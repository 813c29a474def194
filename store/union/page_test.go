package union

import (
	"context"
	"sort"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// The set's first page is each store's share of it, every run of the set
// once all are in it; its quick head, made whole, is followed; its cursor
// written down and read back is followed on as the one it was made from.
func TestFirstPageQuickHeadAndCursorCodecOfASet(t *testing.T) {
	ctx := context.Background()
	set, _, _ := twoStores(t)
	src := set.Source()
	if c := src.Capabilities(); !c.Has(store.CapFirstPage | store.CapQuickHead | store.CapCursorCodec) {
		t.Fatalf("a set of two io-harness stores offers %s", c)
	}

	page, all, err := src.RecentRuns(ctx, 2)
	if err != nil || all || len(page) != 2 {
		t.Fatalf("RecentRuns(2) = %d runs, all %v, %v: want one of each store's two, not all", len(page), all, err)
	}
	if p0, p1 := page[0].ID[:len("alpha")], page[1].ID[:len("beta")]; p0 != "alpha" || p1 != "beta" {
		t.Errorf("the page is %s and %s: want one run of each store", page[0].ID, page[1].ID)
	}
	page, all, err = src.RecentRuns(ctx, 10)
	var ids []string
	for _, r := range page {
		ids = append(ids, r.ID)
	}
	sort.Strings(ids)
	if err != nil || !all || len(ids) != 4 {
		t.Fatalf("RecentRuns(10) = %v, all %v, %v: want every run, all", ids, all, err)
	}

	cur, _, err := src.HeadNewest(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cur, err = src.WholeHead(ctx, cur); err != nil {
		t.Fatal(err)
	}
	b, err := src.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	back, err := src.DecodeCursor(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []store.Cursor{cur, back} {
		ch, _, err := src.Changes(ctx, c)
		if err != nil || ch.Reset || !ch.Empty() {
			t.Errorf("Changes after the first cursor = %+v, %v: want nothing new, no reset", ch, err)
		}
	}
	if _, err := src.DecodeCursor([]byte(`[null]`)); err == nil {
		t.Error("a cursor of a set of one store read back")
	}
}
