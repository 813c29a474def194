package leviath

import (
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// journalPrompt makes the root's journal end in an open prompt that its
// meta.json does not say yet (the daemon journals the Progress first and
// rewrites meta.json after): the prompt is known only once the journal is
// folded, so the run is still left to the background fold.
func journalPrompt(t *testing.T, fx *fixture) {
	t.Helper()
	g := fx.gens[idRoot]
	g.meta.status, g.meta.iteration, g.meta.prompt, g.meta.completion = "waiting_input", 4, 4700, 240
	g.appendBytes(g.progressFrame(t0+55, g.appendD("conversation", turnE("Asking the operator before publishing."))))
}

// drain reads Changes after cur until a page says no More, and returns
// every page.
func drain(t *testing.T, s *Store, cur store.Cursor) []*store.Changes {
	t.Helper()
	var pages []*store.Changes
	for range 100 {
		ch, next, err := s.Changes(bg, cur)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Reset {
			t.Fatalf("Reset: %v", next)
		}
		pages = append(pages, ch)
		cur = next
		if !ch.More {
			return pages
		}
	}
	t.Fatal("Changes never ended its pages")
	return nil
}

// A cursor made while a run was being folded and written down only after
// its fold was put in place (vigil agent's Head and Changes each take the
// store's lock twice: the cursor, then its written form) still says the
// reader has not got the fold: every row the fold found comes, and the
// prompt the journal ends in, as no write. On the old code the marks took
// the folded run as the reader's, rows and all: none of its rows ever came,
// and its open prompt came alone, as a write.
func TestACursorWrittenAfterTheFoldStillWantsIt(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	journalPrompt(t, fx)
	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	wantRows, err := want.Steps(bg, idRoot)
	if err != nil || len(wantRows) == 0 {
		t.Fatal(len(wantRows), err)
	}
	open, err := want.Requests(bg, true, idRoot)
	if err != nil || len(open) != 1 {
		t.Fatalf("the fixture's root should end in one open prompt: %d %v", len(open), err)
	}

	s, release := openDeferred(t, fx.runs)
	cur, err := s.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := s.Runs(bg); err != nil { // waits for every fold
		t.Fatal(err)
	}
	b, err := s.EncodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := s.DecodeCursor(b)
	if err != nil {
		t.Fatal(err)
	}
	rows, prompts := 0, 0
	for _, ch := range drain(t, s, dc) {
		for _, r := range ch.Steps {
			if r.RunID == idRoot {
				rows++
			}
		}
		for _, r := range ch.Requests {
			if r.RunID == idRoot && !r.Resolved {
				prompts++
			}
		}
		if !ch.Empty() && !ch.Unwritten {
			t.Errorf("the fold put in place comes as a write: %d runs, %d rows, %d requests", len(ch.Runs), len(ch.Steps), len(ch.Requests))
		}
	}
	if rows != len(wantRows) || prompts != 1 {
		t.Fatalf("after a cursor written once the fold was in place: %d of %d rows of the root, %d of 1 open prompt", rows, len(wantRows), prompts)
	}
}

// Over vigil agent's protocol: a frame the daemon appends to a journal
// while it is being folded is a write, though the run comes whole once the
// fold is in place (the reader had not got it: the remote "updated … ago"
// moves, as a local reader's does). On the old code every page came as
// no write.
func TestAgentAFrameAppendedDuringTheFoldIsAWrite(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	s, release := openDeferred(t, fx.runs)
	l := startAgent(t, store.Complete(s))
	t.Cleanup(release)
	cur := l.head()
	l.recentRuns() // a client's first screen asks this before Changes

	g := fx.gens[idRoot]
	g.meta.iteration, g.meta.prompt, g.meta.completion = 4, 5000, 260
	g.progress(t0+60, g.appendD("conversation", turnE("Publishing now.")))
	// The agent's store sees the append before its fold is in place.
	l.call(2*time.Second, "Changes", cur, &struct{}{})

	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	wantRows, err := want.Steps(bg, idRoot)
	if err != nil {
		t.Fatal(err)
	}
	release()
	got, written := 0, false
	for deadline := time.Now().Add(10 * time.Second); got < len(wantRows); {
		if time.Now().After(deadline) {
			t.Fatalf("after the fold, Changes gave %d of %d rows of the root", got, len(wantRows))
		}
		res := l.changes(cur)
		if res.Changes.Reset {
			t.Fatalf("Reset after the fold: %+v", res)
		}
		for _, r := range res.Changes.Steps {
			if r.RunID == idRoot {
				got++
			}
		}
		written = written || (!res.Changes.Empty() && !res.Changes.Unwritten)
		cur = res.Next
		time.Sleep(20 * time.Millisecond)
	}
	if !written {
		t.Fatal("a frame appended while the journal was being folded came as no write: the remote \"updated … ago\" stays older than the store's last change")
	}
}

// The same, with nothing appended: the run that comes whole is no write,
// its open prompt included (a prompt known only once the journal is
// folded was in the store before the cursor).
func TestAgentAPromptTheFoldFindsIsNoWrite(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	journalPrompt(t, fx)
	s, release := openDeferred(t, fx.runs)
	l := startAgent(t, store.Complete(s))
	t.Cleanup(release)
	cur := l.head()
	release()
	prompts := 0
	for deadline := time.Now().Add(10 * time.Second); prompts == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the prompt the journal ends in never came")
		}
		res := l.changes(cur)
		for _, r := range res.Changes.Requests {
			if r.RunID == idRoot && !r.Resolved {
				prompts++
			}
		}
		if !res.Changes.Empty() && !res.Changes.Unwritten {
			t.Fatalf("the fold put in place comes as a write: %d runs, %d rows, %d requests", len(res.Changes.Runs), len(res.Changes.Steps), len(res.Changes.Requests))
		}
		cur = res.Next
		time.Sleep(20 * time.Millisecond)
	}
}
