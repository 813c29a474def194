package starweaver

// The fixture generator: Starweaver session databases built from the format
// notes (docs/formats/starweaver.md: migrations, tables, record envelopes,
// payload shapes, and the 0.15 variant).
// Nothing binary is committed; every test builds its own file.

import (
	"database/sql"
	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/internal/testkit/foreign"
	"github.com/vigil-run/vigil/internal/testkit/swfixture"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The generic parts live in internal/testkit/swfixture (tests elsewhere write
// Starweaver databases too).
type (
	J = swfixture.J
	A = swfixture.A
)

func mj(v any) []byte { return swfixture.MJ(v) }
func env(schema string, version int, payload any) string {
	return swfixture.Env(schema, version, payload)
}
func fnv1a64(s string) string { return swfixture.Checksum(s) }

var (
	migrationSQL  = swfixture.MigrationSQL
	migrationRows = swfixture.MigrationRows
	migrations015 = swfixture.Migrations015
)

// Times: JSON carries the Z form, relational columns the +00:00 form
// (docs/formats/starweaver.md, "Timestamps").
var t0 = time.Date(2026, 7, 13, 9, 0, 0, 0, time.UTC)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, "2026-07-13T"+s+"Z")
	if err != nil {
		panic(err)
	}
	return t
}
func jz(t time.Time) string  { return formatTS(t, "Z") }
func col(t time.Time) string { return formatTS(t, "+00:00") }

// fx builds one database.
type fx struct {
	t    testing.TB
	db   *sql.DB
	path string
	// party, when set, writes every statement in a process of its own
	// (a foreign C-SQLite writer); db is then used only to read.
	party *foreign.Party
}

