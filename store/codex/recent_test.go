package codex_test

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

// replicate writes the real CLI's session (the parent rollout and its
// sub-agent's) again under root as session n with fresh thread ids,
// started on day of November 2026 (every time moved there) in that day's
// directory, its rollouts last written at mod: as a tree of months holds
// many sessions. It returns the parent's and the sub-agent's ids.
func replicate(t *testing.T, root string, n, day int, mod time.Time) (parent, child string) {
	t.Helper()
	parent, child = fmt.Sprintf("%08d-0000-7000-8000-000000000001", n), fmt.Sprintf("%08d-0000-7000-8000-000000000002", n)
	stamp := fmt.Sprintf("2026-11-%02dT18:", day)
	re := strings.NewReplacer(parentID, parent, childID, child, "2026-12-04T18:", stamp)
	dir := filepath.Join(root, "2026", "11", fmt.Sprintf("%02d", day))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for id, fresh := range map[string]string{parentID: parent, childID: child} {
		b, err := os.ReadFile(fixtureFile(t, id))
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, "rollout-"+strings.ReplaceAll(strings.TrimSuffix(stamp, ":"), ":", "-")+"-35-45-"+fresh+".jsonl")
		if err := os.WriteFile(to, []byte(re.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(to, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	return parent, child
}

// The first page of a sessions tree reads the newest rollouts alone (a stat
// of every rollout, then the page's), and holds only runs that sort above
// every run left out: each left out started before it was last written, so
// before the newest of those writes; a sub-agent goes with its root. On
// main RecentRuns read every rollout (all true) and the first cursor
// followed every rollout (Head).
func TestRecentRunsReadsTheNewestSessions(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "sessions")
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	var ids []string
	for day := 1; day <= 10; day++ {
		p, _ := replicate(t, root, day, day, at(day, 20))
		ids = append(ids, p)
	}
	// Started on day 2, resumed and written last: the newest files, an
	// old session.
	long, _ := replicate(t, root, 99, 2, at(11, 9))
	src := open(t, root)
	if c := src.Capabilities(); !c.Has(store.CapFirstPage | store.CapQuickHead) {
		t.Fatal("codex does not read a first page")
	}
	page, all, err := src.RecentRuns(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if all {
		t.Fatalf("RecentRuns(6) read every rollout (%d runs)", len(page))
	}
	// By file: the long session, day 10, day 9 (six rollouts); day 8's,
	// the newest left out, were written on day 8 at 20:00: day 10 and day
	// 9 started after it, the long session before.
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
		if r.Goal != w.Goal || !r.StartedAt.Equal(w.StartedAt) || r.Status != w.Status || r.ParentID != w.ParentID ||
			r.Depth != w.Depth || r.Steps != w.Steps || r.Tokens != w.Tokens || r.StatsKnown != w.StatsKnown {
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
	// The first cursor follows the page's rollouts alone, and Changes
	// refuses it until it is made whole: from then on a turn appended to an
	// old session comes through, from where its file ended at WholeHead.
	cur, whole, err := src.HeadNewest(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if whole {
		t.Fatal("HeadNewest(6) says its cursor follows every rollout")
	}
	if _, _, err := src.Changes(ctx, cur); err == nil {
		t.Fatal("Changes read from a cursor that follows the newest rollouts alone")
	}
	if cur, err = src.WholeHead(ctx, cur); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "2026", "11", "01", "rollout-*"+ids[0]+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("day 1's rollout: %v", files)
	}
	appendTo(t, files[0], []byte(`{"timestamp":"2026-11-01T19:00:00.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"later"}]}}`+"\n"+
		`{"timestamp":"2026-11-01T19:00:00.001Z","type":"token_usage_record","payload":{"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}}}`+"\n"))
	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, row := range ch.Steps {
		got[row.RunID]++
	}
	if len(got) != 1 || got[ids[0]] != 1 {
		t.Errorf("after a turn appended to day 1's session, Changes has steps of %v, want that session's one", got)
	}
	// A page that would hold every rollout is every run.
	if page, all, err := src.RecentRuns(ctx, 100); err != nil || !all || len(page) != len(every) {
		t.Errorf("RecentRuns(100) = %d runs, all %v, %v: want all %d", len(page), all, err, len(every))
	}
}
