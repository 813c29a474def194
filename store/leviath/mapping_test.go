package leviath

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Every run's mapped fields against what the generator wrote.
func TestRunsMapping(t *testing.T) {
	_, s := openFx(t)
	at := func(off int64) time.Time { return time.Unix(t0+off, 0).UTC() }
	type want struct {
		parent     string
		depth      int
		goal       string
		status     store.Status
		outcome    store.Outcome
		started    time.Time
		finished   bool
		success    bool
		steps      int
		tokens     int64
		duration   time.Duration
		owner      string // "" for no lease
		renewed    time.Time
		generation int64
	}
	cases := map[string]want{
		idRoot: {goal: rootTask, status: "running", started: at(0), owner: "lev-daemon@5c1e0f9a7b3d2e48-0d44be19c7f2a503",
			renewed: at(50), generation: 2},
		idChangelog: {parent: idRoot, depth: 1, goal: "Draft the 2.4.0 CHANGELOG entry", status: "completed", outcome: "complete",
			started: at(10), finished: true, success: true, steps: 2, tokens: 3920 + 275, duration: 10 * time.Second},
		idLinks: {parent: idChangelog, depth: 2, goal: "Check the links in the 2.4.0 entry", status: "completed", outcome: "error",
			started: at(30), finished: true, steps: 1, tokens: 940, duration: 5 * time.Second},
		idVersion: {parent: idRoot, depth: 1, goal: "LVACC-CHILD-2: confirm the 2.4.0 version bump with the operator", status: "running",
			started: at(63), owner: "lev-daemon@5c1e0f9a7b3d2e48-a91f3c0de4b27766", renewed: at(80), generation: 1},
		idTorn: {goal: "A run caught mid-append", status: "running", started: at(100), owner: "lev-daemon@5c1e0f9a7b3d2e48-a91f3c0de4b27766",
			renewed: at(105), generation: 1},
		idFuture: {goal: "Written by Leviath 9", status: "running", started: at(200), owner: "lev-daemon@unknown-unknown", renewed: at(200), generation: 1},
		idGarbage: {goal: `(unreadable: run.lvr: not a Leviath journal: it starts "PK..", not "LVR1")`, status: "completed",
			outcome: "unreadable", finished: true, started: at(300)},
		idCrashy: {goal: "Survive a daemon crash", status: "running", started: at(300), owner: "lev-daemon@5c1e0f9a7b3d2e48-77aa0b1c2d3e4f50",
			renewed: at(405), generation: 2},
		idQueued: {goal: "Waiting for the daemon", status: "running", started: at(400), owner: "lev-daemon@unknown-unknown", renewed: at(400), generation: 1},
	}
	runs, err := s.Runs(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(cases) {
		t.Fatalf("%d runs, want %d (the empty run directory is not one)", len(runs), len(cases))
	}
	for i := 1; i < len(runs); i++ {
		if runs[i].StartedAt.After(runs[i-1].StartedAt) {
			t.Errorf("runs are not newest first: %s before %s", runs[i-1].ID, runs[i].ID)
		}
	}
	for _, r := range runs {
		w, ok := cases[r.ID]
		if !ok {
			t.Errorf("unexpected run %s", r.ID)
			continue
		}
		if r.ParentID != w.parent || r.Depth != w.depth || r.Goal != w.goal || r.Status != w.status || r.Outcome != w.outcome ||
			!r.StartedAt.Equal(w.started) {
			t.Errorf("%s: got parent %q depth %d goal %q status %q outcome %q started %v\nwant %+v", r.ID, r.ParentID, r.Depth,
				r.Goal, r.Status, r.Outcome, r.StartedAt, w)
		}
		if r.ID != idGarbage {
			if r.Workspace != "/home/dev/src/billing" || r.Provider != "anthropic/claude-sonnet-4-5" {
				t.Errorf("%s: workspace %q provider %q", r.ID, r.Workspace, r.Provider)
			}
		}
		switch {
		case w.finished:
			sum := r.Summary
			if sum == nil || sum.Outcome != w.outcome || sum.Success != w.success || sum.Steps != w.steps || sum.Tokens != w.tokens ||
				sum.Duration != w.duration || r.Lease != nil || !r.StatsKnown || r.Steps != w.steps || r.Tokens != w.tokens {
				t.Errorf("%s: summary %+v lease %v stats %v/%d/%d, want %+v", r.ID, sum, r.Lease, r.StatsKnown, r.Steps, r.Tokens, w)
			}
			if sum != nil && w.duration > 0 && !sum.FinishedAt.Equal(r.StartedAt.Add(w.duration)) {
				t.Errorf("%s: finished at %v", r.ID, sum.FinishedAt)
			}
		default:
			if r.Summary != nil || r.StatsKnown {
				t.Errorf("%s: an unfinished run has a summary %+v or known stats", r.ID, r.Summary)
			}
			l := r.Lease
			if l == nil || l.Owner != w.owner || !l.RenewedAt.Equal(w.renewed) || l.TTL != LeaseTTL || l.Generation != w.generation {
				t.Errorf("%s: lease %+v, want owner %s renewed %v generation %d", r.ID, l, w.owner, w.renewed, w.generation)
			} else if l.OwnerPID() != 0 {
				t.Errorf("%s: a daemon (pid 0) lease must not name a pid: %s", r.ID, l.Owner)
			}
		}
	}
	// RunStats of unfinished runs add up exactly what their rows carry.
	st, err := s.RunStats(bg, []string{idRoot, idVersion, idCrashy})
	if err != nil {
		t.Fatal(err)
	}
	for id, x := range st {
		rows := steps(t, s, id)
		var tok int64
		top := 0
		for _, r := range rows {
			tok += r.Tokens
			top = max(top, r.Number)
		}
		if x.Steps != top || x.Tokens != tok || x.Through != rows[len(rows)-1].RowID {
			t.Errorf("%s: stats %+v, rows say %d steps %d tokens through %d", id, x, top, tok, rows[len(rows)-1].RowID)
		}
	}
	if st[idRoot].Tokens != 4100+210 || st[idVersion].Tokens != 3520+180 {
		t.Errorf("spend attributed to turns: %+v", st)
	}
}

// The timeline: one row per transcript entry, status change, restart and
// journal problem, with numbers, tokens and tool calls as written.
func TestTimelines(t *testing.T) {
	_, s := openFx(t)
	sameLines(t, "root (0.1.x: every delta kind, a restart, a sliding rewrite)", rowsText(steps(t, s, idRoot)), []string{
		"0 user: " + rootTask,
		`1 assistant: Splitting the release into two sub-agents. · spawn_agent {"agent":"changelog-writer"}; spawn_agent {"agent":"version-checker"}`,
		"1 result spawn_agent",
		"1 result spawn_agent",
		"1 restart: a new daemon took the run over (machine 5c1e0f9a7b3d2e48, world 0d44be19c7f2a503)",
		"2 assistant: Both sub-agents are running; waiting for their reports.",
		"2 user: status?",
		"3 assistant: Changelog is done; version bump waits for the operator.",
	})
	sameLines(t, "changelog (HEAD records)", rowsText(steps(t, s, idChangelog)), []string{
		"0 user: Draft the 2.4.0 CHANGELOG entry",
		`1 assistant: Reading the changelog. · read_file {"path":"CHANGELOG.md"}`,
		"1 result read_file",
		"2 assistant: Drafted the 2.4.0 entry.",
		"2 status: complete",
	})
	sameLines(t, "links (Checkpoint, Message, Inference, ContextDiff)", rowsText(steps(t, s, idLinks)), []string{
		"0 user: Check the links in the 2.4.0 entry",
		"0 user: only check https links",
		`1 assistant: Checking the first link. · http_get {"url":"https://example.com/docs"}`,
		"1 error http_get",
		"1 status: error — link check timed out",
	})
	sameLines(t, "version (waiting_input)", rowsText(steps(t, s, idVersion)), []string{
		"0 user: LVACC-CHILD-2: confirm the 2.4.0 version bump with the operator",
		`1 assistant: Checking the declared version. · bash {"command":"grep -n '^version' pyproject.toml"}`,
		"1 result bash",
		"1 status: waiting_input",
		`2 assistant: Asking the operator to confirm. · ask_user_confirm {"question":"Bump 2.3.1 to 2.4.0?"}`,
	})
	crashy := steps(t, s, idCrashy)
	got := rowsText(crashy)
	if len(got) != 5 || !strings.HasPrefix(got[2], "1 journal: bytes ") || !strings.HasSuffix(got[2], "are a frame a crash tore; reading resumes at the daemon's restart") {
		t.Fatalf("crashy: %q", got)
	}
	sameLines(t, "crashy (resumed after a torn frame)", append(got[:2:2], got[3:]...), []string{
		"0 user: Survive a daemon crash",
		"1 assistant: Before the crash.",
		"1 restart: a new daemon took the run over (machine 5c1e0f9a7b3d2e48, world 77aa0b1c2d3e4f50)",
		"2 assistant: After the restart.",
	})
	// Tokens: each assistant turn carries the spend since the previous one.
	tok := map[string][]int64{}
	for _, id := range []string{idRoot, idChangelog, idVersion} {
		for _, r := range steps(t, s, id) {
			tok[id] = append(tok[id], r.Tokens)
		}
	}
	if w := []int64{0, 1280, 0, 0, 0, 1470, 0, 1560}; !equal(tok[idRoot], w) {
		t.Errorf("root tokens %v, want %v", tok[idRoot], w)
	}
	if w := []int64{0, 1805, 0, 2390, 0}; !equal(tok[idChangelog], w) {
		t.Errorf("changelog tokens %v, want %v", tok[idChangelog], w)
	}
	// Row ids: increasing within a run, unique across the source.
	seen := map[int64]string{}
	runs, _ := s.Runs(bg)
	for _, r := range runs {
		rows, err := s.Steps(bg, r.ID)
		if err != nil {
			continue
		}
		for i, x := range rows {
			if x.RowID <= 0 || (i > 0 && x.RowID <= rows[i-1].RowID) {
				t.Errorf("%s: row ids not increasing at %d", r.ID, i)
			}
			if other, dup := seen[x.RowID]; dup {
				t.Errorf("row id %d in %s and %s", x.RowID, other, r.ID)
			}
			seen[x.RowID] = r.ID
			if !x.At.After(time.Unix(t0-1, 0)) {
				t.Errorf("%s row %d has no time", r.ID, x.RowID)
			}
		}
	}
	// Opening again gives the same ids (stable across reopen when nothing changed).
	s2, err := Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	a, b := steps(t, s, idVersion), steps(t, s2, idVersion)
	for i := range a {
		if a[i].RowID != b[i].RowID {
			t.Fatalf("row ids differ between two opens: %d vs %d", a[i].RowID, b[i].RowID)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Step details read the whole text back from the journal.
func TestStepDetails(t *testing.T) {
	_, s := openFx(t)
	detail := func(id string, i int) store.StepDetail {
		t.Helper()
		rows := steps(t, s, id)
		d, err := s.StepDetail(bg, id, rows[i].RowID)
		if err != nil {
			t.Fatal(err)
		}
		if d.RowID != rows[i].RowID || d.Number != rows[i].Number {
			t.Fatalf("detail of row %d is %+v", rows[i].RowID, d.Step)
		}
		return d
	}
	if d := detail(idRoot, 0); d.Prompt != rootTask || d.Result != "" {
		t.Errorf("user row: %+v", d)
	}
	d := detail(idRoot, 1)
	if d.TurnText != "Splitting the release into two sub-agents." || !d.HasTurnText ||
		d.ToolCallFull != "spawn_agent {\"agent\":\"changelog-writer\"}\nspawn_agent {\"agent\":\"version-checker\"}" || d.Result != "" {
		t.Errorf("assistant row: %+v", d)
	}
	d = detail(idRoot, 3)
	if d.Result != "spawned "+idVersion+"\nwatching it" || d.ToolCallFull != `spawn_agent {"agent":"version-checker"}` {
		t.Errorf("result row: %+v", d)
	}
	if d := detail(idRoot, 4); !strings.HasPrefix(d.Decision, "restart: a new daemon") {
		t.Errorf("restart row: %+v", d)
	}
	// A row whose entry came from a sliding rewrite (Set) and one from a
	// restart's checkpoint matching are read back from their own frames.
	if d := detail(idRoot, 5); d.TurnText != "Both sub-agents are running; waiting for their reports." {
		t.Errorf("row from a Set: %+v", d)
	}
	// HEAD: tool timing and the turn's provider calls.
	d = detail(idChangelog, 1)
	if len(d.Observations) != 1 || !strings.Contains(d.Observations[0].Text, "dispatched 16:00:13 UTC, finished 16:00:16 UTC (about 3s") ||
		d.Observations[0].Target != "read_file toolu_B1" {
		t.Errorf("tool timing: %+v", d.Observations)
	}
	if len(d.ProviderCalls) != 1 || *d.ProviderCalls[0].PromptTokens != 1710 {
		t.Errorf("turn 1 calls: %+v", d.ProviderCalls)
	}
	if d := detail(idChangelog, 2); d.Result != "# Changelog\n\n## 2.3.1\n- fix rounding" || len(d.Observations) != 1 {
		t.Errorf("HEAD result row: %+v", d)
	}
	if d := detail(idChangelog, 3); len(d.ProviderCalls) != 2 || d.ProviderCalls[0].FinishReason != "compaction call" {
		t.Errorf("turn 2 calls: %+v", d.ProviderCalls)
	}
	if d := detail(idLinks, 1); d.Prompt != "only check https links" {
		t.Errorf("Message row: %+v", d)
	}
	if d := detail(idLinks, 3); d.Result != "timeout after 30s" || d.Decision != "error http_get" {
		t.Errorf("error result: %+v", d)
	}
	if d := detail(idLinks, 4); d.Decision != "status: error — link check timed out" {
		t.Errorf("status row: %+v", d)
	}
	if _, err := s.StepDetail(bg, idRoot, 999999); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("missing row: %v", err)
	}
	if _, err := s.Steps(bg, "nope"); !errors.Is(err, store.ErrNoSuchRun) {
		t.Errorf("missing run: %v", err)
	}
}

// Context samples: Leviath's estimate at every replay point; the
// provider's count only where HEAD journaled one for the window.
func TestContextSamples(t *testing.T) {
	fx, s := openFx(t)
	samples := func(id string) []store.ContextSample {
		cs, err := s.ContextSamples(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	type pt struct {
		step int
		est  int64
		rep  int64 // -1: not reported
	}
	check := func(id string, want []pt) {
		t.Helper()
		got := samples(id)
		if len(got) != len(want) {
			t.Fatalf("%s: %d samples, want %d", id, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			rep := int64(-1)
			if g.Reported != nil {
				rep = *g.Reported
			}
			if g.Step != w.step || g.Estimated != w.est || rep != w.rep || g.RunID != id {
				t.Errorf("%s sample %d: step %d est %d rep %d, want %+v", id, i, g.Step, g.Estimated, rep, w)
			}
			if i > 0 && g.RowID <= got[i-1].RowID {
				t.Errorf("%s: sample ids not increasing", id)
			}
		}
	}
	// 0.1.x: nothing reported, ever (never filled with the estimate).
	check(idRoot, []pt{{1, 44, -1}, {2, 60, -1}, {2, 95, -1}, {2, 95, -1}, {3, 90, -1}, {4, 106, -1}})
	// HEAD: a stage call's prompt tokens go to the window it was made with;
	// the compaction call's do not.
	check(idChangelog, []pt{{1, 16, 1710}, {2, 22, -1}, {2, 31, 1810}, {3, 37, -1}})
	check(idLinks, []pt{{1, 18, -1}, {1, 18, 900}, {2, 29, -1}, {2, 29, -1}})
	cs := samples(idRoot)
	if !strings.Contains(cs[3].Detail, "first window after a daemon restart") || !strings.Contains(cs[0].Detail, "44 of 200000 tokens") {
		t.Errorf("details: %q / %q", cs[0].Detail, cs[3].Detail)
	}
	if d := samples(idChangelog)[2].Detail; !strings.Contains(d, "reported by anthropic claude-sonnet-4-5: prompt 1810 (cached 1600, cache write 0), completion 120") {
		t.Errorf("reported detail: %q", d)
	}
	// The estimate is the generator's window total.
	if g := fx.gens[idVersion].total(); samples(idVersion)[2].Estimated != g {
		t.Errorf("version: last estimate %d, generator's window %d", samples(idVersion)[2].Estimated, g)
	}
	calls, err := s.ProviderCalls(bg, idChangelog)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].Step != 1 || calls[1].Step != 2 || calls[1].Attempt != 1 || calls[2].Attempt != 2 ||
		calls[0].Provider != "anthropic" || calls[0].Model != "claude-sonnet-4-5" || *calls[2].TotalTokens != 1930 ||
		!calls[2].At.Equal(time.Unix(t0+18, 0)) || calls[0].LatencyMS != 0 {
		t.Errorf("provider calls: %+v", calls)
	}
	if ev, err := s.AgentEvents(bg, idRoot); err != nil || len(ev) != 0 {
		t.Errorf("agent events: %v %v", ev, err)
	}
}

// Liveness from the synthesized lease: the daemon's pid 0 is never
// checked; a pid on this machine is; updated_at ages the lease.
func TestLiveness(t *testing.T) {
	fx, s := openFx(t)
	now := time.Unix(t0+600, 0)
	state := func(id string, waiting bool, now time.Time) store.State {
		t.Helper()
		runs, err := s.Runs(bg)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]store.Run{}
		for _, r := range runs {
			byID[r.ID] = r
		}
		r := byID[id]
		return store.StateOf(r, store.EffectiveLease(r, byID), s.RecordsLeases(), waiting, now)
	}
	if !s.RecordsLeases() {
		t.Fatal("RecordsLeases is false")
	}
	if st := state(idRoot, false, now); st != store.StateRunning {
		t.Errorf("root within the ttl: %v", st)
	}
	if st := state(idRoot, false, time.Unix(t0+50, 0).Add(LeaseTTL)); st != store.StateStale {
		t.Errorf("root past the ttl: %v", st)
	}
	if st := state(idVersion, true, time.Unix(t0+80, 0).Add(2*LeaseTTL)); st != store.StateWaiting {
		t.Errorf("a waiting run past the ttl: %v", st)
	}
	if st := state(idChangelog, false, now); st != store.StateFinished {
		t.Errorf("complete: %v", st)
	}
	if st := state(idLinks, false, now); st != store.StateFinished {
		t.Errorf("error: %v", st)
	}
	// A pid on this machine (the meta's machine id matches <runs>/../machine-id)
	// is checked: this process is alive, a reaped child is not.
	r := fx.gens[idCrashy]
	r.meta.pid = int64(os.Getpid())
	r.progress(t0 + 590)
	head(t, s)
	if l := runByID(t, s, idCrashy).Lease; l == nil || l.OwnerPID() != os.Getpid() {
		t.Fatalf("lease of a run with this pid: %+v", l)
	}
	if st := state(idCrashy, false, now); st != store.StateRunning {
		t.Errorf("live pid: %v", st)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	r.meta.pid = int64(cmd.Process.Pid)
	r.progress(t0 + 595)
	head(t, s)
	if st := state(idCrashy, false, now); st != store.StateCrashed {
		t.Errorf("a gone pid: %v", st)
	}
	// The same pid from another machine is not checked.
	r.machine = "ffffffffffffffff"
	r.restart(t0+596, "1111111111111111")
	head(t, s)
	if l := runByID(t, s, idCrashy).Lease; l == nil || l.OwnerPID() != 0 || !strings.HasPrefix(l.Owner, "lev-pid") {
		t.Errorf("a pid on another machine: %+v", l)
	}
	// Paused (HEAD): no lease, so paused whatever the clock says.
	r.meta.status = "paused"
	r.progress(t0 + 597)
	head(t, s)
	if r := runByID(t, s, idCrashy); r.Status != "paused" || r.Lease != nil {
		t.Errorf("paused: %+v", r)
	}
	if st := state(idCrashy, false, now); st != store.StatePaused {
		t.Errorf("paused: %v", st)
	}
}
