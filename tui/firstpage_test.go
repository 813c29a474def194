package tui

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// A store with more runs than the first page: the first frame is the
// newest roots, drawn before every run is read; the rest fills in after
// it, with what was committed in between, and the live root older than
// the page is the one opened.
func TestFirstFrameIsTheNewestPageThenTheRest(t *testing.T) {
	ctx := context.Background()
	path, w := createdStore(t, "runs.sqlite3")
	const roots = firstPage + 44
	for i := 1; i <= roots; i++ {
		id, err := w.StartRun(ctx, fmt.Sprintf("root %d of the page test", i), "/w")
		if err != nil {
			t.Fatal(err)
		}
		if i == roots {
			// The newest root, unfinished: its counts come from RunStats.
			for n := 1; n <= 3; n++ {
				if err := w.RecordStepRow(ctx, id, harness.StepRecord{Step: n, Decision: "read a.go", Result: "ok", Tokens: 1000}); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if i == 5 {
			// The one live run, far older than the page.
			if _, err := w.AcquireLease(ctx, id, harness.DefaultLeaseTTL); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := w.FinishRun(ctx, id, store.OutcomeSuccess); err != nil {
			t.Fatal(err)
		}
	}
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true, Now: func() time.Time { return clock }})
	defer func() { m.Close(); m.src.Close() }()
	settle(m, tea.WindowSizeMsg{Width: 120, Height: 32})

	loaded, ok := loadAll(m.src)().(loadedMsg)
	if !ok || loaded.err != nil || !loaded.partial || len(loaded.runs) != firstPage {
		t.Fatalf("the first load read %d runs (partial %v, %v), want the newest %d", len(loaded.runs), loaded.partial, loaded.err, firstPage)
	}
	_, cmd := m.Update(loaded)
	frame := m.Render()
	if !strings.Contains(frame, fmt.Sprintf("root %d of the", roots)) || !strings.Contains(frame, fmt.Sprintf("%d runs", firstPage)) {
		t.Fatalf("the first frame does not show the newest page:\n%s", frame)
	}
	if m.askRefresh() != nil {
		t.Fatal("a refresh ran while only the page was held")
	}
	// Committed while the rest is read: shown once the rest is in.
	if _, err := w.StartRun(ctx, "started after the first frame", "/w"); err != nil {
		t.Fatal(err)
	}
	// The page's counts arrive before the rest: kept for it, not read again.
	stats, ok := loadStats(m.src, []string{fmt.Sprint(roots)})().(statsMsg)
	if !ok || stats.err != nil {
		t.Fatalf("the page's counts: %+v", stats)
	}
	m.Update(stats)
	rest, ok := loadRest(m.src, m.cursor)().(restMsg)
	if !ok || rest.err != nil {
		t.Fatalf("the rest: %+v", rest)
	}
	_ = cmd // the page's own commands (its counts) are not needed here
	settle(m, rest)
	frame = m.Render()
	if !regexp.MustCompile(fmt.Sprintf(`#%d +root %d of the page te… +3 +3k`, roots, roots)).MatchString(ansi.Strip(frame)) {
		t.Fatalf("after the rest the newest root lacks the counts read for the page (3 steps, 3k tokens):\n%s", frame)
	}
	for _, want := range []string{fmt.Sprintf("%d runs", roots+1), "started after the first", "#5 root 5 of the page"} {
		if !strings.Contains(frame, want) {
			t.Fatalf("after the rest the screen lacks %q:\n%s", want, frame)
		}
	}
}

// A request that waited at start on a run older than the first page is
// not news when the rest brings its run; one that arrives while the rest
// is read is.
func TestWhatWaitedBeforeThePageIsNotAnnounced(t *testing.T) {
	ctx := context.Background()
	path, w := createdStore(t, "runs.sqlite3")
	var old string
	for i := 1; i <= firstPage+10; i++ {
		id, err := w.StartRun(ctx, fmt.Sprintf("root %d", i), "/w")
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			old = id
			if _, err := w.AcquireLease(ctx, id, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, err := w.PutPending(ctx, id, 1, "write", "old.yaml", nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := w.FinishRun(ctx, id, store.OutcomeSuccess); err != nil {
			t.Fatal(err)
		}
	}
	src, err := ioharness.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true, Notify: Notify{Desktop: DesktopOSC777}})
	defer func() { m.Close(); m.src.Close() }()
	settle(m, tea.WindowSizeMsg{Width: 120, Height: 32})
	loaded, ok := loadAll(m.src)().(loadedMsg)
	if !ok || !loaded.partial {
		t.Fatalf("the first load was not a page: %+v", loaded.err)
	}
	m.Update(loaded)
	if _, err := w.PutPending(ctx, old, 2, "write", "new.yaml", nil); err != nil {
		t.Fatal(err)
	}
	settle(m, loadRest(m.src, m.cursor)())
	if m.first.partial {
		t.Fatal("the rest was not taken")
	}
	if len(m.alert.sent) != 1 || !strings.Contains(m.alert.sent[0], "new.yaml") {
		t.Fatalf("the request that arrived while the rest was read was not announced alone: %q", m.alert.sent)
	}
}

// A tree older than the page (every run in the page a child of a root
// started before it: a tree 100 k wide) leaves no whole tree in the first
// page: the first frame says the runs are being read, never that the
// store has none, and the rest brings the root with every agent of its
// tree.
func TestAPageWithoutAWholeTreeSaysItIsReading(t *testing.T) {
	ctx := context.Background()
	path, w := createdStore(t, "runs.sqlite3")
	root, err := w.StartRun(ctx, "the old root of a wide tree", "/w")
	if err != nil {
		t.Fatal(err)
	}
	const kids = firstPage + 20
	for i := 1; i <= kids; i++ {
		if _, err := w.StartChildRun(ctx, fmt.Sprintf("child %d", i), "/w", root, 1); err != nil {
			t.Fatal(err)
		}
	}
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true})
	defer func() { m.Close(); m.src.Close() }()
	settle(m, tea.WindowSizeMsg{Width: 120, Height: 32})
	loaded, ok := loadAll(m.src)().(loadedMsg)
	if !ok || loaded.err != nil || !loaded.partial || len(loaded.runs) != 0 {
		t.Fatalf("the first load read %d runs (partial %v, %v), want none: no tree is whole in the page", len(loaded.runs), loaded.partial, loaded.err)
	}
	m.Update(loaded)
	frame := ansi.Strip(m.Render())
	if strings.Contains(frame, "no runs in this store") || !strings.Contains(frame, "reading the runs…") {
		t.Fatalf("while the rest is read the runs pane must say so:\n%s", frame)
	}
	settle(m, loadRest(m.src, m.cursor)())
	frame = ansi.Strip(m.Render())
	if strings.Contains(frame, "reading the runs") || !regexp.MustCompile(`#1 +the old root of a wide tree`).MatchString(frame) ||
		!strings.Contains(frame, fmt.Sprintf("%d agents", kids+1)) {
		t.Fatalf("after the rest the root and its %d agents are not shown:\n%s", kids+1, frame)
	}
}

