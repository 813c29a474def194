//go:build unix

package leviath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit/bigrun"
)

// bigJournal is a runs directory whose one run has a journal of about
// size bytes: jobs that each append an assistant turn and a tool result of
// entry bytes to the conversation, which grows without eviction (the
// worst a journal can be: the whole window is the transcript).
func bigJournal(t testing.TB, size, entry int) (runs, id string) {
	t.Helper()
	dir := bigrun.CacheDir(t, fmt.Sprintf("leviath-%d-%d", size, entry))
	runs, id = filepath.Join(dir, "runs"), "big-1785427200-0123456789ab"
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return runs, id
	}
	os.RemoveAll(runs)
	m := baseMeta(id, "big", "A run with a very long journal", t0)
	g := newGenRun(t, runs, m, true, stdRegions(m.task)...)
	f, err := os.OpenFile(filepath.Join(g.dir, "run.lvr"), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("0123456789abcdef ", entry/17+1)[:entry]
	written := 0
	for i := 0; written < size; i++ {
		g.meta.prompt += 1000
		g.meta.iteration++
		conv := g.region("conversation")
		if len(conv.entries) > 4 {
			// What the generator keeps in memory, not what the journal
			// holds: each frame appends to the window vigil folds.
			conv.entries = conv.entries[len(conv.entries)-4:]
		}
		call := fmt.Sprintf("toolu_%d", i)
		b := g.progressFrame(t0+int64(i), g.appendD("conversation",
			turnE(fmt.Sprintf("turn %d", i), genCall{call, "bash", args("command", "cat big.log")}),
			resultE(call, "bash", text, false)))
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		written += len(b)
	}
	f.Close()
	g.writeMeta()
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return runs, id
}

// TestBigJournal: a 1 GB journal (256 KB tool results) is read by runs,
// show --json and the explorer in bounded memory, the explorer's rows on
// screen within a second of its start. (VIGIL_BIG=1; VIGIL_BIG_OLD, a
// build to measure beside this one, each command in turn.) Every run
// folds the journal cold, in a fold cache of its own: a summary one run
// wrote would make the next one's read warm, the other build's too, and
// the user's own cache is left alone.
func TestBigJournal(t *testing.T) {
	bigrun.Skip(t)
	for _, shape := range [][2]int{{1 << 30, 100 << 20}, {1 << 30, 256 << 10}} {
		bigJournalBounds(t, shape[0], shape[1])
	}
}

func bigJournalBounds(t *testing.T, size, entry int) {
	t.Logf("a %d MB journal of %d KB entries", size>>20, entry>>10)
	runs, id := bigJournal(t, size, entry)
	bins := [][2]string{{"", bigrun.Binary(t)}}
	if old := bigrun.Old(); old != "" {
		bins = append(bins, [2]string{"old ", old}) // VIGIL_BIG_OLD: the build before, beside
	}
	for _, args := range [][]string{{"runs"}, {"runs", "--json"}, {"show", id}, {"show", id, "--json"}} {
		for _, b := range bins {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			r := bigrun.RunWith(t, b[1], append(args, "--store", runs)...)
			t.Logf("%svigil %-16s %6.2fs wall %6.2fs cpu  %4d MB RSS  exit %d  %d bytes out", b[0], strings.Join(args, " "), r.Took.Seconds(), r.CPU.Seconds(), r.MaxRSS>>20, r.Code, r.OutBytes)
			if b[0] != "" {
				continue
			}
			if r.Code != 0 {
				t.Errorf("exit %d: %s", r.Code, r.Stderr)
			}
			if r.MaxRSS > 200<<20 {
				t.Errorf("vigil %s: %d MB resident", strings.Join(args, " "), r.MaxRSS>>20)
			}
		}
	}
	for _, b := range bins {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		first, hwm := bigrun.ExploreWith(t, b[1], "A run with a very long", 2*time.Second, "--store", runs)
		t.Logf("%sexplorer: rows after %.2fs, %d MB RSS", b[0], first.Seconds(), hwm>>20)
		if b[0] == "" && (first > time.Second || hwm > 200<<20) {
			t.Errorf("explorer: rows after %v, %d MB resident", first, hwm>>20)
		}
	}
}
