// Package firstpage holds a store of one file per session (Claude Code,
// Codex) to what its first page owes the explorer: the newest sessions,
// said as the whole list says them, and a cursor that follows them alone
// until it is made whole.
package firstpage

import (
	"context"
	"slices"
	"testing"

	"github.com/vigil-run/vigil/store"
)

// Page is what Check is told of the store it checks.
type Page struct {
	Limit     int      // what RecentRuns and HeadNewest are asked for
	Roots     []string // the sessions the page holds, sorted
	Runs      int      // the page's runs, sub-agents included
	Oldest    string   // a session left out of the page
	AppendOld func()   // appends one step to Oldest's file
	Steps     int      // what Changes then says of Oldest: 0 for any number
}

// Check holds src to p: RecentRuns(p.Limit) is p.Roots and their
// sub-agents, each as Runs says it, and they top the list; HeadNewest's
// cursor is refused by Changes until WholeHead, after which a step
// appended to a session left out comes through alone; a page that would
// hold every session is every run.
func Check(t *testing.T, src store.Source, p Page) {
	t.Helper()
	ctx := context.Background()
	if c := src.Capabilities(); !c.Has(store.CapFirstPage) {
		t.Fatalf("%s does not read a first page", src.Format())
	}
	page, all, err := src.RecentRuns(ctx, p.Limit)
	if err != nil {
		t.Fatal(err)
	}
	if all {
		t.Fatalf("RecentRuns(%d) read every session (%d runs)", p.Limit, len(page))
	}
	var roots []string
	for _, r := range page {
		if r.ParentID == "" {
			roots = append(roots, r.ID)
		}
	}
	slices.Sort(roots)
	if !slices.Equal(roots, p.Roots) {
		t.Fatalf("RecentRuns(%d) roots %v, want %v", p.Limit, roots, p.Roots)
	}
	if len(page) != p.Runs {
		t.Fatalf("RecentRuns(%d) = %d runs, want %d: the sessions and their sub-agents", p.Limit, len(page), p.Runs)
	}
	runs, err := src.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	every := map[string]store.Run{}
	var newest []store.Run
	for _, r := range runs {
		every[r.ID] = r
		if r.ParentID == "" {
			newest = append(newest, r)
		}
	}
	for _, r := range page {
		w := every[r.ID]
		if r.Goal != w.Goal || !r.StartedAt.Equal(w.StartedAt) || r.Status != w.Status || r.ParentID != w.ParentID ||
			r.Depth != w.Depth || r.Steps != w.Steps || r.Tokens != w.Tokens || r.StatsKnown != w.StatsKnown {
			t.Errorf("run %s in the page differs from Runs: %+v vs %+v", r.ID, r, w)
		}
	}
	slices.SortFunc(newest, func(a, b store.Run) int { return b.StartedAt.Compare(a.StartedAt) })
	top := make([]string, 0, len(p.Roots))
	for _, r := range newest[:min(len(p.Roots), len(newest))] {
		top = append(top, r.ID)
	}
	slices.Sort(top)
	if !slices.Equal(top, roots) {
		t.Errorf("the list's top roots are %v, the page's %v", top, roots)
	}

	cur, whole, err := src.HeadNewest(ctx, p.Limit)
	if err != nil {
		t.Fatal(err)
	}
	if whole {
		t.Fatalf("HeadNewest(%d) says its cursor follows every session", p.Limit)
	}
	if _, _, err := src.Changes(ctx, cur); err == nil {
		t.Fatal("Changes read from a cursor that follows the newest sessions alone")
	}
	if cur, err = src.WholeHead(ctx, cur); err != nil {
		t.Fatal(err)
	}
	p.AppendOld()
	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, row := range ch.Steps {
		got[row.RunID]++
	}
	if len(got) != 1 || got[p.Oldest] == 0 || p.Steps > 0 && got[p.Oldest] != p.Steps {
		t.Errorf("after a step appended to %s, Changes has steps of %v, want that session's alone", p.Oldest, got)
	}
	if page, all, err := src.RecentRuns(ctx, 100); err != nil || !all || len(page) != len(runs) {
		t.Errorf("RecentRuns(100) = %d runs, all %v, %v: want all %d", len(page), all, err, len(runs))
	}
}
