package opencode_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// historyDB is the fixture's run (root and sub-agent) and five copies of
// it, copy k started k hours later with its ids suffixed "ck"; copy 3 also
// holds 5 000 prompts older than its turns, more than the first page reads.
func historyDB(t *testing.T) string {
	t.Helper()
	db := fixtureDB(t)
	var b strings.Builder
	for k := 1; k <= 5; k++ {
		fmt.Fprintf(&b, `CREATE TEMP TABLE s AS SELECT * FROM session WHERE id IN ('%[2]s', '%[3]s');
UPDATE s SET id = id || 'c%[1]d', parent_id = parent_id || 'c%[1]d', title = title || ' %[1]d', time_created = time_created + %[1]d*3600000, time_updated = time_updated + %[1]d*3600000;
INSERT INTO session SELECT * FROM s; DROP TABLE s;
CREATE TEMP TABLE m AS SELECT * FROM message WHERE session_id IN ('%[2]s', '%[3]s');
UPDATE m SET id = id || 'c%[1]d', session_id = session_id || 'c%[1]d', time_created = time_created + %[1]d*3600000, time_updated = time_updated + %[1]d*3600000;
INSERT INTO message SELECT * FROM m; DROP TABLE m;
CREATE TEMP TABLE p AS SELECT * FROM part WHERE session_id IN ('%[2]s', '%[3]s');
UPDATE p SET id = id || 'c%[1]d', message_id = message_id || 'c%[1]d', session_id = session_id || 'c%[1]d', time_created = time_created + %[1]d*3600000, time_updated = time_updated + %[1]d*3600000;
INSERT INTO part SELECT * FROM p; DROP TABLE p;
`, k, rootID, childID)
	}
	fmt.Fprintf(&b, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000)
INSERT INTO message SELECT 'msg_old' || i, '%[1]sc3', 1796409685143 + 3*3600000 - 10000 + i, 1796409685143 + 3*3600000 - 10000 + i,
  '{"role":"user","time":{"created":' || (1796409685143 + 3*3600000 - 10000 + i) || '}}' FROM n;`, rootID)
	foreign(t, db, b.String(), "exec")
	return db
}

func ids(runs []store.Run) string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return strings.Join(out, " ")
}

// TestRecentRunsAreTheNewestTrees: the first page is the newest trees,
// newest first, read exactly as Runs reads them, while their messages fit:
// the tree of 5 000 messages and everything older are left for Runs, and
// a page that would pass the limit stops before the tree that passes it.
func TestRecentRunsAreTheNewestTrees(t *testing.T) {
	src, err := store.Open(historyDB(t), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 12 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	byID := map[string]store.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, c := range []struct {
		limit int
		want  string
	}{
		{256, childID + "c5 " + rootID + "c5 " + childID + "c4 " + rootID + "c4"},
		{3, childID + "c5 " + rootID + "c5"},
	} {
		page, all, err := src.RecentRuns(ctx, c.limit)
		if err != nil || all || ids(page) != c.want {
			t.Fatalf("limit %d: page %s (all %v, %v), want %s", c.limit, ids(page), all, err, c.want)
		}
		for _, r := range page {
			if !reflect.DeepEqual(r, byID[r.ID]) {
				t.Errorf("the page's %s reads %+v, Runs %+v", r.ID, r, byID[r.ID])
			}
		}
	}
	// A database whose sessions all fit: the page is every run.
	small, err := store.Open(fixtureDB(t), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	page, all, err := small.RecentRuns(ctx, 256)
	if err != nil || !all || len(page) != 2 {
		t.Fatalf("the fixture's page: %s, all %v, %v", ids(page), all, err)
	}
}

// TestHeadNewestFollowsThePageUntilWhole: HeadNewest's cursor follows the
// page's sessions alone and Changes refuses it; made whole, it follows a
// turn in flight in the oldest session, whose finish (its rows updated in
// place) comes through Changes.
func TestHeadNewestFollowsThePageUntilWhole(t *testing.T) {
	db := historyDB(t)
	src := browse(t, db)
	ctx := context.Background()
	foreign(t, db, fmt.Sprintf(userMsg+openTurn, rootID)+running, "exec")
	cur, whole, err := src.HeadNewest(ctx, 256)
	if err != nil || whole {
		t.Fatalf("HeadNewest: whole %v, %v", whole, err)
	}
	if _, _, err := src.Changes(ctx, cur); err == nil {
		t.Fatal("Changes took a cursor that follows the page alone")
	}
	cur, err = src.WholeHead(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	foreign(t, db, fmt.Sprintf(finishTurn, rootID), "exec")
	ch, _, err := src.Changes(ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if got := decisions(ch.Steps); got != "3:calls bash|3:result bash" {
		t.Errorf("the finished turn came as %q", got)
	}
	var seen bool
	for _, r := range ch.Runs {
		seen = seen || r.ID == rootID && r.Status == store.StatusCompleted
	}
	if !seen {
		t.Errorf("the session's end did not come: %+v", ch.Runs)
	}
}

// TestRunsReadsSparseRowids: Runs reads in windows of rows, not of rowid
// ranges, so a session or message with a far or negative rowid (a
// hand-made or hostile file) is read like any other, and counted.
func TestRunsReadsSparseRowids(t *testing.T) {
	db := fixtureDB(t)
	foreign(t, db, `INSERT INTO session (rowid, id, project_id, slug, directory, title, version, time_created, time_updated)
  SELECT 1000000000000000000, 'ses_far', project_id, slug, directory, 'far away', version, time_created + 1, time_updated FROM session WHERE id = '`+rootID+`';
INSERT INTO message (rowid, id, session_id, time_created, time_updated, data)
  SELECT -5, 'msg_neg', 'ses_far', time_created, time_updated, data FROM message WHERE id = 'msg_2425c8843001oVSHJYZjJIyaOF';`, "exec")
	src := browse(t, db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, err := src.Runs(ctx)
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	var far store.Run
	for _, r := range runs {
		if r.ID == "ses_far" {
			far = r
		}
	}
	if far.ID != "ses_far" || far.Status != store.StatusCompleted || far.Summary == nil || far.Summary.Steps != 1 || far.Steps != 1 {
		t.Errorf("the far session: %+v %+v", far, far.Summary)
	}
}
