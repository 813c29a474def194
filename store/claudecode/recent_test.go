package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/firstpage"
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
	cfg := filepath.Join(t.TempDir(), ".claude")
	proj := filepath.Join(cfg, "projects", "-home-dev-work")
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	var ids []string
	for day := 1; day <= 10; day++ {
		ids = append(ids, replicate(t, proj, day, day, at(day, 20)))
	}
	// Started on day 2, written last: the newest file, an old session.
	replicate(t, proj, 99, 2, at(11, 9))
	// By file: the long session, day 10, day 9 (six transcripts); day 8's
	// file, the newest left out, was written on day 8 at 20:00: day 10 and
	// day 9 started after it, the long session before.
	firstpage.Check(t, open(t, cfg), firstpage.Page{Limit: 6, Roots: []string{ids[8], ids[9]}, Runs: 4,
		Oldest: ids[0], AppendOld: func() { appendTo(t, filepath.Join(proj, ids[0]+".jsonl"), toolTurn) }})
}