// newDB creates a Starweaver database through migration 4 (and, with v015,
// through 19), in WAL mode with foreign keys on, as Starweaver opens it.
func newDB(t testing.TB, path string, v015 bool) *fx {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitex.DSN(path, "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	sqlitex.Pin(db)
	f := &fx{t: t, db: db, path: path}
	f.exec("PRAGMA journal_mode=WAL")
	f.exec(`CREATE TABLE IF NOT EXISTS starweaver_schema_migrations (
    id TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    checksum TEXT,
    applied_at TEXT NOT NULL
)`)
	applied := t0.Add(-time.Second)
	for i, m := range migrationRows {
		f.exec(migrationSQL[i])
		text := migrationSQL[i]
		if m[2] != "" {
			text += "\nhook:" + m[2]
		}
		applied = applied.Add(1234567 * time.Nanosecond)
		f.exec("INSERT INTO starweaver_schema_migrations (id, description, checksum, applied_at) VALUES (?, ?, ?, ?)",
			m[0], m[1], fnv1a64(text), col(applied))
	}
	if v015 {
		for _, m := range migrations015 {
			f.exec(m.SQL)
			applied = applied.Add(1234567 * time.Nanosecond)
			f.exec("INSERT INTO starweaver_schema_migrations (id, description, checksum, applied_at) VALUES (?, ?, ?, ?)",
				m.ID, m.Desc, fnv1a64(m.SQL), col(applied))
		}
	}
	return f
}

func (f *fx) exec(q string, args ...any) {
	f.t.Helper()
	if f.party != nil {
		f.party.MustExec(f.t, f.path, inline(f.t, q, args))
		return
	}
	if _, err := f.db.Exec(q, args...); err != nil {
		f.t.Fatalf("%v\n%s", err, q)
	}
}

func (f *fx) close() {
	f.t.Helper()
	if err := f.db.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// ---- the scenario (ids in Starweaver's shapes: docs/formats/starweaver.md) ----

const (
	sessA = "session_8b5ac991-e588-4a84-8555-ec914a07ba58"
	sessB = "session_2c6f0e2a-4b1d-4e8f-9a77-1d2b3c4d5e6f"
	sessC = "session_9f0e1d2c-3b4a-4596-8877-665544332211"

	runR1 = "run_53cd765f-3fe6-4588-9a06-0dd1ae2da28a" // waiting, continued by R2; approval approved
	runR2 = "run_08b58937-8142-4bc8-97b0-fb4a765f9927" // continuation, waiting; approval pending, deferred waiting, claim
	runR3 = "run_e2f9414d-aa10-4d2c-a52c-f3e6ae247ce1" // continuation of R2, running; delegates to S1
	runS1 = "run_d7a31c55-0b8e-4c1f-9d2a-6e5f4a3b2c1d" // subagent of R3, completed
	runS2 = "run_c1f0e9d8-7a6b-4c5d-8e4f-3a2b1c0d9e8f" // subagent of S1: no stream of its own, merged into S1's
	runR4 = "run_1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9" // session B: legacy bare records, completed
	runR5 = "run_2d3e4f50-6172-4839-94a5-b6c7d8e9f0a1" // session B: waiting; two approvals and a deferred tool pending
	runR6 = "run_424f511c-b4a1-4410-9c11-bedd2ff0d3c1" // session C: failed
	runR7 = "run_3e4f5061-7283-4940-a5b6-c7d8e9f0a1b2" // session C: cancelled

	convA = "conv_f104959d-8a9c-4613-8ec6-114387cd8d05"

	apprR1 = "approval_" + runR1 + "_toolu_01bpMyt24NkYt8wDp3fNXvH8"
	apprR2 = "approval_" + runR2 + "_toolu_01RAWnymJGUF3K6va7WU3con"
	apprP1 = "approval_" + runR5 + "_toolu_01P1shellXa9"
	apprP2 = "approval_" + runR5 + "_toolu_01P2editXb8"
	apprS1 = "approval_" + runS1 + "_toolu_01S1grep"
	defR2  = "deferred_" + runR2 + "_toolu_01GDjvo193YD9UUCVT34MoL2"
	defR5  = "deferred_" + runR5 + "_toolu_01D2ciXc7"
)

func usageJ(in, cw, cr, out int) J {
	return J{"requests", 1, "input_tokens", in, "cache_write_tokens", cw, "cache_read_tokens", cr, "output_tokens", out, "total_tokens", in + out, "tool_calls", 0}
}

// response is a model_response event.
func response(step int, run string, ts time.Time, finish string, u J, parts ...J) J {
	ps := A{}
	for _, p := range parts {
		ps = append(ps, p)
	}
	return J{"kind", "model_response", "step", step, "response", J{
		"parts", ps, "usage", u, "model_name", "claude-sonnet-4-5-20250929",
		"provider", J{"name", "anthropic", "response_id", "msg_" + strings.ReplaceAll(run[4:16], "-", "")},
		"finish_reason", finish, "timestamp", jz(ts), "run_id", run, "conversation_id", convA}}
}

func textPart(s string) J { return J{"kind", "text", "text", s} }
func callPart(id, name string, args J) J {
	return J{"kind", "tool_call", "id", id, "name", name, "arguments", args}
}
func toolCallEv(step int, id, name string, args J) J {
	return J{"kind", "tool_call", "step", step, "call", J{"id", id, "name", name, "arguments", args}}
}
func toolReturnEv(step int, id, name string, content any) J {
	return J{"kind", "tool_return", "step", step, "tool_return", J{"tool_call_id", id, "name", name, "content", content, "is_error", false}}
}

// hitlReturn is a tool return that asks for a human: approval_required or
// call_deferred (a ToolReturnPart whose metadata.control_flow says which).
func hitlReturn(step int, id, name, flow string, payload J) J {
	key := "approval"
	if flow == "call_deferred" {
		key = "deferred"
	}
	return J{"kind", "tool_return", "step", step, "tool_return", J{"tool_call_id", id, "name", name,
		"content", J{"error", "tool " + name + " requires approval", "kind", flow, "success", false}, "is_error", true,
		"metadata", J{key, payload, "control_flow", flow, "error_kind", flow, "how_to_fix", "wait for a human", "message", "tool " + name + " " + flow, "retryable", false}}}
}

// runB writes one run's rows.
type runB struct {
	f       *fx
	session string
	run     string
	seq     int64 // next stream sequence
	dseq    int64 // next display sequence
}

func (f *fx) session(id string, version int, payload J, created, updated time.Time) {
	f.exec("INSERT INTO session_records (session_id, record, created_at, updated_at) VALUES (?, ?, ?, ?)",
		id, env("starweaver.session.session_record", version, payload), col(created), col(updated))
}

func (f *fx) run(session, run string, version int, seqNo int64, payload J, created, updated time.Time) *runB {
	f.exec("INSERT INTO run_records (session_id, run_id, record, sequence_no, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
		session, run, env("starweaver.session.run_record", version, payload), seqNo, col(created), col(updated))
	return &runB{f: f, session: session, run: run}
}

// runJ is a RunRecord (v1 field order; v2 adds revision after run_id and
// config_snapshot/terminal_error in their places, see v015 below).
func runJ(session, run, prompt, status, preview string, seqNo int64, created, updated time.Time, extra ...any) J {
	j := J{"session_id", session, "run_id", run, "conversation_id", "conv_" + run[4:],
		"input", A{J{"kind", "text", "text", prompt}}, "status", status}
	if preview != "" {
		j = append(j, "output_preview", preview)
	}
	j = append(j, "stream_cursors", A{J{"position", J{"family", "raw_runtime", "scope", "run:" + run, "sequence", 3}, "created_at", jz(updated)}},
		"sequence_no", seqNo)
	j = append(j, extra...)
	j = append(j, "trigger_type", "cli", "profile", "general", "created_at", jz(created), "updated_at", jz(updated))
	return j
}

// stream appends a stream record (version 0 writes it bare).
func (r *runB) stream(version int, ev J, source ...J) {
	p := J{"sequence", r.seq}
	if len(source) > 0 {
		p = append(p, "source", source[0])
	}
	p = append(p, "event", ev)
	r.f.exec("INSERT INTO stream_records (session_id, run_id, sequence_no, record) VALUES (?, ?, ?, ?)",
		r.session, r.run, r.seq, env("starweaver.runtime.stream_record", version, p))
	r.seq++
}

// streamRaw appends a record column as given (an unknown schema).
func (r *runB) streamRaw(record string) {
	r.f.exec("INSERT INTO stream_records (session_id, run_id, sequence_no, record) VALUES (?, ?, ?, ?)",
		r.session, r.run, r.seq, record)
	r.seq++
}

func (r *runB) checkpoint(id, node string, step int, ts time.Time) {
	p := J{"checkpoint_id", id, "run_id", r.run, "conversation_id", "conv_" + r.run[4:], "node", node, "run_step", step,
		"resume", J{"node", node, "status", "running", "run_step", step,
			"cursor", J{"model_request_attempt", 1, "output_validation_attempt", 0, "stream_cursor", r.seq, "message_cursor", step * 2},
			"usage", usageJ(0, 0, 0, 0), "pending_approval_count", 0, "deferred_tool_count", 0},
		"state", J{"run_id", r.run, "conversation_id", "conv_" + r.run[4:], "message_history", A{}, "usage", usageJ(0, 0, 0, 0), "run_step", step, "status", "running"}}
	r.f.exec("INSERT INTO checkpoint_records (session_id, run_id, sequence_no, checkpoint_id, record, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		r.session, r.run, step, id, env("starweaver.runtime.checkpoint", 1, p), col(ts))
}

// display appends a DisplayMessage wrapped in its ReplayEvent.
func (r *runB) display(typ string, payload J, preview string, ts time.Time) {
	msg := J{"kind", "display_message", "schema", "starweaver.display.v1", "sequence", r.dseq, "session_id", r.session, "run_id", r.run,
		"timestamp", jz(ts), "type", typ}
	if payload != nil {
		msg = append(msg, "payload", payload)
	}
	if preview != "" {
		msg = append(msg, "preview", preview)
	}
	msg = append(msg, "visibility", "public", "metadata", J{"cli_run_policy", J{"hitl", "defer"}})
	rec := env("starweaver.stream.replay_event", 1, J{"scope", "run:" + r.run, "sequence", r.dseq, "timestamp", jz(ts), "event", msg})
	r.f.exec("INSERT INTO display_message_records (scope, sequence_no, record, created_at) VALUES (?, ?, ?, ?)", "run:"+r.run, r.dseq, rec, col(ts))
	r.dseq++
}

func (r *runB) approval(id, callID, tool string, args J, status string, decision J, created, updated time.Time, revision ...int) {
	p := J{"approval_id", id}
	if len(revision) > 0 {
		p = append(p, "revision", revision[0])
	}
	p = append(p, "session_id", r.session, "run_id", r.run, "action_id", callID, "action_name", tool,
		"request", J{"arguments", args, "reason", tool + " requires approval", "toolset", "local"})
	if len(revision) > 0 {
		p = append(p, "reviewed_arguments", args)
	}
	p = append(p, "status", status)
	if decision != nil {
		p = append(p, "decision", decision)
	}
	p = append(p, "created_at", jz(created), "updated_at", jz(updated), "metadata", J{"policy", "defer"})
	r.f.exec("INSERT INTO approval_records (session_id, run_id, approval_id, record, updated_at) VALUES (?, ?, ?, ?, ?)",
		r.session, r.run, id, env("starweaver.session.approval_record", 1, p), col(updated))
}

func (r *runB) deferred(version int, id, callID, tool string, args J, reason string, ts time.Time) {
	p := J{"deferred_id", id, "session_id", r.session, "run_id", r.run, "tool_call_id", callID, "tool_name", tool,
		"request", J{"arguments", args, "reason", reason}, "status", "waiting",
		"created_at", jz(ts), "updated_at", jz(ts), "metadata", J{"policy", "defer"}}
	r.f.exec("INSERT INTO deferred_tool_records (session_id, run_id, deferred_id, record, updated_at) VALUES (?, ?, ?, ?, ?)",
		r.session, r.run, id, env("starweaver.session.deferred_tool_record", version, p), col(ts))
}

func (r *runB) claim(id, state string, ts time.Time) {
	p := J{"claim_id", id, "session_id", r.session, "run_id", r.run, "state", state, "created_at", jz(ts)}
	r.f.exec("INSERT INTO hitl_resume_claims (session_id, run_id, claim_id, record, created_at) VALUES (?, ?, ?, ?, ?)",
		r.session, r.run, id, env("starweaver.session.hitl_resume_claim", 1, p), col(ts))
}

// committed writes what commit_run_evidence adds for a finished stretch:
// the run's context, its environment and the evidence digest.
func (r *runB) committed(ts time.Time) {
	r.f.exec("INSERT INTO run_context_records (session_id, run_id, record, updated_at) VALUES (?, ?, ?, ?)", r.session, r.run,
		env("starweaver.context.resumable_state", 1, J{"agent_id", "main", "run_id", r.run, "session_id", r.session, "usage", usageJ(100, 0, 0, 10)}), col(ts))
	r.f.exec("INSERT INTO run_environment_records (session_id, run_id, record, updated_at) VALUES (?, ?, ?, ?)", r.session, r.run,
		string(mj(J{"schema", "starweaver.environment.state", "version", 1, "payload", J{"provider", "local", "reference", "/work"}})), col(ts))
	r.f.exec("INSERT INTO run_evidence_commits (session_id, run_id, digest, created_at) VALUES (?, ?, ?, ?)", r.session, r.run,
		strings.Repeat("ab", 32), col(ts))
}

// buildV07 writes the 0.7.0 scenario and closes the file (the WAL is
// checkpointed into it). It returns the path.
func buildV07(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "starweaver.sqlite")
	f := newDB(t, path, false)

	// Session A: the billing migration.
	f.session(sessA, 1, J{"session_id", sessA, "title", "SWACC-SESSION-1: billing service ORM migration", "workspace", "/work/billing",
		"profile", "general", "status", "active",
		"state", J{"agent_id", "main", "run_id", runR2, "conversation_id", "conv_4d4f8747-5988-425f-979a-e59beb76e22e",
			"message_history", A{J{"kind", "request", "parts", A{J{"kind", "user_prompt", "content", A{J{"kind", "text", "text", "SWACC-RUN-1: inventory the billing service and record what needs migrating"}}}},
				"timestamp", "2026-07-13T09:00:00.412550911Z", "run_id", runR1, "conversation_id", convA}},
			"usage", J{"requests", 3, "input_tokens", 13909, "cache_write_tokens", 3890, "cache_read_tokens", 8350, "output_tokens", 468, "total_tokens", 14377, "tool_calls", 0},
			"started_at", "2026-07-13T09:00:00.412550911Z"},
		"stream_cursors", A{J{"position", J{"family", "raw_runtime", "scope", "run:" + runR3, "sequence", 6}, "created_at", "2026-07-13T09:06:30.733015120Z"}},
		"head_run_id", runR3, "head_success_run_id", runS1, "active_run_id", runR3,
		"created_at", "2026-07-13T09:00:00.100227004Z", "updated_at", "2026-07-13T09:06:30.733015120Z"},
		at("09:00:00.100227004"), at("09:06:30.733015120"))

	// R1: inventory; parked on an edit_file approval, since approved; the
	// CLI's resume continued it in R2 and left it waiting.
	r1 := f.run(sessA, runR1, 1, 1, runJ(sessA, runR1, "SWACC-RUN-1: inventory the billing service and record what needs migrating",
		"waiting", "", 1, at("09:00:00.412550911"), at("09:00:12.611020774"),
		"latest_checkpoint", J{"checkpoint_id", "ckpt_a1b2c3d4-0000-4000-8000-000000000002", "run_id", runR1, "sequence", 2, "node", "ToolReturn", "stream_cursor", 11, "created_at", "2026-07-13T09:00:12.611020774Z"}),
		at("09:00:00.412550911"), at("09:00:12.611020774"))
	r1.stream(1, J{"kind", "run_start", "run_id", runR1, "conversation_id", convA})
	r1.stream(1, J{"kind", "node_start", "node", "run_start", "step", 0, "status", "running"})
	r1.stream(1, J{"kind", "model_request", "step", 1})
	r1.stream(1, response(1, runR1, at("09:00:03.118004552"), "tool_calls", usageJ(4218, 3890, 0, 96),
		textPart("I'll start with the billing README."), callPart("toolu_01YzSJzNMsuuLh4ijXN4s8vp", "read_file", J{"path", "billing/README.md"})))
	r1.stream(1, toolCallEv(1, "toolu_01YzSJzNMsuuLh4ijXN4s8vp", "read_file", J{"path", "billing/README.md"}))
	r1.stream(1, toolReturnEv(1, "toolu_01YzSJzNMsuuLh4ijXN4s8vp", "read_file", "# Billing\n\nModules: invoices, ledger, payouts.\nLegacy ORM: yes (ledger)."))
	r1.stream(1, J{"kind", "checkpoint", "node", "tool_return", "step", 1})
	r1.stream(1, J{"kind", "model_request", "step", 2})
	r1.stream(1, response(2, runR1, at("09:00:10.5"), "tool_calls", usageJ(4790, 0, 3890, 142),
		textPart("The ledger still uses the legacy ORM; noting it.\nNext: the migration file."),
		callPart("toolu_01bpMyt24NkYt8wDp3fNXvH8", "edit_file", J{"new", "ledger: move to the new ORM", "old", "TODO", "path", "billing/MIGRATION.md"})))
	r1.stream(1, toolCallEv(2, "toolu_01bpMyt24NkYt8wDp3fNXvH8", "edit_file", J{"new", "ledger: move to the new ORM", "old", "TODO", "path", "billing/MIGRATION.md"}))
	r1.stream(1, hitlReturn(2, "toolu_01bpMyt24NkYt8wDp3fNXvH8", "edit_file", "approval_required", J{"reason", "edit_file requires approval"}))
	r1.stream(1, J{"kind", "suspended", "node", "tool_return", "reason", "hitl_control_flow"})
	r1.checkpoint("ckpt_a1b2c3d4-0000-4000-8000-000000000001", "tool_return", 1, at("09:00:12.611020774"))
	r1.checkpoint("ckpt_a1b2c3d4-0000-4000-8000-000000000002", "tool_return", 2, at("09:00:12.611020774"))
	r1.approval(apprR1, "toolu_01bpMyt24NkYt8wDp3fNXvH8", "edit_file", J{"new", "ledger: move to the new ORM", "old", "TODO", "path", "billing/MIGRATION.md"},
		"approved", J{"status", "approved", "decided_by", "starweaver-cli", "decided_at", "2026-07-13T09:04:30.518446209Z", "reason", "SWACC reviewer approved the ledger note"},
		at("09:00:11.402913"), at("09:04:30.518446209"))
	r1.display("RUN_STARTED", J{"conversation_id", convA}, "run started", at("09:00:00.5"))
	r1.display("TEXT_MESSAGE_CONTENT", J{"delta", "I'll start with the billing README.", "message_id", "model-response-3-0", "part_index", 0, "part_kind", "text"}, "I'll start with the billing README.", at("09:00:03.2"))
	r1.display("TOOL_CALL_START", J{"name", "read_file", "tool_call_id", "toolu_01YzSJzNMsuuLh4ijXN4s8vp", "tool_name", "read_file"}, "tool call read_file", at("09:00:03.3"))
	r1.display("APPROVAL_REQUESTED", J{"approval_id", apprR1, "request", J{"reason", "edit_file requires approval"}, "tool_call_id", "toolu_01bpMyt24NkYt8wDp3fNXvH8", "tool_name", "edit_file"}, "approval requested for edit_file", at("09:00:11.5"))
	r1.display("RUN_CANCELLED", J{"node", "tool_return", "reason", "hitl_control_flow"}, "hitl_control_flow", at("09:00:12.6"))
	r1.committed(at("09:00:12.611020774"))

	// R2: the continuation, parked on write_file and CI;
	// an SDK resume claims it now.
	r2 := f.run(sessA, runR2, 1, 2, J{"session_id", sessA, "run_id", runR2, "conversation_id", "conv_4d4f8747-5988-425f-979a-e59beb76e22e",
		"input", A{J{"kind", "text", "text", "SWACC-RUN-2: continue the migration\n\nResuming from run " + runR1 + " with any persisted approval and deferred-tool decisions."}},
		"status", "waiting", "output_preview", "Writing the migration notes and starting CI.",
		"latest_checkpoint", J{"checkpoint_id", "ckpt_e1e8156e-7729-422a-935f-50c30b012b3c", "run_id", runR2, "sequence", 1, "node", "ToolReturn", "stream_cursor", 9, "created_at", "2026-07-13T09:05:20.671404512Z"},
		"stream_cursors", A{J{"position", J{"family", "raw_runtime", "scope", "run:" + runR2, "sequence", 10}, "created_at", "2026-07-13T09:05:20.660000002Z"},
			J{"position", J{"family", "display", "scope", "run:" + runR2, "sequence", 19}, "created_at", "2026-07-13T09:05:20.660000002Z"}},
		"sequence_no", 2, "restore_from_run_id", runR1, "trigger_type", "cli", "profile", "general",
		"created_at", "2026-07-13T09:05:00.301557090Z", "updated_at", "2026-07-13T09:05:20.671404512Z"},
		at("09:05:00.301557090"), at("09:05:20.671404512"))
	r2.stream(1, J{"kind", "run_start", "run_id", runR2, "conversation_id", "conv_4d4f8747-5988-425f-979a-e59beb76e22e"})
	r2.stream(1, J{"kind", "model_request", "step", 1})
	r2.stream(1, response(1, runR2, at("09:05:05.2"), "tool_calls", usageJ(5120, 0, 3890, 210),
		textPart("Writing the migration notes and starting CI."),
		callPart("toolu_01RAWnymJGUF3K6va7WU3con", "write_file", J{"content", "# Notes\nledger → new ORM", "path", "SWACC/notes.md"}),
		callPart("toolu_01GDjvo193YD9UUCVT34MoL2", "run_ci_pipeline", J{"pipeline", "billing-migration", "ref", "swacc/ledger-orm"})))
	r2.stream(1, toolCallEv(1, "toolu_01RAWnymJGUF3K6va7WU3con", "write_file", J{"content", "# Notes\nledger → new ORM", "path", "SWACC/notes.md"}))
	r2.stream(1, toolCallEv(1, "toolu_01GDjvo193YD9UUCVT34MoL2", "run_ci_pipeline", J{"pipeline", "billing-migration", "ref", "swacc/ledger-orm"}))
	r2.stream(1, hitlReturn(1, "toolu_01RAWnymJGUF3K6va7WU3con", "write_file", "approval_required", J{"reason", "write_file requires approval"}))
	r2.stream(1, hitlReturn(1, "toolu_01GDjvo193YD9UUCVT34MoL2", "run_ci_pipeline", "call_deferred", J{"reason", "CI runs on the external build farm"}))
	r2.stream(1, J{"kind", "checkpoint", "node", "tool_return", "step", 1})
	r2.stream(1, J{"kind", "suspended", "node", "tool_return", "reason", "hitl_control_flow"})
	r2.checkpoint("ckpt_e1e8156e-7729-422a-935f-50c30b012b3c", "tool_return", 1, at("09:05:20.671404512"))
	r2.approval(apprR2, "toolu_01RAWnymJGUF3K6va7WU3con", "write_file", J{"content", "# Notes\nledger → new ORM", "path", "SWACC/notes.md"},
		"pending", nil, at("09:05:19.0"), at("09:05:19.0"))
	r2.deferred(1, defR2, "toolu_01GDjvo193YD9UUCVT34MoL2", "run_ci_pipeline", J{"pipeline", "billing-migration", "ref", "swacc/ledger-orm"},
		"CI runs on the external build farm", at("09:05:19.118301250"))
	r2.display("TOOL_CALL_ARGS", J{"arguments", J{"path", "SWACC/notes.md"}, "delta", `{"path":"SWACC/notes.md"}`, "name", "write_file", "tool_call_id", "toolu_01RAWnymJGUF3K6va7WU3con", "tool_name", "write_file"},
		`{"path":"SWACC/notes.md"}`, at("09:05:20.600016"))
	r2.display("APPROVAL_REQUESTED", J{"approval_id", apprR2, "request", J{"reason", "write_file requires approval"}, "tool_call_id", "toolu_01RAWnymJGUF3K6va7WU3con", "tool_name", "write_file"},
		"approval requested for write_file", at("09:05:20.61"))
	r2.display("APPROVAL_REQUESTED", J{"control_flow", "call_deferred", "deferred_id", defR2, "request", J{"reason", "CI runs on the external build farm"}, "tool_call_id", "toolu_01GDjvo193YD9UUCVT34MoL2", "tool_name", "run_ci_pipeline"},
		"tool call run_ci_pipeline deferred", at("09:05:20.62"))
	r2.committed(at("09:05:20.671404512"))
	r2.claim("claim-7f3a", "preflight", at("09:06:02.004511870"))

	// R3: the SDK continuation of R2, running; it delegated to S1, whose
	// records are merged into R3's stream.
	r3 := f.run(sessA, runR3, 1, 3, runJ(sessA, runR3, "SWACC-RUN-3: finish the migration after review\n\nResuming from run "+runR2+" with any persisted approval and deferred-tool decisions.",
		"running", "", 3, at("09:06:05.1"), at("09:06:30.733015120"), "restore_from_run_id", runR2), at("09:06:05.1"), at("09:06:30.733015120"))
	r3.stream(1, J{"kind", "run_start", "run_id", runR3, "conversation_id", "conv_" + runR3[4:]})
	r3.stream(1, J{"kind", "model_request", "step", 1})
	r3.stream(1, response(1, runR3, at("09:06:08"), "tool_calls", usageJ(6000, 0, 3890, 120),
		textPart("Delegating the payouts check to a subagent."), callPart("toolu_01R3delegate", "delegate_task", J{"agent", "explorer", "task", "check payouts for ORM use"})))
	r3.stream(1, toolCallEv(1, "toolu_01R3delegate", "delegate_task", J{"agent", "explorer", "task", "check payouts for ORM use"}))
	src := J{"kind", "subagent", "agent_id", "agent-explorer", "agent_name", "explorer", "task_id", "task_5f6e7d8c-0000-4000-8000-00000000000a", "run_id", runS1, "parent_run_id", runR3, "source_sequence", 1}
	r3.stream(1, J{"kind", "node_start", "node", "prepare_model_request", "step", 1, "status", "running"}, src)
	src2 := append(J{}, src...)
	src2[len(src2)-1] = 2
	r3.stream(1, response(1, runS1, at("09:06:11"), "tool_calls", usageJ(1500, 0, 0, 40), textPart("Searching payouts (merged copy).")), src2)

	// S1: the subagent, with a stream of its own; it delegated to S2,
	// whose records exist only merged into S1's stream.
	s1 := f.run(sessA, runS1, 1, 4, runJ(sessA, runS1, "check payouts for ORM use", "completed", "payouts has no ORM use.", 4, at("09:06:09"), at("09:06:20"),
		"parent_run_id", runR3, "parent_task_id", "task_5f6e7d8c-0000-4000-8000-00000000000a"), at("09:06:09"), at("09:06:20"))
	s1.stream(1, J{"kind", "run_start", "run_id", runS1, "conversation_id", "conv_" + runS1[4:]})
	s1.stream(1, J{"kind", "model_request", "step", 1})
	s1.stream(1, response(1, runS1, at("09:06:11"), "tool_calls", usageJ(1500, 0, 0, 40), textPart("Searching payouts."),
		callPart("toolu_01S1grep", "grep", J{"path", "payouts", "pattern", "orm"})))
	s1.stream(1, toolReturnEv(1, "toolu_01S1grep", "grep", "no matches"))
	s1.stream(1, response(2, runS1, at("09:06:13"), "tool_calls", usageJ(1600, 0, 1500, 35), textPart("Asking a helper to double-check the ledger bridge."),
		callPart("toolu_01S1delegate", "delegate_task", J{"agent", "checker", "task", "check payouts/ledger"})))
	s2src := J{"kind", "subagent", "agent_id", "agent-checker", "agent_name", "checker", "task_id", "task_0a0b0c0d-0000-4000-8000-00000000000b", "run_id", runS2, "parent_run_id", runS1, "source_sequence", 2}
	s1.stream(1, response(1, runS2, at("09:06:15"), "stop", usageJ(800, 0, 0, 30), textPart("Checked payouts/ledger: clean.")), s2src)
	s1.stream(1, J{"kind", "run_complete", "run_id", runS2, "output", "clean"}, s2src)
	s1.stream(1, toolReturnEv(2, "toolu_01S1delegate", "delegate_task", "clean"))
	s1.stream(1, response(3, runS1, at("09:06:19"), "stop", usageJ(1700, 0, 1500, 25), textPart("payouts has no ORM use.")))
	s1.stream(1, J{"kind", "run_complete", "run_id", runS1, "output", "payouts has no ORM use."})
	s1.checkpoint("ckpt_5151aaaa-0000-4000-8000-000000000001", "run_complete", 3, at("09:06:20"))
	// Left pending when the subagent finished: nobody will read it now.
	s1.approval(apprS1, "toolu_01S1grep", "grep", J{"path", "payouts", "pattern", "orm"}, "pending", nil, at("09:06:12"), at("09:06:12"))
	s1.committed(at("09:06:20"))
	f.run(sessA, runS2, 1, 5, runJ(sessA, runS2, "check payouts/ledger", "completed", "clean", 5, at("09:06:14"), at("09:06:16"),
		"parent_run_id", runS1, "parent_task_id", "task_0a0b0c0d-0000-4000-8000-00000000000b"), at("09:06:14"), at("09:06:16"))

	// Session B: legacy bare records (v0) and a v2 envelope beside v1.
	f.session(sessB, 0, J{"session_id", sessB, "title", "SWACC-SESSION-2: payouts API review", "workspace", "/work/payouts", "status", "active",
		"state", J{"agent_id", "main"}, "created_at", "2026-07-13T10:00:00Z", "updated_at", "2026-07-13T10:06:00Z"}, at("10:00:00"), at("10:06:00"))
	r4 := f.run(sessB, runR4, 0, 1, runJ(sessB, runR4, "SWACC-RUN-4: review the payouts endpoints", "completed", "All payouts endpoints reviewed.", 1, at("10:00:00"), at("10:02:00")),
		at("10:00:00"), at("10:02:00"))
	r4.stream(0, J{"kind", "run_start", "run_id", runR4, "conversation_id", "conv_" + runR4[4:]})
	r4.stream(0, response(1, runR4, at("10:00:30"), "tool_calls", usageJ(3000, 0, 0, 80), textPart("Reviewing the payouts endpoints."),
		callPart("toolu_01R4read", "read_file", J{"path", "payouts/api.go"})))
	r4.stream(1, toolReturnEv(1, "toolu_01R4read", "read_file", "package payouts"))
	r4.stream(1, response(2, runR4, at("10:01:50"), "stop", usageJ(3500, 0, 2900, 60), textPart("All payouts endpoints reviewed.")))
	r4.stream(1, J{"kind", "run_complete", "run_id", runR4, "output", "All payouts endpoints reviewed."})
	r4.committed(at("10:02:00"))

	r5 := f.run(sessB, runR5, 1, 2, runJ(sessB, runR5, "SWACC-RUN-5: fix the payouts handler and run the tests", "waiting", "", 2, at("10:05:00"), at("10:06:00")),
		at("10:05:00"), at("10:06:00"))
	r5.stream(1, J{"kind", "run_start", "run_id", runR5, "conversation_id", "conv_" + runR5[4:]})
	r5.stream(1, J{"kind", "model_request", "step", 1})
	r5.stream(2, response(1, runR5, at("10:05:20"), "tool_calls", usageJ(4100, 0, 2900, 150), textPart("Running the payouts tests and fixing the handler."),
		callPart("toolu_01P1shellXa9", "run_shell", J{"command", "go test ./payouts/..."}),
		callPart("toolu_01P2editXb8", "edit_file", J{"new", "return err", "old", "panic(err)", "path", "payouts/handler.go"}),
		callPart("toolu_01D2ciXc7", "fetch_ci_status", J{"build", "b-1234"})))
	r5.streamRaw(env("starweaver.runtime.stream_record_v9", 1, J{"sequence", 3, "event", J{"kind", "model_response", "step", 9, "response", J{"parts", A{}, "usage", usageJ(99999, 0, 0, 1)}}}))
	r5.stream(1, hitlReturn(1, "toolu_01P1shellXa9", "run_shell", "approval_required", J{"reason", "run_shell requires approval"}))
	r5.stream(1, hitlReturn(1, "toolu_01P2editXb8", "edit_file", "approval_required", J{"reason", "edit_file requires approval"}))
	r5.stream(1, hitlReturn(1, "toolu_01D2ciXc7", "fetch_ci_status", "call_deferred", J{"reason", "the CI status comes from the build farm"}))
	r5.stream(1, J{"kind", "suspended", "node", "tool_return", "reason", "hitl_control_flow"})
	// The default projector turns the suspension into RUN_CANCELLED: the run
	// record (waiting) is the truth.
	r5.display("RUN_CANCELLED", J{"node", "tool_return", "reason", "hitl_control_flow"}, "hitl_control_flow", at("10:05:33"))
	r5.approval(apprP1, "toolu_01P1shellXa9", "run_shell", J{"command", "go test ./payouts/..."}, "pending", nil, at("10:05:30"), at("10:05:30"))
	r5.approval(apprP2, "toolu_01P2editXb8", "edit_file", J{"new", "return err", "old", "panic(err)", "path", "payouts/handler.go"}, "pending", nil, at("10:05:31"), at("10:05:31"))
	r5.deferred(0, defR5, "toolu_01D2ciXc7", "fetch_ci_status", J{"build", "b-1234"}, "the CI status comes from the build farm", at("10:05:32"))
	r5.committed(at("10:06:00"))

	// Session C: a provider outage (failed) and a cancelled retry.
	f.session(sessC, 1, J{"session_id", sessC, "title", "SWACC-FAIL: provider outage", "status", "active", "state", J{"agent_id", "main"},
		"created_at", "2026-07-13T10:00:05Z", "updated_at", "2026-07-13T10:10:00Z"}, at("10:00:05"), at("10:10:00"))
	r6 := f.run(sessC, runR6, 1, 1, runJ(sessC, runR6, "SWACC-RUN-6: summarise the outage", "failed", "SWACC-FAIL: provider returned 529 overloaded after 3 retries", 1,
		at("10:00:05"), at("10:00:09.377812909")), at("10:00:05"), at("10:00:09.377812909"))
	r6.stream(1, J{"kind", "run_start", "run_id", runR6, "conversation_id", "conv_" + runR6[4:]})
	r6.stream(1, J{"kind", "model_request", "step", 1})
	r6.stream(1, J{"kind", "run_failed", "run_id", runR6, "error_kind", "model_http", "message", "SWACC-FAIL: provider returned 529 overloaded after 3 retries"})
	f.exec("INSERT INTO replay_events (scope, sequence_no, record, created_at) VALUES (?, ?, ?, ?)", "run:"+runR6, 0,
		env("starweaver.stream.replay_event", 1, J{"scope", "run:" + runR6, "sequence", 0, "timestamp", "2026-07-13T10:00:09.377812909Z",
			"event", J{"kind", "terminal", "marker", J{"kind", "run_failed", "code", "model_http", "message", "SWACC-FAIL: provider returned 529 overloaded after 3 retries"}}}),
		col(at("10:00:09.377812909")))
	r6.committed(at("10:00:09.377812909"))
	r7 := f.run(sessC, runR7, 1, 2, runJ(sessC, runR7, "SWACC-RUN-7: try again", "cancelled", "user interrupt", 2, at("10:09:00"), at("10:10:00")),
		at("10:09:00"), at("10:10:00"))
	r7.stream(1, J{"kind", "run_start", "run_id", runR7, "conversation_id", "conv_" + runR7[4:]})
	r7.stream(1, J{"kind", "model_request", "step", 1})
	r7.stream(1, response(1, runR7, at("10:09:30"), "stop", usageJ(100, 0, 0, 10), textPart("Starting over.")))
	r7.stream(1, J{"kind", "run_cancelled", "run_id", runR7, "reason", "user interrupt"})
	f.close()
	return path
}

// ---- the 0.15.0 variant ----

const (
	sessD   = "session_d0d0d0d0-1111-4222-8333-444455556666"
	sessE   = "session_e0e0e0e0-1111-4222-8333-444455556666" // deleted
	runV1   = "run_a0000001-0000-4000-8000-000000000001"     // completed, v2
	runV2   = "run_a0000002-0000-4000-8000-000000000002"     // failed through the terminal projection
	runV3   = "run_a0000003-0000-4000-8000-000000000003"     // waiting, approval with revision
	runV4   = "run_a0000004-0000-4000-8000-000000000004"     // waiting, claimed (admitted)
	runV5   = "run_a0000005-0000-4000-8000-000000000005"     // in the deleted session
	apprV3  = "approval_" + runV3 + "_call_v3"
	apprV3q = "approval_" + runV3 + "_call_v3q"
	apprV4  = "approval_" + runV4 + "_call_v4"
	defV3   = "deferred_" + runV3 + "_call_v3d"
)

// runV2J is a v2 RunRecord: revision after run_id, terminal_error after
// output_preview, config_snapshot after profile.
func runV2J(session, run, prompt, status string, seqNo int64, created, updated time.Time, termErr J) J {
	j := J{"session_id", session, "run_id", run, "revision", 3, "conversation_id", "conv_" + run[4:],
		"input", A{J{"kind", "text", "text", prompt}}, "status", status}
	if status == "completed" {
		j = append(j, "output_preview", "done")
	}
	if termErr != nil {
		j = append(j, "terminal_error", termErr)
	}
	j = append(j, "sequence_no", seqNo, "trigger_type", "cli", "profile", "general",
		"config_snapshot", J{"generation", 2, "etag", "etag-1", "materialization_digest", "sha256:00"},
		"created_at", jz(created), "updated_at", jz(updated))
	return j
}

func sessionV2J(id, title, status string, fence J) J {
	return J{"session_id", id, "namespace_id", "local", "revision", 4, "deletion_fence", fence, "title", title,
		"workspace", J{"workspace_id", "legacy:sha256:" + strings.Repeat("0f", 32), "display_label", "/work/shop", "provenance_digest", "sha256:" + strings.Repeat("1e", 32)},
		"profile", "general", "status", status, "state", J{"agent_id", "main"},
		"created_at", "2026-07-20T08:00:00Z", "updated_at", "2026-07-20T08:30:00Z"}
}

func buildV015(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "starweaver.sqlite")
	f := newDB(t, path, true)
	d0 := time.Date(2026, 7, 20, 8, 0, 0, 0, time.UTC)
	f.session(sessD, 2, sessionV2J(sessD, "SWACC-015: shop checkout", "active", J{"state", "stable"}), d0, d0.Add(30*time.Minute))
	v1 := f.run(sessD, runV1, 2, 1, runV2J(sessD, runV1, "SWACC-V1: add the checkout test", "completed", 1, d0, d0.Add(time.Minute), nil), d0, d0.Add(time.Minute))
	v1.stream(1, response(1, runV1, d0.Add(30*time.Second), "stop", usageJ(2000, 0, 0, 50), textPart("Added the checkout test.")))
	v2 := f.run(sessD, runV2, 2, 2, runV2J(sessD, runV2, "SWACC-V2: deploy", "failed", 2, d0.Add(2*time.Minute), d0.Add(3*time.Minute),
		J{"code", "model_http", "message", "provider returned 529"}), d0.Add(2*time.Minute), d0.Add(3*time.Minute))
	v2.stream(1, J{"kind", "run_failed", "run_id", runV2, "error_kind", "model_http", "message", "provider returned 529"})
	v3 := f.run(sessD, runV3, 2, 3, runV2J(sessD, runV3, "SWACC-V3: tidy the cart", "waiting", 3, d0.Add(4*time.Minute), d0.Add(5*time.Minute), nil),
		d0.Add(4*time.Minute), d0.Add(5*time.Minute))
	v3.stream(1, response(1, runV3, d0.Add(4*time.Minute+10*time.Second), "tool_calls", usageJ(1200, 0, 0, 60), textPart("Tidying the cart."),
		callPart("call_v3", "write_file", J{"content", "x", "path", "cart.go"}), callPart("call_v3q", "ask_user_question", J{"question", "Keep the legacy cart?"}),
		callPart("call_v3d", "run_ci_pipeline", J{"pipeline", "shop"})))
	v3.approval(apprV3, "call_v3", "write_file", J{"content", "x", "path", "cart.go"}, "pending", nil, d0.Add(4*time.Minute+20*time.Second), d0.Add(4*time.Minute+20*time.Second), 1)
	v3.approval(apprV3q, "call_v3q", "ask_user_question", J{"question", "Keep the legacy cart?"}, "pending", nil, d0.Add(4*time.Minute+21*time.Second), d0.Add(4*time.Minute+21*time.Second), 1)
	v3.deferred(1, defV3, "call_v3d", "run_ci_pipeline", J{"pipeline", "shop"}, "CI runs elsewhere", d0.Add(4*time.Minute+22*time.Second))
	v3.display("DEFERRED_REQUESTED", J{"deferred_id", defV3, "request", J{"reason", "CI runs elsewhere"}, "tool_call_id", "call_v3d", "tool_name", "run_ci_pipeline"},
		"tool call run_ci_pipeline deferred", d0.Add(4*time.Minute+22*time.Second))
	v4 := f.run(sessD, runV4, 2, 4, runV2J(sessD, runV4, "SWACC-V4: refund flow", "waiting", 4, d0.Add(6*time.Minute), d0.Add(7*time.Minute), nil),
		d0.Add(6*time.Minute), d0.Add(7*time.Minute))
	v4.approval(apprV4, "call_v4", "run_shell", J{"command", "make refund"}, "pending", nil, d0.Add(6*time.Minute+5*time.Second), d0.Add(6*time.Minute+5*time.Second), 1)
	v4.claim("claim-admitted-1", "admitted", d0.Add(8*time.Minute))
	f.session(sessE, 2, sessionV2J(sessE, "SWACC-015: deleted", "deleted",
		J{"state", "deleted", "fence_id", "fence-1", "deleted_at", "2026-07-20T09:00:00Z"}), d0, d0.Add(time.Hour))
	f.run(sessE, runV5, 2, 1, runV2J(sessE, runV5, "SWACC-V5: gone", "completed", 1, d0, d0.Add(time.Minute), nil), d0, d0.Add(time.Minute))
	f.close()
	return path
}
