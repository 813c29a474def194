// Package swfixture writes Starweaver session databases for tests, from the
// format notes (docs/formats/starweaver.md): the migrations' tables and
// rows, and record envelopes as serde writes them. The Starweaver adapter's
// own tests build their scenarios on it; tests elsewhere (a remote agent
// serving a Starweaver store) use Create and the envelopes.
package swfixture

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/vigil-run/vigil/internal/sqlitex"
)

// J is a JSON object whose keys keep the order given (serde writes struct
// fields in declaration order; free-form maps are written with sorted
// keys, which the fixtures spell out by hand).
type J []any

func (j J) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(j); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(MJ(j[i].(string)))
		b.WriteByte(':')
		b.Write(MJ(j[i+1]))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// A is a JSON array.
type A []any

func (a A) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(MJ(v))
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// MJ marshals compactly without HTML escaping, as serde_json does.
func MJ(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Env is a record column: the versioned envelope, or for version 0 the
// legacy bare payload.
func Env(schema string, version int, payload any) string {
	if version == 0 {
		return string(MJ(payload))
	}
	return string(MJ(J{"schema", schema, "version", version, "payload", payload}))
}

// MigrationSQL is the SQL split as Starweaver's migrations 1–4 create the tables.
var MigrationSQL = []string{
	`CREATE TABLE IF NOT EXISTS session_records (
    session_id TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    record TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id)
);
CREATE INDEX IF NOT EXISTS ix_run_records_session_sequence ON run_records (session_id, sequence_no);
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    checkpoint_id TEXT NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, sequence_no, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS stream_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, sequence_no)
);
CREATE TABLE IF NOT EXISTS approvals (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, approval_id)
);
CREATE TABLE IF NOT EXISTS deferred_tools (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    deferred_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, deferred_id)
);
CREATE TABLE IF NOT EXISTS replay_events (
    scope TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, sequence_no)
);
CREATE INDEX IF NOT EXISTS ix_replay_events_scope_sequence ON replay_events (scope, sequence_no);
CREATE TABLE IF NOT EXISTS replay_snapshots (
    scope TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL
);`,
	`CREATE TABLE IF NOT EXISTS checkpoint_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    checkpoint_id TEXT NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, sequence_no, checkpoint_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS ux_checkpoint_records_run_identity ON checkpoint_records (session_id, run_id, checkpoint_id);
CREATE TABLE IF NOT EXISTS approval_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, approval_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS deferred_tool_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    deferred_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, deferred_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS replay_snapshot_records (
    scope TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_context_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS run_environment_records (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS ux_run_records_session_sequence ON run_records (session_id, sequence_no);`,
	`CREATE TABLE IF NOT EXISTS display_message_records (
    scope TEXT NOT NULL,
    sequence_no INTEGER NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope, sequence_no)
);
CREATE INDEX IF NOT EXISTS ix_display_message_records_scope_sequence ON display_message_records (scope, sequence_no);
CREATE TABLE IF NOT EXISTS display_snapshot_records (
    scope TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL
);`,
	`CREATE TABLE IF NOT EXISTS run_evidence_commits (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS stream_publication_outbox (
    publication_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    record TEXT NOT NULL,
    archive_pending INTEGER NOT NULL,
    replay_pending INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (session_id, run_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS ix_stream_publication_outbox_session ON stream_publication_outbox (session_id, created_at, publication_id);
CREATE TABLE IF NOT EXISTS hitl_resume_claims (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    claim_id TEXT NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id),
    UNIQUE (claim_id),
    FOREIGN KEY (session_id, run_id) REFERENCES run_records(session_id, run_id) ON DELETE CASCADE
);`,
}

// MigrationRows are the migrations' rows: id, description, backfill hook.
var MigrationRows = [][3]string{
	{"20260605_000001_session_stream_store", "create durable session, run, checkpoint, stream, approval, deferred tool, and replay tables", ""},
	{"20260711_000002_namespaced_evidence_tables", "create collision-safe durable evidence tables and per-run state tables", "typed-legacy-backfill-v1"},
	{"20260711_000003_split_display_and_replay_families", "separate display archive records from typed replay event records", "display-backfill-v2"},
	{"20260712_000004_evidence_outbox_and_resume_claims", "add sealed evidence digests, transactional stream publication outbox, and exclusive HITL resume claims", "evidence-digest-backfill-v2"},
}

// Migration is one of 0.15's later migrations.
type Migration struct{ ID, Desc, SQL string }

// Migrations015 are 0.15.0's migrations 5–19: only 5 and 19 have ids vigil pins
// (docs/formats/starweaver.md, "Opening and migrations"); the others are
// stand-ins with the same shape, and their tables carry the columns 0.15's
// tables have (a basic viewer reads none of them).
var Migrations015 = []Migration{
	{"20260714_000005_agent_session_management", "session revision and idempotency receipts, and a deletion fence",
		"CREATE TABLE session_idempotency_receipts (session_id TEXT NOT NULL, key TEXT NOT NULL, record TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (session_id, key));"},
	{"20260715_000006_run_admissions", "run admission leases",
		"CREATE TABLE run_admissions (session_id TEXT NOT NULL, run_id TEXT NOT NULL, host_instance_id TEXT NOT NULL, generation INTEGER NOT NULL, lease_expires_at TEXT NOT NULL, PRIMARY KEY (session_id, run_id));"},
	{"20260715_000007_run_control", "run control receipts and intents",
		"CREATE TABLE run_control_receipts (receipt_id TEXT PRIMARY KEY, record TEXT NOT NULL); CREATE TABLE run_control_intents (intent_id TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260716_000008_background_subagents", "background subagent records",
		"CREATE TABLE background_subagent_records (session_id TEXT NOT NULL, task_id TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_id, task_id)); CREATE TABLE background_subagent_artifacts (task_id TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (task_id, name));"},
	{"20260717_000009_legacy_import", "legacy import bookkeeping", "CREATE TABLE legacy_imports (import_id TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260717_000010_tombstones", "tombstones", "CREATE TABLE tombstones (kind TEXT NOT NULL, id TEXT NOT NULL, deleted_at TEXT NOT NULL, PRIMARY KEY (kind, id));"},
	{"20260718_000011_replay_source_selections", "replay source selections",
		"CREATE TABLE replay_source_selections (scope TEXT PRIMARY KEY, source TEXT NOT NULL CHECK (source IN ('replay_events','display_messages')), selected_at TEXT NOT NULL);"},
	{"20260719_000012_host_event_records", "durable host event log", "CREATE TABLE host_event_records (sequence_no INTEGER PRIMARY KEY, record TEXT NOT NULL, created_at TEXT NOT NULL);"},
	{"20260719_000013_host_event_outbox", "host event publication outbox", "CREATE TABLE host_event_outbox (publication_id TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260720_000014_model_selection", "model selection records", "CREATE TABLE model_selection_records (scope TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260721_000015_interaction_mutation_receipts", "interaction mutation receipts", "CREATE TABLE interaction_mutation_receipts (receipt_id TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260722_000016_environment_aggregate", "environment aggregate", "CREATE TABLE environment_records (environment_id TEXT PRIMARY KEY, record TEXT NOT NULL);"},
	{"20260723_000017_environment_events", "environment events", "CREATE TABLE environment_events (environment_id TEXT NOT NULL, sequence_no INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (environment_id, sequence_no));"},
	{"20260724_000018_session_run_envelope_v2", "v2 session and run envelopes", "-- JSON record migration is performed by the versioned Rust hook."},
	{"20260725_000019_transcript_host_events", "transcript host events", "CREATE TABLE transcript_host_events (scope TEXT NOT NULL, sequence_no INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (scope, sequence_no));"},
}

// Checksum is the checksum Starweaver records for a migration's text.
func Checksum(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("fnv1a64:%016x", h.Sum64())
}

// Create makes a Starweaver 0.7 database at path through migration 4, in
// WAL mode with foreign keys on, as Starweaver opens it, and returns the
// writer's connection (pinned to one connection, as Starweaver's is).
func Create(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", sqlitex.DSN(path, "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	sqlitex.Pin(db)
	fail := func(err error) (*sql.DB, error) { db.Close(); return nil, err }
	stmts := []string{"PRAGMA journal_mode=WAL", `CREATE TABLE IF NOT EXISTS starweaver_schema_migrations (
    id TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    checksum TEXT,
    applied_at TEXT NOT NULL
)`}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			return fail(err)
		}
	}
	applied := time.Date(2026, 7, 13, 8, 59, 59, 0, time.UTC)
	for i, m := range MigrationRows {
		if _, err := db.Exec(MigrationSQL[i]); err != nil {
			return fail(err)
		}
		text := MigrationSQL[i]
		if m[2] != "" {
			text += "\nhook:" + m[2]
		}
		applied = applied.Add(time.Millisecond)
		if _, err := db.Exec("INSERT INTO starweaver_schema_migrations (id, description, checksum, applied_at) VALUES (?, ?, ?, ?)",
			m[0], m[1], Checksum(text), applied.Format("2006-01-02T15:04:05.000")+"+00:00"); err != nil {
			return fail(err)
		}
	}
	return db, nil
}
