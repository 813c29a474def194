package leviath

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// openDeferred opens the fixture with every long-enough journal left to
// the background fold, held until release is called.
func openDeferred(t *testing.T, runs string) (s *Store, release func()) {
	t.Helper()
	oldBytes, oldGate := deferBytes, foldGate
	deferBytes, foldGate = 1, make(chan struct{})
	gate := foldGate
	defer func() { deferBytes, foldGate = oldBytes, oldGate }()
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var once bool
	release = func() {
		if !once {
			once = true
			close(gate)
		}
	}
	t.Cleanup(release)
	return s, release
}

// sameText fails at the first line two texts differ.
func sameText(t *testing.T, what, got, want string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		a, b := "", ""
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			t.Fatalf("%s differ at line %d:\n%s\n%s", what, i+1, a, b)
		}
	}
}

// everything is what a reader can read of a store, as text.
func everything(t *testing.T, s *Store) string {
	t.Helper()
	runs, err := s.Runs(bg)
	if err != nil {
		t.Fatal(err)
	}
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	out := fmt.Sprintf("runs %s\n", j(runs))
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
		st, err := s.Steps(bg, r.ID)
		out += fmt.Sprintf("steps %s %s %v\n", r.ID, j(st), err)
		for _, x := range st {
			d, err := s.StepDetail(bg, r.ID, x.RowID)
			out += fmt.Sprintf("detail %s %v\n", j(d), err)
		}
		cs, _ := s.ContextSamples(bg, r.ID)
		pc, _ := s.ProviderCalls(bg, r.ID)
		f, _ := s.RunFacts(bg, r.ID)
		out += fmt.Sprintf("samples %s\ncalls %s\nfacts %s\n", j(cs), j(pc), j(f))
	}
	st, err := s.RunStats(bg, ids)
	out += fmt.Sprintf("stats %s %v\n", j(st), err)
	reqs, err := s.Requests(bg, false)
	out += fmt.Sprintf("requests %s %v\nproblems %v\n", j(reqs), err, s.Problems())
	return out
}

