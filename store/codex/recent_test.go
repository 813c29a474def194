package codex_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/firstpage"
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
	root := filepath.Join(t.TempDir(), "sessions")
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	var ids []string
	for day := 1; day <= 10; day++ {
		p, _ := replicate(t, root, day, day, at(day, 20))
		ids = append(ids, p)
	}
	// Started on day 2, resumed and written last: the newest files, an
	// old session.
	replicate(t, root, 99, 2, at(11, 9))
	// By file: the long session, day 10, day 9 (six rollouts); day 8's,
	// the newest left out, were written on day 8 at 20:00: day 10 and day
	// 9 started after it, the long session before.
	firstpage.Check(t, open(t, root), firstpage.Page{Limit: 6, Roots: []string{ids[8], ids[9]}, Runs: 4, Oldest: ids[0], Steps: 1,
		AppendOld: func() {
			files, _ := filepath.Glob(filepath.Join(root, "2026", "11", "01", "rollout-*"+ids[0]+".jsonl"))
			if len(files) != 1 {
				t.Fatalf("day 1's rollout: %v", files)
			}
			appendTo(t, files[0], []byte(`{"timestamp":"2026-11-01T19:00:00.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"later"}]}}`+"\n"+
				`{"timestamp":"2026-11-01T19:00:00.001Z","type":"token_usage_record","payload":{"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12}}}`+"\n"))
		}})
}
