package leviath

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// This file is a tiny Leviath persistence lane for tests, written from the
// format notes (docs/formats/leviath.md): it keeps a run's RunMeta and
// context window, and appends run.lvr frames and rewrites meta.json the way
// the daemon does.
// Nothing binary is committed: every fixture is generated here.

// ordered is a JSON object whose keys keep their order (serde writes
// struct fields in declaration order).
type ordered []kv

type kv struct {
	k string
	v any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// tagged is serde's externally tagged enum form.
func tagged(variant string, fields ordered) ordered { return ordered{{variant, fields}} }

// secret is the callback_secret every generated run carries.
const secret = "LVSECRET-do-not-show-7f3a91"

const t0 = int64(1785427200) // 2026-07-30 16:00:00 UTC

// genMeta is RunMeta as the generator keeps it.
type genMeta struct {
	runID, agent, task, model, status, stage, workdir string
	pid                                               int64
	stageIndex, numStages, iteration                  int64
	prompt, completion, cached, cacheWrite, toolCalls int64
	started, updated                                  int64
	errText, title                                    *string
	parent                                            string
	children                                          []string
	depth                                             int
	waitingOn                                         ordered // HEAD, omitted when nil
	lastProgress                                      int64   // HEAD
}

func strOrNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// json is the RunMeta object in serde's field order; head adds v0.4.0's
// fields.
func (m *genMeta) json(head bool) ordered {
	children := m.children
	if children == nil {
		children = []string{}
	}
	o := ordered{
		{"run_id", m.runID}, {"agent_name", m.agent}, {"agent_path", "/home/dev/.leviath/agents/" + m.agent},
		{"task", m.task}, {"model", strOrNull(m.model)}, {"pid", m.pid}, {"status", m.status},
		{"current_stage", m.stage}, {"stage_index", m.stageIndex}, {"num_stages", m.numStages}, {"iteration", m.iteration},
		{"prompt_tokens", m.prompt}, {"completion_tokens", m.completion}, {"cached_tokens", m.cached},
		{"cache_write_tokens", m.cacheWrite}, {"tool_calls", m.toolCalls}, {"workdir", m.workdir},
		{"started_at", m.started}, {"updated_at", m.updated},
	}
	if head {
		o = append(o, kv{"last_progress_at", m.lastProgress})
	}
	o = append(o, kv{"error", m.errText}, kv{"title", m.title})
	if head {
		o = append(o, kv{"title_error", nil})
	}
	o = append(o,
		kv{"metadata", map[string]string{"ticket": "REL-24", "callback_hint": "uses the secret"}},
		kv{"callback_url", "https://hooks.example.com/lev/" + m.runID + "?sig=" + secret},
		kv{"callback_secret", secret},
		kv{"parent_run_id", strOrNull(m.parent)}, kv{"children", children}, kv{"depth", m.depth},
		kv{"max_child_depth", 2},
		kv{"flags", ordered{{"modified_files", []string{"CHANGELOG.md"}}, {"modified_file_count", 1},
			{"empty_output", false}, {"max_iterations_hit", 0}, {"gates_forced", 0}, {"workspace_lost", false}}},
	)
	if head {
		o = append(o, kv{"yolo", false})
		if m.waitingOn != nil {
			o = append(o, kv{"waiting_on", m.waitingOn})
		}
	}
	return o
}

// genEntry is a RegionEntrySnapshot.
type genEntry struct {
	content string
	kind    ordered
	taint   string
	key     string
}

func tokensOf(s string) int64 { return int64((len(s) + 3) / 4) }

func (e genEntry) json() ordered {
	o := ordered{{"content", e.content}, {"tokens", tokensOf(e.content)}, {"kind", e.kind}}
	if e.key != "" {
		o = append(o, kv{"key", e.key})
	}
	taint := e.taint
	if taint == "" {
		taint = "Internal"
	}
	return append(o, kv{"taint", taint})
}

func textE(s string) genEntry { return genEntry{content: s, kind: ordered{{"type", "Text"}}} }
func userE(s string) genEntry { return genEntry{content: s, kind: ordered{{"type", "UserMessage"}}} }

// genCall is one tool call of an assistant turn.
type genCall struct {
	id, name string
	args     ordered
}

func turnE(s string, calls ...genCall) genEntry {
	tc := []ordered{}
	for _, c := range calls {
		tc = append(tc, ordered{{"id", c.id}, {"name", c.name}, {"arguments", c.args}})
	}
	return genEntry{content: s, kind: ordered{{"type", "AssistantTurn"}, {"tool_calls", tc}}}
}

func resultE(id, tool, s string, isErr bool) genEntry {
	return genEntry{content: s, taint: "Public", kind: ordered{{"type", "ToolResult"}, {"tool_call_id", id},
		{"tool_name", tool}, {"is_error", isErr}}}
}

// genRegion is a RegionSnapshot.
type genRegion struct {
	name, kind string
	max        int64
	entries    []genEntry
}

func (r *genRegion) tokens() int64 {
	var n int64
	for _, e := range r.entries {
		n += tokensOf(e.content)
	}
	return n
}

func (r *genRegion) json() ordered {
	o := ordered{{"name", r.name}, {"kind", r.kind}, {"current_tokens", r.tokens()}, {"max_tokens", r.max}}
	if len(r.entries) > 0 { // omitted when empty
		es := []ordered{}
		for _, e := range r.entries {
			es = append(es, e.json())
		}
		o = append(o, kv{"entries", es})
	}
	return o
}

// genRun is one run directory being written.
type genRun struct {
	t       testing.TB
	dir     string
	head    bool // write v0.4.0 (HEAD) records and meta fields
	meta    genMeta
	regions []*genRegion
	machine string
	world   string
	noMeta  bool // do not rewrite meta.json (a crash between journal and meta)
}

func (r *genRun) total() int64 {
	var n int64
	for _, g := range r.regions {
		n += g.tokens()
	}
	return n
}

func (r *genRun) region(name string) *genRegion {
	for _, g := range r.regions {
		if g.name == name {
			return g
		}
	}
	r.t.Fatalf("generator: no region %s", name)
	return nil
}

func (r *genRun) window() ordered {
	regs := []ordered{}
	for _, g := range r.regions {
		regs = append(regs, g.json())
	}
	return ordered{{"stage_name", r.meta.stage}, {"total_tokens", r.total()}, {"max_tokens", int64(200000)}, {"regions", regs}}
}

// frame encodes one record: u64 big-endian length, then the JSON.
func frame(rec any) []byte {
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	out := make([]byte, 8, 8+len(b))
	binary.BigEndian.PutUint64(out, uint64(len(b)))
	return append(out, b...)
}

func preamble(version uint16) []byte {
	b := []byte("LVR1\x00\x00")
	binary.BigEndian.PutUint16(b[4:], version)
	return b
}

// appendBytes appends to run.lvr in one write, as the persistence lane does.
func (r *genRun) appendBytes(b []byte) {
	r.t.Helper()
	f, err := os.OpenFile(filepath.Join(r.dir, "run.lvr"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
}

// writeMeta replaces meta.json atomically (tmp + rename), pretty-printed.
func (r *genRun) writeMeta() {
	r.t.Helper()
	if r.noMeta {
		return
	}
	b, err := json.MarshalIndent(r.meta.json(r.head), "", "  ")
	if err != nil {
		r.t.Fatal(err)
	}
	tmp := filepath.Join(r.dir, "meta.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.dir, "meta.json")); err != nil {
		r.t.Fatal(err)
	}
}

// newGenRun starts a run: preamble + Header + ContextCheckpoint in one
// write, then meta.json.
func newGenRun(t testing.TB, runs string, m genMeta, head bool, regions ...*genRegion) *genRun {
	t.Helper()
	r := &genRun{t: t, dir: filepath.Join(runs, m.runID), head: head, meta: m, regions: regions,
		machine: "5c1e0f9a7b3d2e48", world: "a91f3c0de4b27766"}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if r.meta.updated == 0 {
		r.meta.updated = r.meta.started
	}
	r.meta.lastProgress = r.meta.updated
	var b []byte
	b = append(b, preamble(1)...)
	b = append(b, r.headerFrame()...)
	b = append(b, r.checkpointFrame()...)
	r.appendBytes(b)
	r.writeMeta()
	return r
}

func (r *genRun) headerFrame() []byte {
	return frame(tagged("Header", ordered{
		{"identity", ordered{{"run_id", r.meta.runID}, {"machine_id", r.machine}, {"world_id", r.world}, {"created_at", r.meta.started}}},
		{"meta", r.meta.json(r.head)},
	}))
}

func (r *genRun) checkpointFrame() []byte {
	return frame(tagged("ContextCheckpoint", ordered{{"snapshot", r.window()}, {"at", r.meta.updated}}))
}

// A delta is built by the helpers below, which change the generator's own
// window the same way (docs/formats/leviath.md, "Context windows and
// deltas").
func (r *genRun) appendD(name string, es ...genEntry) ordered {
	g := r.region(name)
	g.entries = append(g.entries, es...)
	js := []ordered{}
	for _, e := range es {
		js = append(js, e.json())
	}
	return tagged("Append", ordered{{"name", name}, {"entries", js}, {"current_tokens", g.tokens()}})
}

func (r *genRun) setD(g *genRegion) ordered {
	replaced := false
	for i, old := range r.regions {
		if old.name == g.name {
			r.regions[i], replaced = g, true
		}
	}
	if !replaced {
		r.regions = append(r.regions, g)
	}
	return tagged("Set", g.json())
}

func (r *genRun) clearD(name string) ordered {
	r.region(name).entries = nil
	return tagged("Clear", ordered{{"name", name}})
}

func (r *genRun) removeD(name string) ordered {
	for i, g := range r.regions {
		if g.name == name {
			r.regions = append(r.regions[:i], r.regions[i+1:]...)
			break
		}
	}
	return tagged("Remove", ordered{{"name", name}})
}

func (r *genRun) delta(ds []any) ordered {
	if ds == nil {
		ds = []any{}
	}
	return ordered{{"stage_name", r.meta.stage}, {"total_tokens", r.total()}, {"max_tokens", int64(200000)}, {"regions", ds}}
}

// progressFrame is one later job: the whole RunMeta plus a ContextDelta.
func (r *genRun) progressFrame(at int64, deltas ...any) []byte {
	r.meta.updated, r.meta.lastProgress = at, at
	return frame(tagged("Progress", ordered{{"meta", r.meta.json(r.head)}, {"delta", r.delta(deltas)}, {"at", at}}))
}

// progress appends a Progress frame and then rewrites meta.json.
func (r *genRun) progress(at int64, deltas ...any) {
	r.t.Helper()
	r.appendBytes(r.progressFrame(at, deltas...))
	r.writeMeta()
}

// restart is the first job after a daemon restart: OwnershipChanged and a
// fresh ContextCheckpoint, no preamble.
func (r *genRun) restart(at int64, world string) {
	r.world = world
	r.meta.updated = at
	b := frame(tagged("OwnershipChanged", ordered{{"machine_id", r.machine}, {"world_id", world}, {"at", at}}))
	r.appendBytes(append(b, r.checkpointFrame()...))
	r.writeMeta()
}

// record appends any one record.
func (r *genRun) record(variant string, fields ordered) {
	r.appendBytes(frame(tagged(variant, fields)))
}

func (r *genRun) usage(at int64, kind string, prompt, completion, cached, write int64) {
	r.record("InferenceUsage", ordered{{"kind", kind}, {"stage", r.meta.stage}, {"iteration", r.meta.iteration},
		{"provider", "anthropic"}, {"model", "claude-sonnet-4-5"}, {"prompt_tokens", prompt}, {"completion_tokens", completion},
		{"cached_tokens", cached}, {"cache_write_tokens", write}, {"at", at}})
}

func (r *genRun) status(at int64, status string) {
	r.meta.status, r.meta.updated = status, at
	r.record("StatusChanged", ordered{{"status", status}, {"at", at}})
	r.writeMeta()
}

func args(kvs ...string) ordered {
	o := ordered{}
	for i := 0; i+1 < len(kvs); i += 2 {
		o = append(o, kv{kvs[i], kvs[i+1]})
	}
	return o
}

// fixture is a generated runs directory.
type fixture struct {
	home, runs                                                             string
	root, changelog, links, version, torn, future, garbage, crashy, queued string
	tornRest                                                               []byte // the rest of torn's last frame
	gens                                                                   map[string]*genRun
}

const (
	idRoot      = "release-lead-1785427200-3fa9c2d1e0b7"
	idChangelog = "changelog-writer-1785427210-a1b2c3d4e5f6"
	idLinks     = "link-checker-1785427230-0a1b2c3d4e5f"
	idVersion   = "version-checker-1785427263-c07f5e19a4d3"
	idTorn      = "torn-1785427300-0c0c0c0c0c0c"
	idFuture    = "future-1785427400-0d0d0d0d0d0d"
	idGarbage   = "garbage-1785427500-0e0e0e0e0e0e"
	idCrashy    = "crashy-1785427600-0f0f0f0f0f0f"
	idQueued    = "queued-1785427700-0a0a0a0a0a0a"
)

const rootTask = "Coordinate the 2.4.0 release of billing: changelog, version bump, publish"

func baseMeta(id, agent, task string, at int64) genMeta {
	return genMeta{runID: id, agent: agent, task: task, model: "anthropic/claude-sonnet-4-5", status: "running",
		stage: "work", numStages: 1, workdir: "/home/dev/src/billing", started: at, updated: at}
}

func stdRegions(task string) []*genRegion {
	return []*genRegion{
		{name: "task", kind: "pinned", max: 5000, entries: []genEntry{textE(task)}},
		{name: "conversation", kind: "sliding", max: 10000, entries: []genEntry{userE(task)}},
		{name: "tool_results", kind: "temporary", max: 5000},
	}
}

// buildFixture writes the whole runs directory under dir.
func buildFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	fx := &fixture{home: dir, runs: filepath.Join(dir, "runs"), gens: map[string]*genRun{}}
	if err := os.MkdirAll(fx.runs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "machine-id"), []byte("5c1e0f9a7b3d2e48\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.buildRoot(t)
	fx.buildChangelog(t)
	fx.buildLinks(t)
	fx.buildVersion(t)
	fx.buildTorn(t)
	fx.buildBad(t)
	fx.buildCrashy(t)
	fx.buildQueued(t)
	return fx
}

// The root: a 0.1.x journal (Header, ContextCheckpoint, Progress with every
// kind of region delta, a restart), plus records vigil must skip.
func (fx *fixture) buildRoot(t testing.TB) {
	m := baseMeta(idRoot, "release-lead", rootTask, t0)
	m.stage, m.numStages = "coordinate", 2
	regs := stdRegions(rootTask)
	regs = append(regs, &genRegion{name: "scratch", kind: "clearable", max: 2000, entries: []genEntry{textE("remember: publish last")}})
	r := newGenRun(t, fx.runs, m, false, regs...)
	fx.gens[idRoot] = r
	r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.toolCalls = 1, 1200, 80, 2
	r.meta.children = []string{idChangelog, idVersion}
	r.progress(t0+10,
		r.appendD("conversation", turnE("Splitting the release into two sub-agents.",
			genCall{"toolu_A1", "spawn_agent", args("agent", "changelog-writer")},
			genCall{"toolu_A2", "spawn_agent", args("agent", "version-checker")})),
		r.appendD("tool_results", textE("spawn log: 2 agents")))
	r.progress(t0+12,
		r.appendD("conversation",
			resultE("toolu_A1", "spawn_agent", "spawned "+idChangelog, false),
			resultE("toolu_A2", "spawn_agent", "spawned "+idVersion+"\nwatching it", false)),
		r.setD(&genRegion{name: "plan", kind: "pinned", max: 3000, entries: []genEntry{
			textE("1. changelog draft (child 1)\n2. version confirmation (child 2)\n3. publish")}}),
		r.clearD("tool_results"),
		r.removeD("scratch"))
	// A daemon restart: OwnershipChanged + a full checkpoint of the same
	// window (no new transcript rows).
	r.restart(t0+40, "0d44be19c7f2a503")
	// A sliding eviction rewrites the conversation (Set): the oldest entry
	// goes, one new turn arrives.
	conv := r.region("conversation")
	kept := append([]genEntry{}, conv.entries[1:]...)
	r.meta.iteration, r.meta.prompt, r.meta.completion = 2, 2600, 150
	r.progress(t0+45, r.setD(&genRegion{name: "conversation", kind: "sliding", max: 10000,
		entries: append(kept, turnE("Both sub-agents are running; waiting for their reports."))}))
	// Records vigil does not know: a struct variant, a unit variant, and a
	// region delta of an unknown kind next to a real one.
	r.record("Telemetry", ordered{{"cpu", 0.5}, {"at", t0 + 46}})
	r.appendBytes(frame("Heartbeat"))
	r.meta.iteration, r.meta.prompt, r.meta.completion = 3, 4100, 210
	r.progress(t0+50, tagged("Compact", ordered{{"name", "conversation"}}),
		r.appendD("conversation", userE("status?"), turnE("Changelog is done; version bump waits for the operator.")))
}

// A HEAD (v0.4.0) child: InferenceUsage, ToolBatch, ToolCallDone,
// StatusChanged, and the HEAD meta fields.
func (fx *fixture) buildChangelog(t testing.TB) {
	m := baseMeta(idChangelog, "changelog-writer", "Draft the 2.4.0 CHANGELOG entry", t0+10)
	m.parent, m.depth, m.stage = idRoot, 1, "draft"
	r := newGenRun(t, fx.runs, m, true, stdRegions(m.task)...)
	fx.gens[idChangelog] = r
	r.usage(t0+13, "stage", 1710, 95, 0, 1600)
	r.record("ToolBatch", ordered{{"calls", []ordered{{{"id", "toolu_B1"}, {"name", "read_file"},
		{"arguments", `{"path":"CHANGELOG.md"}`}, {"result", nil}}}}, {"stage_index", 0}, {"iteration", 1}, {"at", t0 + 13}})
	r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.toolCalls = 1, 1710, 95, 1
	r.progress(t0+13, r.appendD("conversation", turnE("Reading the changelog.",
		genCall{"toolu_B1", "read_file", args("path", "CHANGELOG.md")})))
	r.record("ToolCallDone", ordered{{"iteration", 1}, {"call_id", "toolu_B1"}, {"result", "# Changelog"}, {"at", t0 + 16}})
	r.progress(t0+16, r.appendD("conversation", resultE("toolu_B1", "read_file", "# Changelog\n\n## 2.3.1\n- fix rounding", false)))
	r.usage(t0+17, "compaction", 400, 60, 0, 0)
	r.usage(t0+18, "stage", 1810, 120, 1600, 0)
	r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.cached = 2, 3920, 275, 1600
	r.meta.children = []string{idLinks}
	r.progress(t0+19, r.appendD("conversation", turnE("Drafted the 2.4.0 entry.")))
	r.status(t0+20, "complete")
}

// A grandchild using the records 0.1.x defines but does not write:
// Checkpoint, Message, Inference, ContextDiff; it ends in error.
func (fx *fixture) buildLinks(t testing.TB) {
	m := baseMeta(idLinks, "link-checker", "Check the links in the 2.4.0 entry", t0+30)
	m.parent, m.depth = idChangelog, 2
	r := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	fx.gens[idLinks] = r
	r.meta.updated = t0 + 31
	r.appendBytes(frame(tagged("Checkpoint", ordered{{"meta", r.meta.json(false)}, {"context", r.window()}, {"at", t0 + 31}})))
	r.record("Message", ordered{{"message", ordered{{"role", "user"}, {"content", "only check https links"}}}, {"at", t0 + 32}})
	r.record("Inference", ordered{{"stage", "work"}, {"iteration", 1},
		{"request", ordered{{"model", "claude-sonnet-4-5"}, {"system", []string{"You check links."}}, {"messages", []ordered{}},
			{"tool_names", []string{"http_get"}}, {"temperature", 0.2}, {"max_tokens", 8192}}},
		{"response", ordered{{"content", "Checking."}, {"tool_calls", []ordered{}}, {"prompt_tokens", 900}, {"completion_tokens", 40},
			{"cached_tokens", 0}, {"cache_write_tokens", 0}}}, {"at", t0 + 33}})
	d := r.appendD("conversation",
		turnE("Checking the first link.", genCall{"toolu_C1", "http_get", args("url", "https://example.com/docs")}),
		resultE("toolu_C1", "http_get", "timeout after 30s", true))
	r.record("ContextDiff", ordered{{"delta", r.delta([]any{d})}, {"at", t0 + 34}})
	r.meta.status, r.meta.prompt, r.meta.completion = "error", 900, 40
	e := "link check timed out"
	r.meta.errText = &e
	r.progress(t0 + 35)
}

// The child parked on the operator: waiting_input, with
// an interaction sidecar.
func (fx *fixture) buildVersion(t testing.TB) {
	m := baseMeta(idVersion, "version-checker", "LVACC-CHILD-2: confirm the 2.4.0 version bump with the operator", t0+63)
	m.parent, m.depth, m.stage = idRoot, 1, "check"
	r := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	fx.gens[idVersion] = r
	r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.toolCalls = 1, 1710, 95, 1
	r.progress(t0+71, r.appendD("conversation",
		turnE("Checking the declared version.", genCall{"toolu_01Ww3Ey6Rr9Tt2Yu5Ii8Oo1P", "bash", args("command", "grep -n '^version' pyproject.toml")}),
		resultE("toolu_01Ww3Ey6Rr9Tt2Yu5Ii8Oo1P", "bash", `3:version = "2.3.1"`, false)))
	r.meta.iteration, r.meta.prompt, r.meta.completion, r.meta.status = 2, 3520, 180, "waiting_input"
	r.progress(t0+80, r.appendD("conversation", turnE("Asking the operator to confirm.",
		genCall{"toolu_02", "ask_user_confirm", args("question", "Bump 2.3.1 to 2.4.0?")})))
	side := ordered{{"plan_approval", ordered{{"cursor", 3}, {"round", 1},
		{"body", "Bump the version from 2.3.1 to 2.4.0 in pyproject.toml?"}, {"choices", []string{"approve", "abort"}}}}}
	b, _ := json.MarshalIndent(side, "", "  ")
	if err := os.WriteFile(filepath.Join(r.dir, "interactions.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A run whose last frame is half written.
func (fx *fixture) buildTorn(t testing.TB) {
	m := baseMeta(idTorn, "torn", "A run caught mid-append", t0+100)
	r := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	fx.gens[idTorn] = r
	r.meta.iteration, r.meta.prompt, r.meta.completion = 1, 500, 20
	r.progress(t0+105, r.appendD("conversation", turnE("First turn.")))
	r.meta.iteration, r.meta.prompt, r.meta.completion = 2, 1100, 45
	last := r.progressFrame(t0+110, r.appendD("conversation", turnE("Second turn, written in two pieces.")))
	cutAt := 8 + len(last)/2
	r.appendBytes(last[:cutAt])
	fx.tornRest = last[cutAt:]
}

// A journal from a newer Leviath (format version 2), and one that is not a
// journal at all.
func (fx *fixture) buildBad(t testing.TB) {
	m := baseMeta(idFuture, "future", "Written by Leviath 9", t0+200)
	dir := filepath.Join(fx.runs, idFuture)
	os.MkdirAll(dir, 0o700)
	g := &genRun{t: t, dir: dir, meta: m, machine: "5c1e0f9a7b3d2e48", world: "a91f3c0de4b27766", regions: stdRegions(m.task)}
	g.appendBytes(append(preamble(2), g.headerFrame()...))
	g.writeMeta()
	fx.gens[idFuture] = g
	gdir := filepath.Join(fx.runs, idGarbage)
	os.MkdirAll(gdir, 0o700)
	if err := os.WriteFile(filepath.Join(gdir, "run.lvr"), []byte("PK\x03\x04 not a journal"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A crash tore a frame; the restarted daemon appended after the torn bytes.
func (fx *fixture) buildCrashy(t testing.TB) {
	m := baseMeta(idCrashy, "crashy", "Survive a daemon crash", t0+300)
	r := newGenRun(t, fx.runs, m, false, stdRegions(m.task)...)
	fx.gens[idCrashy] = r
	r.meta.iteration, r.meta.prompt, r.meta.completion = 1, 700, 30
	r.progress(t0+305, r.appendD("conversation", turnE("Before the crash.")))
	lost := r.progressFrame(t0+310, r.appendD("conversation", turnE("Lost in the crash.")))
	r.appendBytes(lost[:8+40]) // the daemon died mid-write
	// The generator's window still holds the lost turn; the restarted
	// daemon's recovery stopped at the tear, so drop it.
	conv := r.region("conversation")
	conv.entries = conv.entries[:len(conv.entries)-1]
	r.restart(t0+400, "77aa0b1c2d3e4f50")
	r.meta.iteration, r.meta.prompt, r.meta.completion = 2, 1500, 70
	r.progress(t0+405, r.appendD("conversation", turnE("After the restart.")))
}

// A run the CLI queued: meta.json only, status starting.
func (fx *fixture) buildQueued(t testing.TB) {
	m := baseMeta(idQueued, "queued", "Waiting for the daemon", t0+400)
	m.status, m.stage = "starting", ""
	dir := filepath.Join(fx.runs, idQueued)
	os.MkdirAll(dir, 0o700)
	g := &genRun{t: t, dir: dir, meta: m}
	g.writeMeta()
	// An empty run directory (the CLI made it, nothing written yet) and a
	// leftover temp file are ignored.
	os.MkdirAll(filepath.Join(fx.runs, "empty-1785428000-0b0b0b0b0b0b"), 0o700)
	os.WriteFile(filepath.Join(dir, "meta.json.tmp"), []byte("{"), 0o600)
}
