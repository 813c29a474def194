-- The io-harness 0.66 run store schema (CHECKPOINT_FORMAT 7), table for table
-- and column for column: names, types, defaults and order are what io-harness's
-- own migrations leave in a fresh store, so io-harness opens a store made here
-- as one of its own (its open re-runs CREATE ... IF NOT EXISTS and ADD COLUMN,
-- which find everything already present).

CREATE TABLE IF NOT EXISTS runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    goal          TEXT NOT NULL,
    file          TEXT NOT NULL,
    outcome       TEXT,
    provider      TEXT,
    parent_run_id INTEGER,
    depth         INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL DEFAULT 'running',
    started_at    TEXT,
    turn_kind     TEXT
);
CREATE TABLE IF NOT EXISTS steps (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    step      INTEGER NOT NULL,
    decision  TEXT NOT NULL,
    result    TEXT NOT NULL,
    prompt    TEXT NOT NULL DEFAULT '',
    tool_call TEXT NOT NULL DEFAULT '',
    tokens    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS policy_events (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id    INTEGER NOT NULL,
    step      INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    act       TEXT NOT NULL,
    target    TEXT NOT NULL,
    rule      TEXT,
    layer     TEXT,
    decision  TEXT,
    source    TEXT,
    performed TEXT
);
CREATE TABLE IF NOT EXISTS pending_approvals (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   INTEGER NOT NULL,
    step     INTEGER NOT NULL,
    act      TEXT NOT NULL,
    target   TEXT NOT NULL,
    content  TEXT,
    resolved TEXT
);
CREATE TABLE IF NOT EXISTS agent_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL,
    step         INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    child_run_id INTEGER,
    detail       TEXT,
    tokens       INTEGER,
    remaining    INTEGER
);
CREATE TABLE IF NOT EXISTS sandbox_events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  INTEGER NOT NULL,
    step    INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    backend TEXT,
    detail  TEXT
);
CREATE TABLE IF NOT EXISTS checkpoint_events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    detail TEXT
);
CREATE TABLE IF NOT EXISTS spawns (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_run_id INTEGER NOT NULL,
    step          INTEGER NOT NULL,
    child_run_id  INTEGER NOT NULL,
    goal          TEXT NOT NULL,
    verify_file   TEXT NOT NULL,
    needle        TEXT NOT NULL,
    max_steps     INTEGER,
    deny_write    TEXT NOT NULL DEFAULT '[]',
    as_name       TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS mcp_events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    server TEXT NOT NULL,
    tool   TEXT,
    ok     INTEGER,
    millis INTEGER,
    detail TEXT
);
CREATE TABLE IF NOT EXISTS memory (
    id         INTEGER PRIMARY KEY,
    workspace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    run_id     INTEGER NOT NULL,
    step       INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    kind       TEXT,
    pinned     INTEGER,
    UNIQUE(workspace, key)
);
CREATE TABLE IF NOT EXISTS memory_recalls (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL,
    step      INTEGER NOT NULL,
    workspace TEXT NOT NULL,
    key       TEXT NOT NULL,
    at        TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS memory_recalls_run ON memory_recalls (run_id);
CREATE INDEX IF NOT EXISTS memory_recalls_entry ON memory_recalls (workspace, key);
CREATE TABLE IF NOT EXISTS context_events (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL,
    step            INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    detail          TEXT,
    est_tokens      INTEGER,
    reported_tokens INTEGER
);
CREATE TABLE IF NOT EXISTS run_outcomes (
    run_id      INTEGER PRIMARY KEY,
    outcome     TEXT NOT NULL,
    success     INTEGER NOT NULL,
    steps       INTEGER NOT NULL,
    tokens      INTEGER NOT NULL,
    duration_ms INTEGER,
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_policies (
    run_id INTEGER PRIMARY KEY,
    policy TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_observations (
    id     INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    target TEXT,
    text   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS provider_calls (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id               INTEGER NOT NULL,
    step                 INTEGER NOT NULL,
    attempt              INTEGER NOT NULL,
    provider             TEXT NOT NULL,
    model                TEXT,
    prompt_tokens        INTEGER,
    completion_tokens    INTEGER,
    total_tokens         INTEGER,
    cache_read_tokens    INTEGER,
    cache_write_tokens   INTEGER,
    reasoning_tokens     INTEGER,
    server_tool_requests INTEGER,
    latency_ms           INTEGER NOT NULL,
    ttft_ms              INTEGER,
    finish_reason        TEXT,
    failure              TEXT,
    at                   TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS edits (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        INTEGER NOT NULL,
    step          INTEGER NOT NULL,
    tool          TEXT NOT NULL,
    path          TEXT NOT NULL,
    lines_added   INTEGER NOT NULL,
    lines_removed INTEGER NOT NULL,
    at            TEXT NOT NULL DEFAULT (datetime('now')),
    hunk          TEXT
);
CREATE TABLE IF NOT EXISTS sessions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    root         TEXT NOT NULL,
    head_turn_id INTEGER,
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE TABLE IF NOT EXISTS session_turns (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     INTEGER NOT NULL,
    parent_turn_id INTEGER,
    run_id         INTEGER NOT NULL,
    prompt         TEXT NOT NULL,
    reply          TEXT,
    outcome        TEXT,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE TABLE IF NOT EXISTS todos (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL,
    position   INTEGER NOT NULL,
    text       TEXT NOT NULL,
    state      TEXT NOT NULL,
    written_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS todos_run ON todos (run_id, position);
CREATE TABLE IF NOT EXISTS pending_questions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL,
    step        INTEGER NOT NULL,
    question    TEXT NOT NULL,
    context     TEXT,
    choices     TEXT,
    answer      TEXT,
    answered_by TEXT,
    resolved    INTEGER NOT NULL DEFAULT 0,
    asked_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE TABLE IF NOT EXISTS citations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL,
    step       INTEGER NOT NULL,
    url        TEXT NOT NULL,
    title      TEXT,
    cited_text TEXT,
    cited_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS citations_run ON citations (run_id, step);
CREATE TABLE IF NOT EXISTS server_tool_calls (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id   INTEGER NOT NULL,
    step     INTEGER NOT NULL,
    provider TEXT NOT NULL,
    tool     TEXT NOT NULL,
    error    TEXT,
    ran_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS server_tool_calls_run ON server_tool_calls (run_id, step);
CREATE TABLE IF NOT EXISTS process_handles (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL,
    handle     INTEGER NOT NULL,
    step       INTEGER NOT NULL,
    line       TEXT NOT NULL,
    pids       TEXT NOT NULL DEFAULT '',
    state      TEXT NOT NULL,
    code       INTEGER,
    reason     TEXT,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    ended_at   TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS process_handles_run ON process_handles (run_id, handle);
CREATE TABLE IF NOT EXISTS handle_output (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  INTEGER NOT NULL,
    handle  INTEGER NOT NULL,
    step    INTEGER NOT NULL,
    chunk   TEXT NOT NULL,
    read_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS handle_output_run ON handle_output (run_id, handle);
CREATE TABLE IF NOT EXISTS snapshots (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    path   TEXT NOT NULL,
    before TEXT,
    state  TEXT NOT NULL,
    at     TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS snapshots_run ON snapshots (run_id, path);
CREATE INDEX IF NOT EXISTS run_outcomes_outcome ON run_outcomes (outcome);
CREATE INDEX IF NOT EXISTS run_outcomes_finished ON run_outcomes (finished_at);
CREATE INDEX IF NOT EXISTS sandbox_events_kind_detail ON sandbox_events (kind, detail);
CREATE INDEX IF NOT EXISTS sandbox_events_run_kind ON sandbox_events (run_id, kind);
CREATE INDEX IF NOT EXISTS context_events_kind ON context_events (kind);
CREATE INDEX IF NOT EXISTS checkpoint_events_kind ON checkpoint_events (kind);
CREATE TABLE IF NOT EXISTS plans (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL,
    step        INTEGER NOT NULL,
    steps       TEXT NOT NULL,
    verdict     TEXT,
    correction  TEXT,
    decided_by  TEXT,
    resolved    INTEGER NOT NULL DEFAULT 0,
    proposed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS plans_run ON plans (run_id, verdict);
CREATE TABLE IF NOT EXISTS agent_queue (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_run_id INTEGER NOT NULL,
    step          INTEGER NOT NULL,
    goal          TEXT NOT NULL,
    depth         INTEGER NOT NULL,
    queued_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE UNIQUE INDEX IF NOT EXISTS agent_queue_entry ON agent_queue (parent_run_id, step, goal);
CREATE TABLE IF NOT EXISTS run_events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    depth  INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    json   TEXT NOT NULL,
    at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS run_events_run ON run_events (run_id, id);
CREATE TABLE IF NOT EXISTS memory_snapshots (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id    INTEGER NOT NULL,
    workspace TEXT NOT NULL,
    key       TEXT NOT NULL,
    step      INTEGER NOT NULL,
    before    TEXT,
    kind      TEXT,
    state     TEXT NOT NULL,
    at        TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE UNIQUE INDEX IF NOT EXISTS memory_snapshots_entry ON memory_snapshots (run_id, workspace, key);
CREATE TABLE IF NOT EXISTS rewinds (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          INTEGER NOT NULL,
    files           TEXT NOT NULL,
    memory_restored TEXT NOT NULL,
    memory_removed  TEXT NOT NULL,
    queue_cleared   TEXT NOT NULL,
    at              TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    undid_step      INTEGER
);
CREATE INDEX IF NOT EXISTS rewinds_run ON rewinds (run_id, id);
CREATE TABLE IF NOT EXISTS gate_attempts (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id  INTEGER NOT NULL,
    step    INTEGER NOT NULL,
    phase   TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT '',
    at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS gate_attempts_run ON gate_attempts (run_id, id);
CREATE INDEX IF NOT EXISTS provider_calls_run ON provider_calls (run_id);
CREATE TABLE IF NOT EXISTS summaries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL,
    through_step INTEGER NOT NULL,
    folded       INTEGER NOT NULL,
    text         TEXT NOT NULL,
    est_tokens   INTEGER NOT NULL DEFAULT 0,
    at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX IF NOT EXISTS summaries_run ON summaries (run_id, folded);
CREATE INDEX IF NOT EXISTS session_turns_session ON session_turns (session_id);
CREATE TABLE IF NOT EXISTS agent_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    from_run_id INTEGER NOT NULL,
    to_run_id   INTEGER NOT NULL,
    from_name   TEXT NOT NULL,
    step        INTEGER NOT NULL,
    body        TEXT NOT NULL,
    sent_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    read_at     TEXT
);
CREATE INDEX IF NOT EXISTS agent_messages_to ON agent_messages (to_run_id, id);
CREATE TABLE IF NOT EXISTS run_leases (
    run_id      INTEGER PRIMARY KEY,
    owner       TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    acquired_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    renewed_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    ttl_secs    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS step_turns (
    run_id INTEGER NOT NULL,
    step   INTEGER NOT NULL,
    text   TEXT,
    calls  TEXT NOT NULL,
    PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS tool_attempts (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL,
    step         INTEGER NOT NULL,
    tool         TEXT NOT NULL,
    started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    completed_at TEXT,
    resolution   TEXT
);
CREATE INDEX IF NOT EXISTS tool_attempts_open ON tool_attempts (run_id) WHERE completed_at IS NULL;
