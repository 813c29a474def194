package starweaver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// liveRun is a run as Starweaver writes it while it runs: a queued run
// record, then commit_checkpoint (crates/starweaver-storage, session_store
// impl_store.rs) for each boundary — a checkpoint row keyed by run_step
// with the run state's accumulated usage, and, in the same transaction,
// save_run_record moving the run record's updated_at. Its stream records
// come only with commit_run_evidence, when the stretch ends.
type liveRun struct {
	*runB
	created time.Time
}

func newLiveRun(f *fx, run string) *liveRun {
	f.session(sessA, 1, J{"session_id", sessA, "title", "live", "workspace", "/work"}, t0, t0)
	r := f.run(sessA, run, 1, 1, runJ(sessA, run, "migrate the ledger", "queued", "", 1, t0, t0), t0, t0)
	return &liveRun{runB: r, created: t0}
}

// checkpointAt is commit_checkpoint at run_step step with the run's
// accumulated total tokens.
func (r *liveRun) checkpointAt(step int, total int) {
	ts := t0.Add(time.Duration(step+1) * time.Second)
	u := usageJ(total-total/10, 0, 0, total/10)
	id := fmt.Sprintf("ckpt_%08d-0000-4000-8000-000000000001", step)
	p := J{"checkpoint_id", id, "run_id", r.run, "conversation_id", "conv_" + r.run[4:], "node", "model_response", "run_step", step,
		"resume", J{"node", "model_response", "status", "running", "run_step", step,
			"cursor", J{"model_request_attempt", step, "output_validation_attempt", 0, "message_cursor", step * 2},
			"usage", u, "pending_approval_count", 0, "deferred_tool_count", 0},
		"state", J{"run_id", r.run, "conversation_id", "conv_" + r.run[4:], "message_history", A{}, "usage", u, "run_step", step, "status", "running"}}
	r.f.exec("INSERT INTO checkpoint_records (session_id, run_id, sequence_no, checkpoint_id, record, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		r.session, r.run, step, id, env("starweaver.runtime.checkpoint", 1, p), col(ts))
	r.f.exec("UPDATE run_records SET record = ?, updated_at = ? WHERE session_id = ? AND run_id = ?",
		env("starweaver.session.run_record", 1, runJ(r.session, r.run, "migrate the ledger", "queued", "", 1, r.created, ts,
			"latest_checkpoint", J{"checkpoint_id", id, "run_id", r.run, "sequence", step, "node", "ModelResponse", "created_at", jz(ts)})),
		col(ts), r.session, r.run)
}

// A live Starweaver run (a queued run record, checkpoints for steps 0–5
// with 7 150 tokens, no stream yet) shows its steps and tokens from its
// checkpoints, follows them as they land, and, when the stretch commits
// its stream (commit_run_evidence), shows the stream's count: the same
// turns, never added to the checkpoints' count. Its state stays running
// with liveness unknown (running?): Starweaver 0.7 records no lease.
func TestLiveRunCountsFromCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sw.db")
	f := newDB(t, path, false)
	const run = "run_5a1e0c3d-9b7f-4e21-8c4d-1f2e3a4b5c6d"
	r := newLiveRun(f, run)
	totals := []int{0, 1200, 2400, 3700, 5300, 7150, 8400}
	for step := 0; step <= 5; step++ {
		r.checkpointAt(step, totals[step])
	}
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cur, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runmodel.Load(ctx, store.Complete(s), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := func(when string, steps int, tokens int64) {
		t.Helper()
		if got := m.Agent(run); got != (runmodel.Counts{Steps: steps, Tokens: tokens, Known: true}) {
			t.Errorf("%s: counts %+v, want %d steps and %d tokens", when, got, steps, tokens)
		}
		if st := m.State(run, time.Now()); st != store.StateUnknown {
			t.Errorf("%s: state %v, want running? (no liveness recorded)", when, st)
		}
	}
	want("loaded", 5, 7150)

	refresh := func() {
		t.Helper()
		for {
			ch, next, err := s.Changes(ctx, cur)
			if err != nil {
				t.Fatal(err)
			}
			m.Apply(ch, time.Now())
			cur = next
			if !ch.More {
				return
			}
		}
	}
	r.checkpointAt(6, totals[6])
	refresh()
	want("a checkpoint landed", 6, 8400)

	// The stretch commits: its six turns' responses, the same tokens, and
	// the run record, in one transaction (commit_run_evidence).
	f.exec("BEGIN")
	for step := 1; step <= 6; step++ {
		d := totals[step] - totals[step-1]
		r.stream(1, response(step, run, t0.Add(time.Duration(step)*time.Second), "stop", usageJ(d-d/10, 0, 0, d/10), textPart("turn")))
	}
	f.exec("UPDATE run_records SET record = ?, updated_at = ? WHERE session_id = ? AND run_id = ?",
		env("starweaver.session.run_record", 1, runJ(sessA, run, "migrate the ledger", "waiting", "", 1, t0, t0.Add(time.Minute))),
		col(t0.Add(time.Minute)), sessA, run)
	f.exec("COMMIT")
	refresh()
	if got := m.Agent(run); got != (runmodel.Counts{Steps: 6, Tokens: 8400, Known: true}) {
		t.Errorf("stretch committed: counts %+v, want 6 steps and 8400 tokens", got)
	}
}
