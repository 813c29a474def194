package leviath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Frames appended to a journal come through Changes, read from the last
// offset: the bytes read are exactly the bytes appended.
func TestChangesReadOnlyAppendedBytes(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	if ch := changes(t, s, &c); !ch.Empty() || ch.More || ch.Reset {
		t.Fatalf("nothing was written, yet: %+v", ch)
	}
	r := fx.gens[idRoot]
	before := s.journalBytes.Load()
	r.meta.iteration, r.meta.prompt, r.meta.completion = 4, 5000, 260
	f := r.progressFrame(t0+60, r.appendD("conversation", userE("publish now"), turnE("Publishing.",
		genCall{"toolu_A9", "bash", args("command", "make publish")}), resultE("toolu_A9", "bash", "published 2.4.0", false)))
	r.appendBytes(f)
	r.writeMeta()
	ch := changes(t, s, &c)
	if got := s.journalBytes.Load() - before; got != int64(len(f)) {
		t.Errorf("read %d journal bytes for a %d-byte frame", got, len(f))
	}
	sameLines(t, "new rows", rowsOf(ch.Steps), []string{"3 user: publish now", "4 assistant: Publishing.", "4 result bash"})
	if ch.Steps[1].Tokens != 5260-4310 || ch.Steps[1].ToolCall != `bash {"command":"make publish"}` || ch.Steps[0].RunID != idRoot {
		t.Errorf("rows: %+v", ch.Steps)
	}
	old := steps(t, s, idRoot)
	if ch.Steps[0].RowID <= old[len(old)-4].RowID {
		t.Errorf("new row ids must come after the old ones")
	}
	if len(ch.Runs) != 1 || ch.Runs[0].ID != idRoot || !ch.Runs[0].Lease.RenewedAt.Equal(time.Unix(t0+60, 0)) {
		t.Errorf("runs: %+v", ch.Runs)
	}
	if len(ch.Context) != 1 || ch.Context[0].Estimated != r.total() || ch.Context[0].Reported != nil {
		t.Errorf("context: %+v", ch.Context)
	}
	if ch := changes(t, s, &c); !ch.Empty() {
		t.Errorf("the cursor did not advance: %+v", ch)
	}
	// The rows are in Steps too, with details.
	all := steps(t, s, idRoot)
	d, err := s.StepDetail(bg, idRoot, all[len(all)-1].RowID)
	if err != nil || d.Result != "published 2.4.0" {
		t.Errorf("detail of a new row: %+v %v", d, err)
	}
}

// A torn final frame is not an error: the rows before it show, and the
// frame is read once the writer completes it, whichever byte it stopped at.
func TestTornTailCompletedLater(t *testing.T) {
	fx, s := openFx(t)
	sameLines(t, "torn run", rowsText(steps(t, s, idTorn)), []string{"0 user: A run caught mid-append", "1 assistant: First turn."})
	if ps := s.Problems(); len(ps) != 2 {
		t.Errorf("a torn tail is not a problem: %v", ps)
	}
	c := head(t, s)
	before, tornAt := s.journalBytes.Load(), s.runs[idTorn].off
	g := fx.gens[idTorn]
	g.appendBytes(fx.tornRest)
	ch := changes(t, s, &c)
	sameLines(t, "completed frame", rowsOf(ch.Steps), []string{"2 assistant: Second turn, written in two pieces."})
	// The completed frame is read whole from its start (the offset after
	// the last good frame), and nothing before it.
	size := fileSize(t, lvr(fx, idTorn))
	if got := s.journalBytes.Load() - before; got != size-tornAt || s.runs[idTorn].off != size {
		t.Errorf("read %d bytes to complete a frame of %d; offset %d of %d", got, size-tornAt, s.runs[idTorn].off, size)
	}
	// Now a frame arriving in three writes: inside the length prefix,
	// inside the payload, then the rest.
	g.meta.iteration, g.meta.prompt, g.meta.completion = 3, 1500, 60
	f := g.progressFrame(t0+120, g.appendD("conversation", turnE("Third turn, in three writes.")))
	for i, piece := range [][]byte{f[:3], f[3:40], f[40:]} {
		g.appendBytes(piece)
		ch := changes(t, s, &c)
		if i < 2 && len(ch.Steps) != 0 {
			t.Fatalf("piece %d gave rows: %+v", i, ch.Steps)
		}
		if i == 2 {
			sameLines(t, "frame in three writes", rowsOf(ch.Steps), []string{"3 assistant: Third turn, in three writes."})
		}
	}
}

