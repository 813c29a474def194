package ioharness

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

// oldOpenRunStore is a store of n finished runs but for run 1, older than
// any first page and still running, and run n, the newest.
func oldOpenRunStore(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := harness.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := 1; i <= n; i++ {
		id, err := w.StartRun(ctx, fmt.Sprintf("run %d", i), "/w")
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 || i == n {
			continue
		}
		if err := w.FinishRun(ctx, id, store.OutcomeSuccess); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// browse opens path read-only for the test.
func browse(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newest is s's HeadNewest(limit): the cursor, and whether it follows every run.
func newest(t *testing.T, s *Store, limit int) (*SQLCursor, bool) {
	t.Helper()
	cur, whole, err := s.HeadNewest(context.Background(), limit)
	if err != nil {
		t.Fatal(err)
	}
	return cur.(*SQLCursor), whole
}

// statusOf is run id's status as changes tell it ("" when they do not).
func statusOf(ch *store.Changes, id string) string {
	for _, r := range ch.Runs {
		if r.ID == id {
			return string(r.Status)
		}
	}
	return ""
}

// HeadNewest follows only the newest runs; once WholeHead has made it
// follow the rest, an old run that a foreign writer finishes comes through
// Changes like any other. Without that the run would stay "running" on
// screen for good.
func TestHeadNewestThenWholeLosesNoRun(t *testing.T) {
	ctx := context.Background()
	path := oldOpenRunStore(t, 40)
	s := browse(t, path)
	cur, _ := newest(t, s, 10)
	if c := cur; c.open.Has(1) || !c.open.Has(40) {
		t.Fatalf("HeadNewest(10) follows run 1 %v, run 40 %v: it should follow only the newest", c.open.Has(1), c.open.Has(40))
	}
	whole, err := s.WholeHead(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if c := whole.(*SQLCursor); !c.open.Has(1) || !c.open.Has(40) || c.openFrom != 0 {
		t.Fatalf("WholeHead does not follow every open run: run 1 %v, run 40 %v", c.open.Has(1), c.open.Has(40))
	}
	foreignWrite(t, path, "UPDATE runs SET status = 'completed', outcome = 'success' WHERE id = 1")
	ch, _, err := s.Changes(ctx, whole)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusOf(ch, "1"); got != string(store.StatusCompleted) {
		t.Errorf("run 1 finished by another process after WholeHead: Changes told %q, want completed", got)
	}
}

// A HeadNewest cursor passed to Changes as it is is refused: which of the
// runs it did not follow changed since cannot be told, and a run finished
// meanwhile would be lost.
func TestChangesRefusesANewestCursor(t *testing.T) {
	ctx := context.Background()
	path := oldOpenRunStore(t, 40)
	s := browse(t, path)
	cur, _ := newest(t, s, 10)
	foreignWrite(t, path, "UPDATE runs SET status = 'completed', outcome = 'success' WHERE id = 1")
	if _, _, err := s.Changes(ctx, cur); err == nil {
		t.Fatal("Changes read a cursor that does not follow run 1, which finished meanwhile")
	}
	// A store of no more runs than the page: HeadNewest is Head.
	small, whole := newest(t, s, 40)
	if !whole {
		t.Error("HeadNewest over every run says it does not follow them all")
	}
	if _, _, err := s.Changes(ctx, small); err != nil {
		t.Errorf("a HeadNewest cursor over every run: %v", err)
	}
}

// The page is the newest run rows, not the ids within the page's length of
// the top one: a history pruned by another process (ids 2–39 deleted, as
// DELETE leaves AUTOINCREMENT ids) has two runs, both on a page of ten, and
// the cursor follows both and says so. Counting from the top id it followed
// neither run 1 nor said so, and Changes refused it for good.
func TestHeadNewestOverGappedIDs(t *testing.T) {
	ctx := context.Background()
	path := oldOpenRunStore(t, 40)
	foreignWrite(t, path, "DELETE FROM runs WHERE id BETWEEN 2 AND 39")
	s := browse(t, path)
	cur, whole := newest(t, s, 10)
	if c := cur; !whole || !c.open.Has(1) || !c.open.Has(40) {
		t.Fatalf("HeadNewest(10) of two runs: whole %v, follows run 1 %v, run 40 %v", whole, c.open.Has(1), c.open.Has(40))
	}
	foreignWrite(t, path, "UPDATE runs SET status = 'completed', outcome = 'success' WHERE id = 1")
	ch, _, err := s.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusOf(ch, "1"); got != string(store.StatusCompleted) {
		t.Errorf("run 1 finished by another process: Changes told %q, want completed", got)
	}
	// Eleven runs left on a page of ten: the run past the page is not
	// followed, and the cursor says so.
	foreignWrite(t, path, "INSERT INTO runs (goal, file) VALUES "+strings.Repeat("('more', '/w'),", 8)+"('more', '/w')")
	cur, whole = newest(t, s, 10)
	if c := cur; whole || c.openFrom != 2 {
		t.Errorf("HeadNewest(10) of eleven runs: whole %v, follows from id %d, want from 2 (the page: runs 40–49)", whole, c.openFrom)
	}
}

// A written cursor keeps what it does not follow yet.
func TestNewestCursorSurvivesTheCodec(t *testing.T) {
	s := browse(t, oldOpenRunStore(t, 40))
	cur, _ := newest(t, s, 10)
	b, err := s.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.DecodeCursor(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.(*SQLCursor).openFrom, cur.openFrom; got != want || want == 0 {
		t.Errorf("openFrom %d after the codec, %d before", got, want)
	}
}

// foreignWrite runs one statement through the sqlite3 CLI: another process
// writing the store.
func foreignWrite(t *testing.T, path, q string) {
	t.Helper()
	testkit.Tool(t, "sqlite3", "the sqlite3 shell is this test's foreign SQLite party")
	if out, err := exec.Command("sqlite3", path, q).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 %q: %v: %s", q, err, out)
	}
}
