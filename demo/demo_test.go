package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// decider is a second process's view of the run: its own ioharness.Open
// handle, polling what waits on a human and deciding it through Decide,
// as the explorer would.
type decider struct {
	mu      sync.Mutex
	decided map[store.RequestKey]store.Decision
	errs    []error
	done    chan struct{}
}

// startDecider opens path once ready is closed and decides every
// unresolved request with choose until ctx ends.
func startDecider(ctx context.Context, path string, ready <-chan struct{}, choose func(store.Request) store.Decision) *decider {
	d := &decider{decided: map[store.RequestKey]store.Decision{}, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		s, err := ioharness.Open(path)
		if err != nil {
			d.fail(err)
			return
		}
		defer s.Close()
		tick := time.NewTicker(15 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			reqs, err := s.Requests(ctx, true)
			if err != nil {
				if ctx.Err() == nil {
					d.fail(err)
				}
				return
			}
			for _, r := range reqs {
				dec := choose(r)
				res, err := s.Decide(ctx, dec)
				if err != nil {
					if ctx.Err() == nil {
						d.fail(fmt.Errorf("decide %s: %w", r.Key(), err))
					}
					return
				}
				if res.Won {
					d.mu.Lock()
					d.decided[r.Key()] = dec
					d.mu.Unlock()
				}
			}
		}
	}()
	return d
}

func (d *decider) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.errs = append(d.errs, err)
}

// approveAll approves approvals and plans and answers the question.
func approveAll(r store.Request) store.Decision {
	switch r.Kind {
	case store.Question:
		return store.Decision{Key: r.Key(), Text: "Return ErrEmptyInput"}
	default:
		return store.Decision{Key: r.Key(), Verdict: store.VerdictApprove}
	}
}

// runWithDecider runs the demo at high speed with a decider beside it.
func runWithDecider(t *testing.T, seed int64, choose func(store.Request) store.Decision) (string, *decider) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.db")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan struct{})
	d := startDecider(ctx, path, ready, choose)
	err := Run(ctx, Options{Path: path, Speed: 200, Seed: seed, Ready: func() { close(ready) }})
	cancel()
	<-d.done
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, e := range d.errs {
		t.Errorf("decider: %v", e)
	}
	return path, d
}