// A store whose journals are folded in the background reads, once they
// are, exactly as one folded at open: every run, row (ids included),
// detail, sample, call, count, request and problem. Before, its runs are
// listed with what meta.json says and no counts, and nothing that needs
// the fold is guessed.
func TestBackgroundFoldAgrees(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	s, release := openDeferred(t, fx.runs)
	if len(s.deferred) == 0 {
		t.Fatal("no journal was left to the background fold")
	}

	// Before the fold: the page is there at once, counts unknown.
	page, all, err := s.RecentRuns(bg, 256)
	if err != nil || all {
		t.Fatalf("RecentRuns: all %v, %v", all, err)
	}
	full, _ := want.Runs(bg)
	if len(page) != len(full) {
		t.Fatalf("the page holds %d runs, the store %d", len(page), len(full))
	}
	byID := map[string]store.Run{}
	for _, r := range full {
		byID[r.ID] = r
	}
	deferred := map[string]bool{}
	for _, rs := range s.deferred {
		deferred[rs.id] = true
	}
	for _, r := range page {
		w := byID[r.ID]
		if !deferred[r.ID] {
			if !reflect.DeepEqual(r, w) {
				t.Errorf("%s is not deferred but reads\n%+v\nnot\n%+v", r.ID, r, w)
			}
			continue
		}
		if r.StatsKnown || r.Summary != nil || r.Steps != 0 {
			t.Errorf("%s before its fold: counts %d known %v summary %+v", r.ID, r.Steps, r.StatsKnown, r.Summary)
		}
		if r.Goal != w.Goal || r.Status != w.Status || r.Outcome != w.Outcome || r.ParentID != w.ParentID {
			t.Errorf("%s before its fold reads %+v, folded %+v", r.ID, r, w)
		}
		if (r.Lease == nil) != (w.Lease == nil) || (r.Lease != nil && *r.Lease != *w.Lease) {
			t.Errorf("%s before its fold has lease %+v, folded %+v", r.ID, r.Lease, w.Lease)
		}
	}
	cur, err := s.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	// A read that needs the fold waits for it (and a deadline ends the wait).
	id := s.deferred[0].id
	got := make(chan error, 1)
	go func() { _, err := s.Steps(bg, id); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("Steps returned before the fold: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	sameText(t, "folded in the background, and at open", everything(t, s), everything(t, want))
	ch, _, err := s.Changes(bg, cur)
	if err != nil || ch.Reset {
		t.Fatalf("Changes: %+v %v", ch, err)
	}
	again := map[string]store.Run{}
	for _, r := range ch.Runs {
		again[r.ID] = r
	}
	// Changes gives each folded run again that reads otherwise now.
	pageOf := map[string]store.Run{}
	for _, r := range page {
		pageOf[r.ID] = r
	}
	for id := range deferred {
		r, ok := again[id]
		switch {
		case ok && !reflect.DeepEqual(r, byID[id]):
			t.Errorf("Changes after the fold of %s: %+v (want %+v)", id, r, byID[id])
		case !ok && !reflect.DeepEqual(pageOf[id], byID[id]):
			t.Errorf("Changes after the fold of %s does not give it again, though it read %+v before, %+v now", id, pageOf[id], byID[id])
		}
	}
	if len(ch.Steps) != 0 {
		t.Errorf("the fold's rows came through Changes: %d", len(ch.Steps))
	}
}

// The explorer over a store whose journals are still being folded draws
// its runs at once, their counts shown as not known yet ("…", never a
// guessed 0), and once the folds are in place the screen is exactly the
// screen of a store folded at open.
func TestExplorerBeforeAndAfterTheFold(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	now := time.Unix(t0+600, 0)
	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	w := startExplorer(t, want, 200, 60, now, true)
	w.waitFor("8 steps")

	s, release := openDeferred(t, fx.runs)
	e := startExplorer(t, s, 200, 60, now, true)
	e.waitFor("Coordinate the 2.4.0 r", "#changelo…e5f6 Draft the 2.4.0 CHANGELOG", "loading steps…")
	before := e.screen()
	if strings.Contains(before, "8 steps") {
		t.Fatalf("the timeline before the fold:\n%s", before)
	}
	lines := 0
	for _, l := range strings.Split(before, "\n") {
		if strings.Contains(l, "#changelo…e5f6 Draft") && strings.HasSuffix(strings.TrimRight(strings.SplitN(l, "│", 3)[1], " "), "…") {
			lines++
		}
	}
	if lines == 0 {
		t.Fatalf("a run not folded yet shows counts:\n%s", before)
	}
	release()
	e.waitFor("8 steps")
	// (The status bar's "updated … ago" too: a fold put in place is no
	// write, TestFoldPutInPlaceIsNoWrite.)
	same := func() (string, string) { return e.screen(), w.screen() }
	deadline := time.Now().Add(5 * time.Second)
	for g, x := same(); g != x && time.Now().Before(deadline); g, x = same() {
		e.pump()
		time.Sleep(5 * time.Millisecond)
	}
	if g, x := same(); g != x {
		t.Fatalf("after the fold:\n%s\nfolded at open:\n%s", g, x)
	}
}

// "updated … ago" in the status bar is when the store last changed. A
// background fold put in place is vigil catching up on what the store
// held at open, not a write: the status bar says the same before and
// after it (as a store folded at open does), while keys move the cursor
// over the newly counted rows; a frame the daemon then appends does move
// it.
func TestFoldPutInPlaceIsNoWrite(t *testing.T) {
	fx := buildFixture(t, t.TempDir())
	now := time.Unix(t0+3600, 0) // an hour on: "0s ago" is no rounding
	ago := regexp.MustCompile(`updated \S+ ago`)
	updated := func(e *explorer) string {
		t.Helper()
		got := ago.FindString(e.screen())
		if got == "" {
			t.Fatalf("no \"updated … ago\" in the status bar:\n%s", e.screen())
		}
		return got
	}
	want, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	w := startExplorer(t, want, 200, 60, now, true)
	w.waitFor("8 steps")
	atOpen := updated(w)
	if atOpen == "updated 0s ago" {
		t.Fatalf("the fixture's last write is not an hour back: %s", atOpen)
	}

	s, release := openDeferred(t, fx.runs)
	e := startExplorer(t, s, 200, 60, now, true)
	e.waitFor("Coordinate the 2.4.0 r", "loading steps…")
	if got := updated(e); got != atOpen {
		t.Fatalf("before the fold: %q, a store folded at open says %q", got, atOpen)
	}
	release()
	e.waitFor("8 steps")
	// Down the tree to a run whose counts the fold filled in, and back.
	e.press("2", "j")
	e.waitFor("3 Timeline · #changelo…e5f6", "2 status: complete")
	e.press("k")
	e.waitFor("3 Timeline · #release-…e0b7", "8 steps")
	if got := updated(e); got != atOpen {
		t.Fatalf("after the fold the status bar says %q, a store folded at open %q (nothing was written):\n%s", got, atOpen, e.screen())
	}
	// A write does move it.
	g := fx.gens[idRoot]
	g.meta.iteration, g.meta.prompt, g.meta.completion = 4, 5000, 260
	g.progress(t0+60, g.appendD("conversation", turnE("Publishing now.")))
	e.waitFor("4 assistant: Publishing now.", "9 steps", "updated 0s ago")
}
