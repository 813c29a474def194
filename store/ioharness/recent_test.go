package ioharness_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// RecentRuns is the explorer's first page: the newest runs, each root's
// tree whole, dressed as Runs dresses them, and every run once the page
// holds them all.
func TestRecentRunsIsTheNewestWholeTrees(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Roots 1, 4, 7, 10 each with two children; the last root is leased.
	for i := 0; i < 4; i++ {
		root, err := w.StartRun(ctx, fmt.Sprintf("root %d", i), "/w")
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2; j++ {
			if _, err := w.StartChildRun(ctx, fmt.Sprintf("child %d.%d", i, j), "/w", root, 1); err != nil {
				t.Fatal(err)
			}
		}
		if i < 3 {
			if err := w.FinishRun(ctx, root, store.OutcomeSuccess); err != nil {
				t.Fatal(err)
			}
		} else if _, err := w.AcquireLease(ctx, root, harness.DefaultLeaseTTL); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 5 newest ids are 12, 11, 10 (root 3 whole), 9, 8 (children of root 7,
	// which is older than the page): only root 10's tree is whole.
	page, whole, err := s.RecentRuns(ctx, 5)
	if err != nil || whole {
		t.Fatalf("RecentRuns(5): all %v, err %v", whole, err)
	}
	if got := ids(page); got != "12 11 10" {
		t.Fatalf("RecentRuns(5) = %s, want the newest root's tree, 12 11 10", got)
	}
	if page[2].Lease == nil || page[2].Lease.Owner != all[2].Lease.Owner {
		t.Fatalf("the page's root is not dressed with its lease: %+v", page[2].Lease)
	}
	page, whole, err = s.RecentRuns(ctx, 6)
	if err != nil || whole || ids(page) != "12 11 10 9 8 7" {
		t.Fatalf("RecentRuns(6) = %s (all %v, %v), want two whole trees, 12 11 10 9 8 7", ids(page), whole, err)
	}
	page, whole, err = s.RecentRuns(ctx, 8)
	if err != nil || whole || ids(page) != "12 11 10 9 8 7" {
		t.Fatalf("RecentRuns(8) = %s (all %v, %v), want 12 11 10 9 8 7", ids(page), whole, err)
	}
	page, whole, err = s.RecentRuns(ctx, 12)
	if err != nil || !whole || ids(page) != ids(all) {
		t.Fatalf("RecentRuns(12) = %s (all %v, %v), want every run %s", ids(page), whole, err, ids(all))
	}
	for i := range page {
		if page[i].Goal != all[i].Goal || page[i].StatsKnown != all[i].StatsKnown || page[i].Status != all[i].Status {
			t.Fatalf("run %s in the page differs from Runs: %+v vs %+v", page[i].ID, page[i], all[i])
		}
	}
}

// HasRun answers from the run's row: the explorer's --run is checked
// without reading every run.
func TestHasRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := w.StartRun(ctx, "one", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   string
		want bool
	}{{id, true}, {"99", false}, {"run 1", false}, {"", false}} {
		if got, err := s.HasRun(ctx, c.id); err != nil || got != c.want {
			t.Errorf("HasRun(%q) = %v, %v; want %v", c.id, got, err, c.want)
		}
	}
}

func ids(runs []store.Run) string {
	s := ""
	for i, r := range runs {
		if i > 0 {
			s += " "
		}
		s += r.ID
	}
	return s
}
