package views

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/keymap"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// oracleOrder is the runs pane's order as it was written first, a stable
// sort of the items themselves: each key, ties newest first (start time,
// then the id's number, then its text), equal runs as given.
func oracleOrder(items []RunItem, k SortKey) []RunItem {
	items = append([]RunItem(nil), items...)
	newer := func(i, j int) bool {
		a, b := items[i].Run, items[j].Run
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.After(b.StartedAt)
		}
		if na, nb := store.IDNumber(a.ID), store.IDNumber(b.ID); na != nb {
			return na > nb
		}
		return a.ID > b.ID
	}
	less := map[SortKey]func(i, j int) bool{
		SortNewest:   newer,
		SortOldest:   func(i, j int) bool { return newer(j, i) },
		SortTokens:   func(i, j int) bool { return items[i].Tree.Tokens > items[j].Tree.Tokens },
		SortSteps:    func(i, j int) bool { return items[i].Tree.Steps > items[j].Tree.Steps },
		SortDuration: func(i, j int) bool { return items[i].Duration > items[j].Duration },
		SortState:    func(i, j int) bool { return items[i].State < items[j].State },
	}[k]
	sort.SliceStable(items, func(i, j int) bool {
		if less(i, j) != less(j, i) {
			return less(i, j)
		}
		return newer(i, j)
	})
	return items
}

// shownIDs are the ids the pane lists, in its order, and its count note.
func shownIDs(p *Runs) []string {
	var ids []string
	for i := range p.shown {
		ids = append(ids, p.item(i).Run.ID)
	}
	return ids
}

// Every order of the pane is the order the items sorted themselves in,
// ties and equal runs included, filtered or not, and the cursor stays on
// its run whichever order it moves to.
func TestRunsOrderIsTheItemsOrder(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	rng := rand.New(rand.NewSource(23))
	var items []RunItem
	for i := 0; i < 400; i++ {
		id := fmt.Sprint(rng.Intn(300))
		if rng.Intn(5) == 0 {
			id = fmt.Sprintf("run-%c", 'a'+rng.Intn(20)) // no number: the text decides
		}
		var at time.Time
		if rng.Intn(4) > 0 {
			at = now.Add(-time.Duration(rng.Intn(6)) * time.Minute) // many equal times
		}
		goal := "refactor"
		if i%3 == 0 {
			goal = "deploy"
		}
		items = append(items, RunItem{
			Run:      store.Run{ID: id, Goal: fmt.Sprintf("%s %d", goal, i), StartedAt: at},
			State:    store.State(rng.Intn(4)),
			Tree:     runmodel.Counts{Steps: rng.Intn(4), Tokens: int64(rng.Intn(4)), Known: true},
			Duration: time.Duration(rng.Intn(3)) * time.Second,
		})
	}
	p := NewRuns(env)
	p.SetSize(120, 30)
	p.SetItems(items)
	for _, filter := range []string{"", "deploy"} {
		var from []RunItem
		for _, it := range items {
			if filter == "" || strings.Contains(it.Run.Goal, filter) {
				from = append(from, it)
			}
		}
		p.filter.SetValue(filter)
		for k := SortKey(0); k < sortKeys; k++ {
			p.sort = k
			p.apply()
			var want []string
			for _, it := range oracleOrder(from, k) {
				want = append(want, it.Run.ID+" "+it.Run.Goal)
			}
			var got []string
			for i := range p.shown {
				got = append(got, p.item(i).Run.ID+" "+p.item(i).Run.Goal)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("filter %q, sort %s: the pane's order is not the items' own", filter, k)
			}
		}
	}
	p.filter.SetValue("")
	p.sort = SortNewest
	p.apply()
	p.list.Select(7)
	p.remember()
	sel, _ := p.Selected()
	p.sort = SortTokens
	p.apply()
	if got, _ := p.Selected(); got.Run.Goal != sel.Run.Goal && got.Run.ID != sel.Run.ID {
		t.Fatalf("the cursor left %s for %s when the order changed", sel.Run.ID, got.Run.ID)
	}
	if v := ansi.Strip(p.View(true)); !strings.Contains(v, "400 runs · tokens") {
		t.Fatalf("the title does not count the runs in their order:\n%s", v)
	}
}

// Listing 20 k runs copies none of them (a copy of each was 6 MB, grown
// by appending to 32 MB, the 10 M-step store's peak), and refilling the
// pane with as many again (the explorer does every second, for the clock)
// allocates nothing that grows with them.
func TestRunsListingCopiesNoRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	env := &Env{Theme: PlainTheme(), Keys: keymap.Default(), Now: func() time.Time { return now }}
	items := make([]RunItem, 20_000)
	for i := range items {
		items[i] = RunItem{Run: store.Run{ID: fmt.Sprint(len(items) - i), Goal: "task", StartedAt: now.Add(-time.Duration(i) * time.Second)}}
	}
	p := NewRuns(env)
	p.SetSize(120, 30)
	allocated := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p.SetItems(items)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	if got := allocated(); got > 256<<10 {
		t.Fatalf("listing 20 k runs allocated %d KB", got>>10)
	}
	if got := allocated(); got > 64<<10 {
		t.Fatalf("listing 20 k runs again allocated %d KB", got>>10)
	}
	if ids := shownIDs(p); len(ids) != len(items) || ids[0] != "20000" || ids[len(ids)-1] != "1" {
		t.Fatalf("the runs listed: %d, from %v", len(ids), ids[:3])
	}
	// An agent CLI's ids are uuids, cut for display: the RUN column is at
	// its widest after the first, and no other needs making.
	for i := range items {
		items[i].Run.ID = fmt.Sprintf("%08x-0000-4000-8000-%012x", len(items)-i, len(items)-i)
	}
	allocated()
	if got := allocated(); got > 64<<10 {
		t.Fatalf("listing 20 k runs with long ids again allocated %d KB", got>>10)
	}
}
