package claudecode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// replicate lays out the real CLI's session (and its sub-agent) again under
// proj with fresh ids, started on day of November 2026 (every timestamp
// moved there), its files last written at mod: as a history of months
// holds many sessions.
func replicate(t *testing.T, proj string, n int, day int, mod time.Time) string {
	t.Helper()
	src := fixtures(t)
	const sid, agent = "bd81e6a3-b2bd-470f-9ea2-c80d6d45824b", "adacfd069ace754ac"
	id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", n)
	fresh := fmt.Sprintf("a%016d", n)
	re := strings.NewReplacer(sid, id, agent, fresh, "2026-12-04T18:", fmt.Sprintf("2026-11-%02dT18:", day))
	put := func(from, to string) {
		b, err := os.ReadFile(from)
		must(t, err)
		must(t, os.MkdirAll(filepath.Dir(to), 0o755))
		must(t, os.WriteFile(to, []byte(re.Replace(string(b))), 0o644))
		must(t, os.Chtimes(to, mod, mod))
	}
	put(filepath.Join(src, "transcript", "main-session.jsonl"), filepath.Join(proj, id+".jsonl"))
	for _, ext := range []string{".jsonl", ".meta.json"} {
		put(filepath.Join(src, "transcript", "subagents", "agent-"+agent+ext),
			filepath.Join(proj, id, "subagents", "agent-"+fresh+ext))
	}
	return id
}

// The first page of a history reads the newest sessions' files alone (a
// stat of every session, then the head and tail of the page's), and holds
// only sessions that sort above every session left out: each left out
// started before it was last written, so before the newest of those
// writes. On main RecentRuns read every transcript (all true).
func TestRecentRunsReadsTheNewestSessions(t *testing.T) {
	ctx := context.Background()
	cfg := filepath.Join(t.TempDir(), ".claude")
	proj := filepath.Join(cfg, "projects", "-home-dev-work")
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	var ids []string
	for day := 1; day <= 10; day++ {
		ids = append(ids, replicate(t, proj, day, day, at(day, 20)))
	}
	// Started on day 2, written last: the newest file, an old session.
	long := replicate(t, proj, 99, 2, at(11, 9))
	src := open(t, cfg)
	if !src.Capabilities().Has(store.CapFirstPage) {
		t.Fatal("claude-code does not read a first page")
	}
	page, all, err := src.RecentRuns(ctx, 6)
	must(t, err)
	if all {
		t.Fatalf("RecentRuns(6) read every transcript (%d runs)", len(page))
	}
	// By file: the long session, day 10, day 9 (six transcripts); day 8's
	// file, the newest left out, was written on day 8 at 20:00: day 10 and
	// day 9 started after it, the long session before.
	var roots []string
	for _, r := range page {
		if r.ParentID == "" {
			roots = append(roots, r.ID)
		}
	}
	slices.Sort(roots)
	if want := []string{ids[8], ids[9]}; !slices.Equal(roots, want) {
		t.Fatalf("RecentRuns(6) roots %v, want days 9 and 10 %v (not the long session %s)", roots, want, long)
	}
	if len(page) != 4 {
		t.Fatalf("RecentRuns(6) = %d runs, want the two sessions and their sub-agents", len(page))
	}
	// The page is the top of the list: the same runs as Runs says them.
	every := runsByID(t, src)
	for _, r := range page {
		w := every[r.ID]
		if r.Goal != w.Goal || !r.StartedAt.Equal(w.StartedAt) || r.Status != w.Status || r.ParentID != w.ParentID || r.Depth != w.Depth {
			t.Errorf("run %s in the page differs from Runs: %+v vs %+v", r.ID, r, w)
		}
	}
	var newest []store.Run
	for _, r := range every {
		if r.ParentID == "" {
			newest = append(newest, r)
		}
	}
	slices.SortFunc(newest, func(a, b store.Run) int { return b.StartedAt.Compare(a.StartedAt) })
	if got := []string{newest[1].ID, newest[0].ID}; !slices.Equal(got, roots) {
		t.Errorf("the list's top two roots are %v, the page's %v", got, roots)
	}
	// The first cursor follows the page's transcripts alone, and Changes
	// refuses it until it is made whole: from then on a turn appended to an
	// old session comes through, from where its file ended at WholeHead.
	cur, whole, err := src.HeadNewest(ctx, 6)
	must(t, err)
	if whole {
		t.Fatal("HeadNewest(6) says its cursor follows every session")
	}
	if _, _, err := src.Changes(ctx, cur); err == nil {
		t.Fatal("Changes read from a cursor that follows the newest sessions alone")
	}
	cur, err = src.WholeHead(ctx, cur)
	must(t, err)
	appendTo(t, filepath.Join(proj, ids[0]+".jsonl"), toolTurn)
	ch, _, err := src.Changes(ctx, cur)
	must(t, err)
	got := map[string]int{}
	for _, row := range ch.Steps {
		got[row.RunID]++
	}
	if len(got) != 1 || got[ids[0]] == 0 {
		t.Errorf("after a turn appended to day 1's session, Changes has steps of %v, want that session's alone", got)
	}
	// A page that would hold every session is every run.
	if page, all, err := src.RecentRuns(ctx, 100); err != nil || !all || len(page) != len(every) {
		t.Errorf("RecentRuns(100) = %d runs, all %v, %v: want all %d", len(page), all, err, len(every))
	}
}