// Runs that appear after the cursor come through Changes, before their rows.
func TestChangesNewRunDirectory(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	m := baseMeta("publisher-1785427900-0c1c2c3c4c5c", "publisher", "Publish 2.4.0", t0+700)
	m.parent, m.depth = idRoot, 1
	g := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	g.meta.prompt, g.meta.completion = 300, 10
	g.progress(t0+705, g.appendD("conversation", turnE("Publishing to the index.")))
	ch := changes(t, s, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].ID != m.runID || ch.Runs[0].ParentID != idRoot || ch.Runs[0].Depth != 1 {
		t.Fatalf("runs: %+v", ch.Runs)
	}
	sameLines(t, "its rows", rowsOf(ch.Steps), []string{"0 user: Publish 2.4.0", "1 assistant: Publishing to the index."})
	if len(ch.Context) != 2 {
		t.Errorf("its replay points: %+v", ch.Context)
	}
}

// The waiting request is visible, cannot be decided, and closes when the
// journal says the run left waiting_input.
func TestWaitingRequest(t *testing.T) {
	fx, s := openFx(t)
	reqs, err := s.Requests(bg, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 {
		t.Fatalf("requests: %+v", reqs)
	}
	q := reqs[0]
	if q.Kind != store.Question || q.ID != "c07f5e19a4d3/1" || q.RunID != idVersion || q.Step != 1 || q.Resolved ||
		q.Question != "Bump the version from 2.3.1 to 2.4.0 in pyproject.toml?" || !equal(q.Choices, []string{"approve", "abort"}) ||
		!strings.Contains(q.Context, "interaction point plan_approval · round 1 of at most 4") || !strings.HasSuffix(q.Context, NotDurable) ||
		!equal(q.Ancestry, []string{idRoot, idVersion}) || !q.AskedAt.Equal(time.Unix(t0+80, 0)) {
		t.Errorf("request: %+v", q)
	}
	ro, why := s.ReadOnly()
	if !ro || why != NotDurable {
		t.Errorf("ReadOnly: %v %q", ro, why)
	}
	run := runByID(t, s, idVersion)
	dl, reason := s.Classify(q, run, run.Lease, time.Unix(t0+100, 0))
	if dl.Writable() || reason != NotDurable || strings.Contains(reason, "\n") {
		t.Errorf("Classify: %v %q", dl, reason)
	}
	_, err = s.Decide(bg, store.Decision{Key: q.Key(), Text: "yes"})
	var ref *store.RefusedError
	if !errors.As(err, &ref) || ref.Reason != NotDurable || ref.Delivery.Writable() {
		t.Errorf("Decide: %v", err)
	}
	if _, err := s.Decide(bg, store.Decision{Key: store.RequestKey{Kind: store.Question, ID: "nope/1"}}); !errors.Is(err, store.ErrNoSuchReq) {
		t.Errorf("Decide on an unknown request: %v", err)
	}
	// Without a sidecar the question is a generic line; HEAD's waiting_on
	// says what it waits on.
	if err := os.Remove(filepath.Join(fx.runs, idVersion, "interactions.json")); err != nil {
		t.Fatal(err)
	}
	c := head(t, s)
	if reqs, _ := s.Requests(bg, true); len(reqs) != 1 || reqs[0].Question != genericQuestion {
		t.Errorf("without the sidecar: %+v", reqs)
	}
	// The operator answers in lev: the run goes back to running.
	g := fx.gens[idVersion]
	g.meta.status, g.meta.iteration, g.meta.prompt, g.meta.completion = "running", 3, 5200, 240
	g.progress(t0+90, g.appendD("conversation", resultE("toolu_02", "ask_user_confirm", "yes", false), turnE("Bumped to 2.4.0.")))
	ch := changes(t, s, &c)
	if len(ch.Requests) != 1 || !ch.Requests[0].Resolved || ch.Requests[0].Decision != "left waiting_input (now running)" {
		t.Errorf("resolved request: %+v", ch.Requests)
	}
	sameLines(t, "rows after the answer", rowsOf(ch.Steps), []string{"2 status: running", "2 result ask_user_confirm", "3 assistant: Bumped to 2.4.0."})
	if reqs, _ := s.Requests(bg, true); len(reqs) != 0 {
		t.Errorf("still open: %+v", reqs)
	}
	if reqs, _ := s.Requests(bg, false, idVersion); len(reqs) != 1 || !reqs[0].Resolved {
		t.Errorf("history: %+v", reqs)
	}
	if dl, _ := s.Classify(ch.Requests[0], runByID(t, s, idVersion), nil, time.Now()); dl != store.Closed {
		t.Errorf("a resolved request classifies %v", dl)
	}
	// Waiting again (HEAD meta says why): a new request.
	g.head = true
	g.meta.status, g.meta.waitingOn = "waiting_input", ordered{{"reason", "tool_approval"}}
	g.progress(t0 + 95)
	ch = changes(t, s, &c)
	if len(ch.Requests) != 1 || ch.Requests[0].ID != "c07f5e19a4d3/2" || ch.Requests[0].Resolved ||
		!strings.Contains(ch.Requests[0].Context, "waiting on a tool approval") {
		t.Errorf("second wait: %+v", ch.Requests)
	}
}

// Changes pages, and resumes where the page ended.
func TestChangesPaging(t *testing.T) {
	fx, s := openFx(t)
	defer func(n int) { changesPage = n }(changesPage)
	changesPage = 3
	c := head(t, s)
	g := fx.gens[idRoot]
	var es []genEntry
	for i := 0; i < 7; i++ {
		es = append(es, userE("note "+string(rune('a'+i))))
	}
	g.progress(t0+70, g.appendD("conversation", es...))
	var rows []store.StepRow
	calls := 0
	for {
		ch := changes(t, s, &c)
		calls++
		rows = append(rows, ch.Steps...)
		if !ch.More {
			break
		}
		if calls > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(rows) != 7 || calls < 3 || rows[0].Decision != "user: note a" || rows[6].Decision != "user: note g" {
		t.Errorf("%d calls gave %q", calls, rowsOf(rows))
	}
}

// A journal replaced or shortened, or a run deleted, asks for a reload.
func TestChangesReset(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	if err := os.Truncate(lvr(fx, idCrashy), 100); err != nil {
		t.Fatal(err)
	}
	if ch := changes(t, s, &c); !ch.Reset {
		t.Errorf("a shortened journal: %+v", ch)
	}
	c = head(t, s)
	if ch := changes(t, s, &c); ch.Reset || !ch.Empty() {
		t.Errorf("after the reset: %+v", ch)
	}
	if err := os.RemoveAll(filepath.Join(fx.runs, idTorn)); err != nil {
		t.Fatal(err)
	}
	if ch := changes(t, s, &c); !ch.Reset {
		t.Errorf("a deleted run: %+v", ch)
	}
	other, err := Open(fx.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	oc := head(t, other)
	if ch := changes(t, s, &oc); !ch.Reset {
		t.Errorf("another source's cursor: %+v", ch)
	}
	if _, _, err := s.Changes(bg, fakeCursor{}); err == nil {
		t.Error("a cursor of another format was accepted")
	}
}

type fakeCursor struct{}

func (fakeCursor) CursorFormat() string { return "io-harness" }

// meta.json newer than the journal wins (the journal of the torn run is
// stuck on its tear; lev cancels the run).
func TestNewerMetaJSONWins(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	g := fx.gens[idTorn]
	g.meta.status, g.meta.updated = "cancelled", t0+500
	g.writeMeta()
	ch := changes(t, s, &c)
	if len(ch.Runs) != 1 || ch.Runs[0].Status != "completed" || ch.Runs[0].Outcome != "cancelled" || ch.Runs[0].Summary == nil {
		t.Errorf("runs: %+v", ch.Runs)
	}
}

// The watcher's probe moves whenever new data is readable, and not for
// files vigil does not read.
func TestWatchVersion(t *testing.T) {
	fx, s := openFx(t)
	spec := s.Watch()
	if spec.Path != fx.runs || !equal(spec.Names, []string{"run.lvr", "meta.json", "interactions.json"}) {
		t.Errorf("spec: %+v", spec)
	}
	v := func() uint64 {
		x, err := spec.Version()
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	last := v()
	step := func(what string, moves bool, f func()) {
		t.Helper()
		f()
		now := v()
		if (now != last) != moves {
			t.Errorf("%s: version moved %v, want %v", what, now != last, moves)
		}
		last = now
	}
	g := fx.gens[idRoot]
	step("nothing", false, func() {})
	step("context.json", false, func() { os.WriteFile(filepath.Join(g.dir, "context.json"), []byte("{}"), 0o600) })
	step("a frame", true, func() { g.appendBytes(g.progressFrame(t0 + 61)) })
	step("meta.json", true, g.writeMeta)
	step("a sidecar", true, func() { os.WriteFile(filepath.Join(g.dir, "interactions.json"), []byte("{}"), 0o600) })
	step("a run directory", true, func() { os.MkdirAll(filepath.Join(fx.runs, "new-1785429000-000000000000"), 0o700) })
}

// Readers, the probe and a writer at once (run with -race).
func TestConcurrentReaders(t *testing.T) {
	fx, s := openFx(t)
	g := fx.gens[idRoot]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	c := head(t, s)
	seen := 0
	wg.Add(3)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ch, next, err := s.Changes(bg, c)
			if err != nil {
				t.Error(err)
				return
			}
			c = next
			seen += len(ch.Steps)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows, err := s.Steps(bg, idRoot)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := s.StepDetail(bg, idRoot, rows[len(rows)-1].RowID); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s.Watch().Version()
		}
	}()
	for i := 0; i < 40; i++ {
		g.progress(t0+int64(100+i), g.appendD("conversation", turnE("turn "+string(rune('A'+i%26)))))
	}
	close(stop)
	wg.Wait()
	ch := changes(t, s, &c)
	if seen+len(ch.Steps) != 40 {
		t.Errorf("saw %d rows of 40", seen+len(ch.Steps))
	}
}

// What `vigil tail` prints: every new row of the run, one line each, as
// its frame is read (the CLI's format: decision, "→ result head", tokens).
func TestTailSeesEachEntry(t *testing.T) {
	fx, s := openFx(t)
	c := head(t, s)
	g := fx.gens[idVersion]
	tail := func() []string {
		var out []string
		for _, r := range changes(t, s, &c).Steps {
			line := fmt.Sprintf("step %d  %s", r.Number, r.Decision)
			if r.ResultHead != "" {
				line += "  →  " + r.ResultHead
			}
			out = append(out, line+fmt.Sprintf("  (%d tokens)", r.Tokens))
		}
		return out
	}
	g.meta.status = "running"
	g.progress(t0+90, g.appendD("conversation", resultE("toolu_02", "ask_user_confirm", "yes", false)))
	sameLines(t, "the answer", tail(), []string{"step 2  status: running  (0 tokens)", "step 2  result ask_user_confirm  →  yes  (0 tokens)"})
	g.meta.prompt, g.meta.completion = 5000, 300
	g.progress(t0+91, g.appendD("conversation", turnE("Bumping.", genCall{"toolu_03", "bash", args("command", "sed -i s/2.3.1/2.4.0/ pyproject.toml")})))
	sameLines(t, "the turn", tail(), []string{"step 3  assistant: Bumping.  (1600 tokens)"})
	g.progress(t0+95, g.appendD("conversation", resultE("toolu_03", "bash", "\nok\nmore", false)))
	sameLines(t, "the result", tail(), []string{"step 3  result bash  →  ok  (0 tokens)"})
	g.progress(t0+96, g.appendD("conversation", userE("thanks")))
	sameLines(t, "a user message", tail(), []string{"step 3  user: thanks  (0 tokens)"})
	if got := tail(); len(got) != 0 {
		t.Errorf("nothing new, yet: %q", got)
	}
}
