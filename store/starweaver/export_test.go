package starweaver

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BuildV07 writes the 0.7 scenario for the package's external tests (the
// explorer-and-CLI agreement check), which cannot reach the generator.
func BuildV07(t testing.TB, dir string) string { return buildV07(t, dir) }

// BuildHostile writes a database with one session and two runs (a run and
// its subagent) per string, the string in every text they carry.
func BuildHostile(t testing.TB, dir string, corpus []string) string {
	t.Helper()
	path := filepath.Join(dir, "starweaver.sqlite")
	f := newDB(t, path, false)
	statuses := []string{"waiting", "completed", "failed", "running", "cancelled"}
	for i, s := range corpus {
		sess := fmt.Sprintf("session_%08x-0000-4000-8000-%012x", i, i)
		run := fmt.Sprintf("run_%08x-0000-4000-8000-%012x", i, i)
		sub := fmt.Sprintf("run_%08x-1111-4000-8000-%012x", i, i)
		ts := t0.Add(time.Duration(i) * time.Minute)
		f.session(sess, 1, J{"session_id", sess, "title", s, "workspace", s, "profile", "general", "status", "active",
			"head_run_id", run, "created_at", jz(ts), "updated_at", jz(ts)}, ts, ts)
		st := statuses[i%len(statuses)]
		r := f.run(sess, run, 1, 1, runJ(sess, run, s, st, s, 1, ts, ts.Add(time.Second)), ts, ts.Add(time.Second))
		call := fmt.Sprintf("toolu_%04dhostile", i)
		args := J{"content", s, "path", s}
		r.stream(1, J{"kind", "run_start", "run_id", run, "conversation_id", "conv_" + run[4:]})
		r.stream(1, J{"kind", "model_request", "step", 1})
		r.stream(1, response(1, run, ts.Add(2*time.Second), "tool_calls", usageJ(100+i, 0, 0, 10), textPart(s), callPart(call, "write_file", args)))
		r.stream(1, toolCallEv(1, call, "write_file", args))
		r.stream(1, toolReturnEv(1, call+"r", "read_file", s))
		r.stream(1, hitlReturn(1, call, "write_file", "approval_required", J{"reason", s}))
		r.stream(1, J{"kind", "suspended", "node", "tool_return", "reason", s})
		if st == "waiting" {
			r.approval("approval_"+run+"_"+call, call, "write_file", args, "pending", nil, ts, ts)
			r.deferred(1, "deferred_"+run+"_"+call, call+"d", s, args, s, ts)
		}
		r.display("TEXT_MESSAGE_CONTENT", J{"delta", s, "message_id", "m", "part_index", 0, "part_kind", "text"}, s, ts)
		c := f.run(sess, sub, 1, 2, runJ(sess, sub, s, "completed", s, 2, ts, ts.Add(3*time.Second), "parent_run_id", run, "parent_task_id", s),
			ts, ts.Add(3*time.Second))
		c.stream(1, J{"kind", "run_start", "run_id", sub, "conversation_id", "conv_" + sub[4:]})
		c.stream(1, response(1, sub, ts.Add(3*time.Second), "stop", usageJ(50, 0, 0, 5), textPart(s)))
		c.stream(1, J{"kind", "run_complete", "run_id", sub, "output", s})
	}
	f.close()
	return path
}