func openRO(t *testing.T, path string) *ioharness.Store {
	t.Helper()
	s, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// liveTree is the live tree: the newest root and everything under it.
func liveTree(t *testing.T, s *ioharness.Store) []store.Run {
	t.Helper()
	ctx := context.Background()
	runs, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs { // newest first
		if r.IsRoot() {
			tree, err := s.Tree(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			return tree
		}
	}
	t.Fatal("no root run")
	return nil
}

func ids(runs []store.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func byAddress(t *testing.T, s *ioharness.Store, tree []store.Run, name string) store.Run {
	t.Helper()
	evs, err := s.AgentEvents(context.Background(), ids(tree)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == store.AgentSpawn && strings.HasPrefix(e.Detail, name+": ") {
			for _, r := range tree {
				if r.ID == e.ChildRunID {
					return r
				}
			}
		}
	}
	t.Fatalf("no agent %q in the tree", name)
	return store.Run{}
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := openRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRunApproved(t *testing.T) {
	path, d := runWithDecider(t, 7, approveAll)
	ctx := context.Background()
	if v := userVersion(t, path); v != 7 {
		t.Errorf("user_version %d, want 7", v)
	}
	if s, err := ioharness.Open(path); err != nil {
		t.Errorf("ioharness.Open: %v", err)
	} else {
		s.Close()
	}
	s := openRO(t, path)

	all, err := s.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	roots := 0
	for _, r := range all {
		if r.IsRoot() {
			roots++
		}
		if r.Status != store.StatusCompleted {
			t.Errorf("run %s is %s (%s), want every run finished", r.ID, r.Status, r.Outcome)
		}
		if r.Summary == nil {
			t.Errorf("run %s (%s) has no summary", r.ID, r.Outcome)
		}
		if r.Lease != nil {
			t.Errorf("run %s still leased by %s", r.ID, r.Lease.Owner)
		}
	}
	if roots < 4 {
		t.Errorf("%d roots, want history (≥3) and the live tree", roots)
	}

	tree := liveTree(t, s)
	if len(tree) < 4 {
		t.Errorf("live tree has %d agents, want ≥ 4", len(tree))
	}
	depth := 0
	for _, r := range tree {
		depth = max(depth, r.Depth)
		if r.Outcome != store.OutcomeSuccess {
			t.Errorf("live run %s ended %s, want success", r.ID, r.Outcome)
		}
	}
	if depth != 2 {
		t.Errorf("deepest agent at depth %d, want 2", depth)
	}

	evs, err := s.AgentEvents(ctx, ids(tree)...)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{}
	var draws []store.AgentEvent
	for _, e := range evs {
		switch e.Kind {
		case store.AgentSpawnRefused:
			refused[e.Detail] = true
		case store.AgentBudgetDraw:
			draws = append(draws, e)
		}
	}
	if !refused["agents"] || !refused["depth"] {
		t.Errorf("spawn refusals %v, want agents and depth", refused)
	}
	checkDraws(t, draws, treeCeiling)

	retries, commits := 0, 0
	var samples []store.ContextSample
	for _, r := range tree {
		steps, err := s.Steps(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			if st.Pending {
				t.Errorf("run %s step %d never committed", r.ID, st.Number)
			}
			commits++
			retries += len(st.Retries)
			for _, rt := range st.Retries {
				if !strings.HasPrefix(rt.Decision, "retry ") {
					t.Errorf("retry row %q", rt.Decision)
				}
			}
		}
		cs, err := s.ContextSamples(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != len(steps) {
			t.Errorf("run %s: %d context samples for %d steps", r.ID, len(cs), len(steps))
		}
		samples = append(samples, cs...)
	}
	if retries < 2 {
		t.Errorf("%d retries folded under steps, want ≥ 2", retries)
	}
	checkDrift(t, samples)

	reqs, err := s.Requests(ctx, false, ids(tree)...)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[store.RequestKind]int{}
	for _, r := range reqs {
		kinds[r.Kind]++
		if !r.Resolved {
			t.Errorf("%s still unresolved", r.Key())
			continue
		}
		want, ok := d.decided[r.Key()]
		if !ok {
			t.Errorf("%s resolved, but not by the decider", r.Key())
			continue
		}
		switch r.Kind {
		case store.Approval:
			if r.Decision != string(want.Verdict) {
				t.Errorf("%s: %q, want %q", r.Key(), r.Decision, want.Verdict)
			}
		case store.Question:
			if r.Decision != want.Text || r.DecidedBy != "attached" {
				t.Errorf("%s: %q by %q, want %q by attached", r.Key(), r.Decision, r.DecidedBy, want.Text)
			}
		case store.Plan:
			if r.Decision != string(want.Verdict) || r.DecidedBy != "attached" {
				t.Errorf("%s: %q by %q, want %q by attached", r.Key(), r.Decision, r.DecidedBy, want.Verdict)
			}
		}
	}
	if kinds[store.Approval] < 2 || kinds[store.Question] != 1 || kinds[store.Plan] != 1 {
		t.Errorf("requests %v, want 2 approvals, 1 question, 1 plan", kinds)
	}

	// The write approval carried its content and the approved write landed.
	rel := byAddress(t, s, tree, "release")
	pol, err := s.PolicyEvents(ctx, rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	approved := 0
	for _, p := range pol {
		if p.Kind == store.PolicyDecision && p.Decision == store.PolicyApprove && p.Source == "attached" {
			approved++
		}
	}
	if approved != 2 {
		t.Errorf("release has %d decision/approve/attached events, want 2", approved)
	}
	steps, _ := s.Steps(ctx, rel.ID)
	var decisions []string
	for _, st := range steps {
		decisions = append(decisions, st.Decision)
	}
	if !slices.Contains(decisions, "wrote deploy/release.yaml") || !slices.Contains(decisions, "shell exit 0") {
		t.Errorf("release steps %q, want the approved write and command", decisions)
	}
	for _, r := range reqs {
		if r.Kind == store.Approval && r.Act == "write" {
			if !r.HasContent || strings.Count(r.Content, "\n") < 20 {
				t.Errorf("write approval content has %d lines, want tens", strings.Count(r.Content, "\n"))
			}
		}
	}
	// The parser acted on the answer.
	parser := byAddress(t, s, tree, "parser")
	psteps, _ := s.Steps(ctx, parser.ID)
	var pd []string
	for _, st := range psteps {
		pd = append(pd, st.Decision)
	}
	if !slices.Contains(pd, "asked, answered by attached") {
		t.Errorf("parser steps %q, want the answered question", pd)
	}
	if m, ok, err := s.MemoryGet(ctx, parser.Workspace, "parser.empty-input"); err != nil || !ok || !strings.Contains(m.Value, "ErrEmptyInput") {
		t.Errorf("parser's note: %+v %v %v", m, ok, err)
	}
	if commits == 0 {
		t.Error("no steps")
	}
}

// checkDraws: every draw's remaining is the ceiling minus everything drawn
// so far, so it only ever goes down.
func checkDraws(t *testing.T, draws []store.AgentEvent, ceiling int64) {
	t.Helper()
	if len(draws) < 10 {
		t.Fatalf("%d budget draws, want one per step", len(draws))
	}
	spent := int64(0)
	prev := ceiling
	for _, d := range draws {
		if d.Tokens == nil || d.Remaining == nil {
			t.Fatalf("draw without tokens/remaining: %+v", d)
		}
		spent += *d.Tokens
		if *d.Remaining != ceiling-spent {
			t.Errorf("draw %d: remaining %d, want %d", d.RowID, *d.Remaining, ceiling-spent)
		}
		if *d.Remaining > prev {
			t.Errorf("remaining went up: %d after %d", *d.Remaining, prev)
		}
		prev = *d.Remaining
	}
	if prev >= ceiling || prev <= 0 {
		t.Errorf("remaining %d of %d at the end", prev, ceiling)
	}
}

// checkDrift: some turns have no provider count; the others run above the
// estimate, by more late in a run than early.
func checkDrift(t *testing.T, samples []store.ContextSample) {
	t.Helper()
	missing := 0
	var early, late []float64
	for _, c := range samples {
		if c.Reported == nil {
			missing++
			continue
		}
		ratio := float64(*c.Reported) / float64(c.Estimated)
		if ratio <= 1 {
			t.Errorf("run %s step %d: reported %d ≤ estimate %d", c.RunID, c.Step, *c.Reported, c.Estimated)
		}
		switch {
		case c.Step <= 2:
			early = append(early, ratio)
		case c.Step >= 6:
			late = append(late, ratio)
		}
	}
	if missing == 0 {
		t.Error("no turn without a provider count")
	}
	if mean(late) <= mean(early) {
		t.Errorf("drift does not grow: early %.2f, late %.2f", mean(early), mean(late))
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func TestRunDenied(t *testing.T) {
	path, _ := runWithDecider(t, 3, func(r store.Request) store.Decision {
		if r.Kind == store.Approval && r.Act == "exec" {
			return store.Decision{Key: r.Key(), Verdict: store.VerdictDeny}
		}
		return approveAll(r)
	})
	ctx := context.Background()
	s := openRO(t, path)
	tree := liveTree(t, s)
	rel := byAddress(t, s, tree, "release")
	if rel.Outcome != store.OutcomeDenied || rel.Summary == nil || rel.Summary.Outcome != store.OutcomeDenied {
		t.Errorf("release ended %q (summary %+v), want denied", rel.Outcome, rel.Summary)
	}
	pol, err := s.PolicyEvents(ctx, rel.ID)
	if err != nil {
		t.Fatal(err)
	}
	denied := false
	for _, p := range pol {
		if p.Kind == store.PolicyDecision && p.Decision == store.PolicyDeny && p.Source == "attached" && p.Act == "exec" {
			denied = true
		}
	}
	if !denied {
		t.Error("no decision/deny/attached policy event for the command")
	}
	steps, _ := s.Steps(ctx, rel.ID)
	if last := steps[len(steps)-1]; last.Decision != "exec denied" {
		t.Errorf("release's last step %q, want exec denied", last.Decision)
	}
	root := tree[0]
	if root.Outcome != store.OutcomeSuccess || root.Summary == nil {
		t.Errorf("coordinator ended %q, want success with a summary", root.Outcome)
	}
	if m, ok, _ := s.MemoryGet(ctx, root.Workspace, "release.denied"); !ok || !strings.Contains(m.Value, "rm -rf build/") {
		t.Errorf("coordinator did not note the denial: %+v", m)
	}
	for _, r := range tree {
		if r.Status != store.StatusCompleted || r.Lease != nil {
			t.Errorf("run %s: status %s lease %v", r.ID, r.Status, r.Lease)
		}
	}
}

func TestRunPlanRevisedThenCancelled(t *testing.T) {
	path, _ := runWithDecider(t, 11, func(r store.Request) store.Decision {
		if r.Kind == store.Plan {
			if len(r.PlanSteps) == 4 {
				return store.Decision{Key: r.Key(), Verdict: store.VerdictRevise, Text: "also mention the fuzzing fix"}
			}
			return store.Decision{Key: r.Key(), Verdict: store.VerdictCancel}
		}
		return approveAll(r)
	})
	ctx := context.Background()
	s := openRO(t, path)
	tree := liveTree(t, s)
	docs := byAddress(t, s, tree, "docs")
	if docs.Outcome != store.OutcomePlanRejected {
		t.Errorf("docs ended %q, want plan_rejected", docs.Outcome)
	}
	reqs, err := s.Requests(ctx, false, docs.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Decision != string(store.VerdictRevise) || reqs[1].Decision != string(store.VerdictCancel) {
		t.Fatalf("docs plans %+v, want a revised plan then a cancelled one", reqs)
	}
	if !slices.ContainsFunc(reqs[1].PlanSteps, func(p store.PlanStep) bool { return strings.Contains(p.Intent, "fuzzing fix") }) {
		t.Errorf("the revised plan ignores the correction: %+v", reqs[1].PlanSteps)
	}
	steps, _ := s.Steps(ctx, docs.ID)
	var got []string
	for _, st := range steps {
		got = append(got, st.Decision)
	}
	want := []string{"git_log ok", "plan sent back", "plan " + reqs[1].ID + " cancelled"}
	if !slices.Equal(got, want) {
		t.Errorf("docs steps %q, want %q", got, want)
	}
	if tree[0].Outcome != store.OutcomeSuccess {
		t.Errorf("coordinator ended %q", tree[0].Outcome)
	}
}

// dump renders every table, row by row, as text.
func dump(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := openRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string]string{}
	for _, table := range tables {
		out[table] = dumpQuery(t, db, "SELECT * FROM "+table+" ORDER BY rowid")
	}
	return out
}

func dumpQuery(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v\t", cols[i], v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	a, b, c := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	for _, x := range []struct {
		path string
		seed int64
	}{{a, 42}, {b, 42}, {c, 43}} {
		if err := Snapshot(ctx, x.path, x.seed, base); err != nil {
			t.Fatalf("Snapshot %s: %v", x.path, err)
		}
	}
	da, db, dc := dump(t, a), dump(t, b), dump(t, c)
	for table, rows := range da {
		if rows != db[table] {
			t.Errorf("table %s differs between two snapshots of the same seed", table)
		}
	}
	for _, table := range []string{"runs", "steps", "context_events", "pending_approvals", "pending_questions", "plans",
		"provider_calls", "agent_events", "run_leases", "run_outcomes", "edits", "memory"} {
		if da[table] == "" {
			t.Errorf("snapshot wrote nothing to %s", table)
		}
	}
	if da["steps"] == dc["steps"] || da["context_events"] == dc["context_events"] {
		t.Error("another seed gave the same steps")
	}

	// Every timestamp is base plus a fixed offset: history a few hours
	// before, the live tree a few seconds after.
	for table, rows := range da {
		for _, line := range strings.Split(rows, "\n") {
			for _, field := range strings.Split(line, "\t") {
				name, v, _ := strings.Cut(field, "=")
				if !strings.HasSuffix(name, "_at") && name != "at" {
					continue
				}
				if v == "<nil>" {
					continue
				}
				ts, err := time.Parse(isoMillis, v)
				if err != nil {
					ts, err = time.Parse(dtFormat, v)
				}
				if err != nil {
					t.Errorf("%s.%s: %q is not a timestamp", table, name, v)
					continue
				}
				if ts.Before(base.Add(-7*time.Hour)) || ts.After(base.Add(time.Minute)) {
					t.Errorf("%s.%s = %s, not near base %s", table, name, v, base.Format(isoMillis))
				}
			}
		}
	}

	s := openRO(t, a)
	if v := userVersion(t, a); v != 7 {
		t.Errorf("user_version %d", v)
	}
	open, err := s.Requests(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	waiting := map[store.RequestKind]int{}
	for _, r := range open {
		waiting[r.Kind]++
	}
	if waiting[store.Approval] < 1 || waiting[store.Question] != 1 || waiting[store.Plan] != 1 {
		t.Errorf("waiting %v, want an approval, a question and a plan", waiting)
	}
	tree := liveTree(t, s)
	root := tree[0]
	if root.Lease == nil {
		t.Fatal("the live root has no lease")
	}
	if l := store.LivenessOf(root.Lease, true, time.Now()); l != store.Live {
		t.Errorf("root lease is %v, want live", l)
	}
	if pid := root.Lease.OwnerPID(); pid != os.Getpid() {
		t.Errorf("lease owner pid %d, want this process %d", pid, os.Getpid())
	}
	for _, r := range open {
		if dl, why := s.Classify(r, runByID(tree, r.RunID), root.Lease, time.Now()); dl != store.Deliverable {
			t.Errorf("%s: %v (%s), want deliverable", r.Key(), dl, why)
		}
	}
	midFlight := 0
	for _, r := range tree {
		if r.Status != store.StatusRunning {
			t.Errorf("live run %s is %s", r.ID, r.Status)
		}
		if r.Depth > 0 && r.Steps > 0 {
			midFlight++
		}
	}
	if len(tree) < 4 || midFlight < 3 {
		t.Errorf("%d agents, %d children with steps", len(tree), midFlight)
	}
	all, _ := s.Runs(ctx)
	for _, r := range all {
		if !slices.Contains(ids(tree), r.ID) && (r.Status == store.StatusRunning || r.Summary == nil && r.Status != store.StatusPaused) {
			t.Errorf("history run %s: %s %s, summary %v", r.ID, r.Status, r.Outcome, r.Summary)
		}
	}
	var samples []store.ContextSample
	for _, r := range tree {
		cs, _ := s.ContextSamples(ctx, r.ID)
		samples = append(samples, cs...)
	}
	drift := 0
	for _, c := range samples {
		if c.Reported != nil && *c.Reported > c.Estimated {
			drift++
		}
	}
	if drift < 10 {
		t.Errorf("%d samples with drift", drift)
	}
}

func runByID(runs []store.Run, id string) store.Run {
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	return store.Run{}
}

func TestRunCancel(t *testing.T) {
	before := runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "demo.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Path: path, Speed: 1, Seed: 5, Ready: func() { close(ready) }}) }()
	<-ready
	// Cut it off once the live root has committed a step.
	watch, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the live root committed no step in 10 s")
		}
		if tree := liveTree(t, watch); tree[0].Steps > 0 {
			break
		}
	}
	watch.Close()
	start := time.Now()
	cancel()
	select {
	case err = <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Run took %v to stop", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Run, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	s := openRO(t, path)
	tree := liveTree(t, s)
	root := tree[0]
	if root.Lease != nil {
		t.Errorf("the lease is still held by %s", root.Lease.Owner)
	}
	if root.Status != store.StatusRunning || root.Steps == 0 {
		t.Errorf("cut-off root: status %s, %d steps; want running with steps", root.Status, root.Steps)
	}
}

func TestHunk(t *testing.T) {
	h, add, del := hunk("", "a\nb\n")
	if h != "@@ -0,0 +1,2 @@\n+a\n+b\n" || add != 2 || del != 0 {
		t.Errorf("new file: %q %d %d", h, add, del)
	}
	h, add, del = hunk("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n")
	if h != "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n" || add != 1 || del != 1 {
		t.Errorf("change: %q %d %d", h, add, del)
	}
}
