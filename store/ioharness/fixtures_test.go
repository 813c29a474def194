package ioharness

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness/harness"
)

type fixtureJSON map[string]any

func loadFixture(t *testing.T, path string) fixtureJSON {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m fixtureJSON
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f fixtureJSON) num(k string) int64 { return int64(f[k].(float64)) }
func (f fixtureJSON) str(k string) string {
	s, _ := f[k].(string)
	return s
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// openFixture opens a fixture read-only and checks, when the test ends,
// that not one byte of the database file changed.
func openFixture(t *testing.T, path string) *Store {
	t.Helper()
	before := fileHash(t, path)
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() {
		s.Close()
		if fileHash(t, path) != before {
			t.Errorf("%s changed while it was only read", path)
		}
	})
	return s
}

// harnessOn opens the harness twin on a copy of a fixture (rel is under
// the fixture directory): its open brings an older store up to date, so
// never on the fixture itself. The copy is made before this test opens a
// connection to the fixture.
func harnessOn(t *testing.T, rel string) *harness.Store {
	t.Helper()
	h, err := harness.OpenWriter(copyFixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestFixturePopulated(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, "store-0.22.0", "populated.json"))
	h := harnessOn(t, filepath.Join("store-0.22.0", "populated.sqlite3"))
	s := openFixture(t, filepath.Join(dir, "store-0.22.0", "populated.sqlite3"))
	ctx := context.Background()
	runID := idStr(want.num("run_id"))

	r, err := s.Run(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Goal != want.str("goal") || string(r.Outcome) != want.str("outcome") || string(r.Status) != want.str("status") {
		t.Errorf("run = %q/%q/%q, want %q/%q/%q", r.Goal, r.Outcome, r.Status, want.str("goal"), want.str("outcome"), want.str("status"))
	}
	if r.Summary == nil || r.Summary.Steps != int(want.num("last_step")) || r.Summary.Tokens != want.num("spent_tokens") {
		t.Errorf("summary = %+v, want steps %d tokens %d", r.Summary, want.num("last_step"), want.num("spent_tokens"))
	}
	if last, _ := h.LastStep(ctx, runID); last != int(want.num("last_step")) {
		t.Errorf("last step = %d, want %d", last, want.num("last_step"))
	}
	if spent, _ := h.SpentTokens(ctx, runID); spent != want.num("spent_tokens") {
		t.Errorf("spent = %d, want %d", spent, want.num("spent_tokens"))
	}

	steps, err := s.Steps(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	wantSteps := want["steps"].([]any)
	if len(steps) != len(wantSteps) {
		t.Fatalf("%d steps, want %d", len(steps), len(wantSteps))
	}
	for i, ws := range wantSteps {
		w := fixtureJSON(ws.(map[string]any))
		if steps[i].Number != int(w.num("step")) || steps[i].Decision != w.str("decision") || steps[i].Tokens != w.num("tokens") {
			t.Errorf("step %d = %+v, want %v", i, steps[i], w)
		}
	}

	// Every observation lands in its step's detail.
	var gotObs []string
	for _, st := range steps {
		d, err := s.StepDetail(ctx, runID, st.RowID)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range d.Observations {
			gotObs = append(gotObs, o.Kind+"@"+idStr(int64(d.Number))+":"+o.Target)
		}
		if st.Number == 4 && (len(d.Edits) != 1 || d.Edits[0].Path != "out.txt" || d.Edits[0].LinesAdded != 1) {
			t.Errorf("step 4 edits = %+v", d.Edits)
		}
		if len(d.ProviderCalls) != 1 {
			t.Errorf("step %d has %d provider calls, want 1", st.Number, len(d.ProviderCalls))
		}
	}
	var wantObs []string
	for _, o := range want["observations"].([]any) {
		w := fixtureJSON(o.(map[string]any))
		wantObs = append(wantObs, w.str("kind")+"@"+idStr(w.num("step"))+":"+w.str("target"))
	}
	if !equalStrings(gotObs, wantObs) {
		t.Errorf("observations = %v, want %v", gotObs, wantObs)
	}

	calls, err := s.ProviderCalls(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range want["provider_calls"].([]any) {
		w := fixtureJSON(c.(map[string]any))
		usage := fixtureJSON(w["usage"].(map[string]any))
		if calls[i].Step != int(w.num("step")) || calls[i].Model != w.str("model") || calls[i].FinishReason != w.str("finish_reason") ||
			calls[i].TotalTokens == nil || *calls[i].TotalTokens != usage.num("total_tokens") {
			t.Errorf("provider call %d = %+v, want %v", i, calls[i], w)
		}
	}

	pol, err := s.PolicyEvents(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range want["policy_events"].([]any) {
		w := fixtureJSON(p.(map[string]any))
		if string(pol[i].Kind) != w.str("kind") || pol[i].Target != w.str("target") || pol[i].Rule != w.str("rule") ||
			string(pol[i].Decision) != w.str("decision") || pol[i].Source != w.str("source") {
			t.Errorf("policy event %d = %+v, want %v", i, pol[i], w)
		}
	}

	wp := fixtureJSON(want["pending"].(map[string]any))
	req, err := s.Request(ctx, store.RequestKey{Kind: store.Approval, ID: idStr(wp.num("request_id"))})
	if err != nil {
		t.Fatal(err)
	}
	if req.Act != wp.str("act") || req.Target != wp.str("target") || req.Content != wp.str("content") ||
		!req.Resolved || req.Decision != wp.str("resolved") || req.Step != int(wp.num("step")) {
		t.Errorf("pending = %+v, want %v", req, wp)
	}
	if open, _ := s.Requests(ctx, true); len(open) != 0 {
		t.Errorf("%d unresolved requests, want 0", len(open))
	}
	evs, _ := s.Events(ctx, runID)
	checkpoints := 0
	for _, e := range evs {
		if e.Source == "checkpoint" {
			checkpoints++
		}
	}
	if checkpoints != int(want.num("checkpoint_event_count")) {
		t.Errorf("%d checkpoint events, want %d", checkpoints, want.num("checkpoint_event_count"))
	}
	samples, _ := s.ContextSamples(ctx, runID)
	if len(samples) != 4 || samples[0].Reported == nil || *samples[0].Reported != 120 {
		t.Errorf("context samples = %+v", samples)
	}
}

func TestFixtureDeferredApproval(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, "store-0.22.0", "deferred-approval.json"))
	s := openFixture(t, filepath.Join(dir, "store-0.22.0", "deferred-approval.sqlite3"))
	ctx := context.Background()
	runID := idStr(want.num("run_id"))
	r, err := s.Run(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "paused" || string(r.Outcome) != want.str("outcome") || r.Summary != nil {
		t.Errorf("run = %q %q summary %v; want paused %q and no summary", r.Status, r.Outcome, r.Summary, want.str("outcome"))
	}
	if r.Steps != int(want.num("last_step")) {
		t.Errorf("steps = %d, want %d", r.Steps, want.num("last_step"))
	}
	open, err := s.Requests(ctx, true)
	if err != nil || len(open) != 1 {
		t.Fatalf("unresolved = %v, %v; want 1", open, err)
	}
	wp := fixtureJSON(want["pending"].(map[string]any))
	if open[0].ID != idStr(wp.num("request_id")) || open[0].Content != wp.str("content") || open[0].Target != wp.str("target") {
		t.Errorf("request = %+v, want %v", open[0], wp)
	}
	if !equalStrings(open[0].Ancestry, []string{runID}) {
		t.Errorf("ancestry = %v", open[0].Ancestry)
	}
	d, why, err := s.Delivery(ctx, open[0].Key())
	if err != nil || d != store.Deferred || why == "" {
		t.Errorf("delivery = %v %q %v; want Deferred with a reason", d, why, err)
	}
	if store.StateOf(r, nil, s.RecordsLeases(), false, r.StartedAt) != store.StatePaused {
		t.Errorf("state = %v, want paused", store.StateOf(r, nil, s.RecordsLeases(), false, r.StartedAt))
	}
}

func checkTreeFixture(t *testing.T, version string) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, version, "interrupted.json"))
	h := harnessOn(t, filepath.Join(version, "interrupted.sqlite3"))
	s := openFixture(t, filepath.Join(dir, version, "interrupted.sqlite3"))
	ctx := context.Background()
	rootID := idStr(want.num("root_run_id"))
	tree, err := s.Tree(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tree {
		ids = append(ids, r.ID)
	}
	var wantIDs []string
	for _, id := range want["tree_run_ids"].([]any) {
		wantIDs = append(wantIDs, idStr(int64(id.(float64))))
	}
	if !equalStrings(ids, wantIDs) {
		t.Errorf("tree = %v, want %v", ids, wantIDs)
	}
	if string(tree[0].Outcome) != want.str("root_outcome") || string(tree[0].Status) != want.str("root_status") || tree[0].Steps != int(want.num("root_last_step")) {
		t.Errorf("root = %+v", tree[0])
	}
	for i, c := range want["children"].([]any) {
		w := fixtureJSON(c.(map[string]any))
		got := tree[i+1]
		if got.ID != idStr(w.num("run_id")) || got.Depth != int(w.num("depth")) || got.ParentID != rootID ||
			string(got.Outcome) != w.str("outcome") || string(got.Status) != w.str("status") || got.Steps != int(w.num("last_step")) ||
			got.Tokens != w.num("spent_tokens") {
			t.Errorf("child %d = %+v, want %v", i, got, w)
		}
	}
	spent, err := h.SpentTokensTree(ctx, rootID)
	if err != nil || spent != want.num("spent_tokens_tree") {
		t.Errorf("tree tokens = %d %v, want %d", spent, err, want.num("spent_tokens_tree"))
	}
	evs, err := s.AgentEvents(ctx, ids...)
	if err != nil {
		t.Fatal(err)
	}
	spawns, draws := 0, 0
	var lastRemaining int64
	for _, e := range evs {
		switch e.Kind {
		case "spawn":
			spawns++
		case "budget_draw":
			draws++
			lastRemaining = *e.Remaining
		}
	}
	if spawns != 2 || draws != 4 || lastRemaining != 999600 {
		t.Errorf("agent events: %d spawns, %d draws, remaining %d; want 2, 4, 999600", spawns, draws, lastRemaining)
	}
}

func TestFixtureTree022(t *testing.T) { checkTreeFixture(t, "store-0.22.0") }
func TestFixtureTree029(t *testing.T) { checkTreeFixture(t, "store-0.29.0") }

func TestFixtureAggregates(t *testing.T) {
	dir := testkit.IOHarnessFixtures(t)
	want := loadFixture(t, filepath.Join(dir, "store-0.29.0", "aggregates.json"))
	h := harnessOn(t, filepath.Join("store-0.29.0", "aggregates.sqlite3"))
	s := openFixture(t, filepath.Join(dir, "store-0.29.0", "aggregates.sqlite3"))
	ctx := context.Background()
	comp := fixtureJSON(want["composition"].(map[string]any))

	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != int(comp.num("runs")) {
		t.Fatalf("%d runs, want %d", len(runs), comp.num("runs"))
	}
	if runs[0].ID != "6" {
		t.Errorf("runs not newest first: first is %s", runs[0].ID)
	}
	byOutcome := map[string]float64{}
	succeeded := 0
	for _, r := range runs {
		byOutcome[string(r.Outcome)]++
		if r.Summary != nil && r.Summary.Success {
			succeeded++
		}
	}
	for k, v := range comp["by_outcome"].(map[string]any) {
		if byOutcome[k] != v.(float64) {
			t.Errorf("outcome %s: %v runs, want %v", k, byOutcome[k], v)
		}
	}
	if succeeded != int(comp.num("succeeded")) {
		t.Errorf("%d succeeded, want %d", succeeded, comp.num("succeeded"))
	}

	readBack := fixtureJSON(want["read_back"].(map[string]any))
	gateByPhase := map[string]float64{}
	resumesTotal := 0
	for _, wr := range readBack["runs"].([]any) {
		w := fixtureJSON(wr.(map[string]any))
		id := idStr(w.num("run_id"))
		evs, err := s.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var gates []string
		resumes := 0
		for _, e := range evs {
			if e.Source == "sandbox" && e.Kind == "gate_phase_failed" {
				gates = append(gates, e.Detail)
				gateByPhase[e.Detail]++
			}
			if e.Source == "checkpoint" && e.Kind == "resume" {
				resumes++
			}
		}
		resumesTotal += resumes
		if !equalStrings(gates, anyStrings(w["gate_failures"])) || resumes != int(w.num("resumes")) {
			t.Errorf("run %s: gates %v resumes %d, want %v %d", id, gates, resumes, w["gate_failures"], w.num("resumes"))
		}
		kinds, err := s.contextKinds(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !equalStrings(kinds, anyStrings(w["context_kinds"])) {
			t.Errorf("run %s context kinds %v, want %v", id, kinds, w["context_kinds"])
		}
		r, _ := s.Run(ctx, id)
		if r.Summary == nil || r.Summary.Success != w["success"].(bool) || r.Tokens != w.num("tokens") {
			t.Errorf("run %s = %+v, want %v", id, r, w)
		}
	}
	for k, v := range comp["gate_failures_by_phase"].(map[string]any) {
		if gateByPhase[k] != v.(float64) {
			t.Errorf("gate phase %s: %v, want %v", k, gateByPhase[k], v)
		}
	}
	if rec := fixtureJSON(comp["recovery"].(map[string]any)); resumesTotal != int(rec.num("resumes")) {
		t.Errorf("resumes %d, want %d", resumesTotal, rec.num("resumes"))
	}
	mem, err := h.MemoryList(ctx, comp.str("workspace"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range mem {
		keys = append(keys, m.Key)
	}
	wantKeys := anyStrings(comp["memory_keys"])
	sort.Strings(keys)
	sort.Strings(wantKeys)
	if !equalStrings(keys, wantKeys) {
		t.Errorf("memory keys %v, want %v", keys, wantKeys)
	}
	for _, wm := range readBack["memory"].([]any) {
		w := fixtureJSON(wm.(map[string]any))
		m, ok, err := s.MemoryGet(ctx, comp.str("workspace"), w.str("key"))
		if err != nil || !ok || m.Value != w.str("value") || m.RunID != idStr(w.num("run_id")) || m.Step != int(w.num("step")) {
			t.Errorf("memory %s = %+v %v %v, want %v", w.str("key"), m, ok, err, w)
		}
	}
}

// contextKinds lists a run's context event kinds in order (test helper).
func (s *Store) contextKinds(ctx context.Context, runID string) ([]string, error) {
	var kinds []string
	err := s.eachRow(ctx, "SELECT kind FROM context_events WHERE run_id = ? ORDER BY id", []any{runNum(runID)}, func(r *sql.Rows) error {
		var k string
		err := r.Scan(&k)
		kinds = append(kinds, k)
		return err
	})
	return kinds, err
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func equalStrings(a, b []string) bool {
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