// The first load follows in place only the page's runs (store.QuickHeader):
// a run older than the page, running at start and finished by another
// process once the rest is on screen, must be shown finished — not left
// running for good because nothing followed it.
func TestARunOlderThanThePageIsFollowedAfterTheRest(t *testing.T) {
	path := rootsOneOpen(t, firstPage+10, 3)
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true})
	defer func() { m.Close(); m.src.Close() }()
	settle(m, tea.WindowSizeMsg{Width: 120, Height: 32})
	loaded, ok := loadAll(m.src)().(loadedMsg)
	if !ok || loaded.err != nil || !loaded.partial {
		t.Fatalf("the first load was not a page: %+v", loaded.err)
	}
	settle(m, loaded)
	settle(m, loadRest(m.src, m.cursor)())
	if m.first.partial {
		t.Fatal("the rest was not taken")
	}
	// 266 runs: #3 is far below the screen; the state the runs pane draws
	// its row from is the model's.
	state := func() store.State { return m.st.model.State("3", time.Now()) }
	if st := state(); st == store.StateFinished {
		t.Fatalf("run 3 is %v before it finished", st)
	}
	if out, err := exec.Command("sqlite3", path, "UPDATE runs SET status = 'completed', outcome = 'success' WHERE id = 3").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	settle(m, refresh(m.src, m.cursor)())
	if st := state(); st != store.StateFinished {
		t.Fatalf("run 3, finished by another process after the rest, is %v", st)
	}
}

// A store whose history another process pruned (ids 4–299 deleted; DELETE
// leaves AUTOINCREMENT's ids as they were) holds fewer runs than a page:
// the first load is the whole store, and the explorer follows run 3 from
// it. Counting the page from the top id, the cursor followed only ids
// 45 and up, the load was not partial so nothing made it whole, and every
// refresh was refused: run 3 stayed running on screen.
func TestAPrunedStoreIsFollowedFromTheFirstLoad(t *testing.T) {
	path := rootsOneOpen(t, 300, 3)
	if out, err := exec.Command("sqlite3", path, "DELETE FROM runs WHERE id BETWEEN 4 AND 299").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	src, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true, NoColor: true})
	defer func() { m.Close(); m.src.Close() }()
	settle(m, tea.WindowSizeMsg{Width: 120, Height: 32})
	loaded, ok := loadAll(m.src)().(loadedMsg)
	if !ok || loaded.err != nil || loaded.partial {
		t.Fatalf("the first load of four runs: partial %v, %v", loaded.partial, loaded.err)
	}
	settle(m, loaded)
	if out, err := exec.Command("sqlite3", path, "UPDATE runs SET status = 'completed', outcome = 'success' WHERE id = 3").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	msg := refresh(m.src, m.cursor)()
	settle(m, msg)
	if st := m.st.model.State("3", time.Now()); st != store.StateFinished {
		t.Fatalf("run 3, finished by another process, is %v (the refresh: %+v)", st, msg)
	}
}

// rootsOneOpen is a new store of roots "root 1" to "root n", each finished
// but root open, written as io-harness's RunStore writes them.
func rootsOneOpen(t *testing.T, n, open int) string {
	t.Helper()
	ctx := context.Background()
	path, w := createdStore(t, "runs.sqlite3")
	for i := 1; i <= n; i++ {
		id, err := w.StartRun(ctx, fmt.Sprintf("root %d", i), "/w")
		if err != nil {
			t.Fatal(err)
		}
		if i != open {
			if err := w.FinishRun(ctx, id, store.OutcomeSuccess); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Close() // the store as a harness left it
	return path
}

// createdStore is a new io-harness store named name in a test's own
// directory, written by the returned twin, closed when the test ends.
func createdStore(t *testing.T, name string) (string, *harness.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return path, w
}
