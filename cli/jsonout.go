package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// The JSON the CLI prints. These structs are the documented, stable schema
// (docs/cli.md): snake_case keys, ids as strings, times RFC 3339 in UTC,
// and null — never a zero — for what is absent. Store types are never
// marshalled directly.

type jsonStore struct {
	Path           string  `json:"path"`
	Format         string  `json:"format"`
	ReadOnly       bool    `json:"read_only"`
	ReadOnlyReason *string `json:"read_only_reason"`
}

type jsonLease struct {
	HeldBy     string  `json:"held_by"` // the run whose lease this is (the run itself or an ancestor)
	Owner      string  `json:"owner"`
	PID        *int    `json:"pid"`
	Generation int64   `json:"generation"`
	AcquiredAt *string `json:"acquired_at"`
	RenewedAt  *string `json:"renewed_at"`
	TTLSeconds int64   `json:"ttl_seconds"`
	// LivenessNote says what the pid check cannot see: an owner that is
	// not this pid namespace's process, or vigil in a nested namespace.
	LivenessNote *string `json:"liveness_note"`
}

type jsonRecovery struct {
	AttemptID string  `json:"attempt_id"`
	Step      int     `json:"step"`
	Tool      string  `json:"tool"`
	StartedAt *string `json:"started_at"`
}

type jsonRun struct {
	ID        string  `json:"id"`
	ParentID  *string `json:"parent_id"`
	RootID    string  `json:"root_id"`
	Depth     int     `json:"depth"`
	State     string  `json:"state"`
	Status    *string `json:"status"`
	Outcome   *string `json:"outcome"`
	Success   *bool   `json:"success"`
	Goal      string  `json:"goal"`
	Workspace *string `json:"workspace"`
	Provider  *string `json:"provider"`
	TurnKind  *string `json:"turn_kind"`
	// Counts say their scope: agent_ is the run itself, tree_ the run and
	// every run under it.
	AgentSteps  *int       `json:"agent_steps"`
	AgentTokens *int64     `json:"agent_tokens"`
	TreeAgents  int        `json:"tree_agents"`
	TreeSteps   *int       `json:"tree_steps"`
	TreeTokens  *int64     `json:"tree_tokens"`
	StartedAt   *string    `json:"started_at"`
	FinishedAt  *string    `json:"finished_at"`
	DurationMS  *int64     `json:"duration_ms"`
	AgentWait   int        `json:"agent_waiting"`
	TreeWait    int        `json:"tree_waiting"`
	Liveness    string     `json:"liveness"`
	Lease       *jsonLease `json:"lease"`
	// Recovery is the tool call the run's driver died in the middle of,
	// which a resume will not repeat until a person decides it.
	Recovery *jsonRecovery `json:"recovery"`

	// *_tokens_unreported: how many counted steps had no reported token
	// count (*_tokens is the sum of the others, null when none had one).
	AgentUnreported *int `json:"agent_tokens_unreported"`
	TreeUnreported  *int `json:"tree_tokens_unreported"`
}

type jsonRetry struct {
	Decision string `json:"decision"`
}

type jsonStep struct {
	RunID     string      `json:"run_id"`
	Number    int         `json:"number"`
	Decision  string      `json:"decision"`
	ToolCall  string      `json:"tool_call"`
	Tokens    *int64      `json:"tokens"` // null: not reported
	Retries   []jsonRetry `json:"retries"`
	Pending   bool        `json:"pending"`
	At        *string     `json:"at"`
	LatencyMS *int64      `json:"latency_ms"`

	// What show reads of each step beyond its timeline row (null and [] on
	// a pending step, which has no row of its own yet).
	Result          *string            `json:"result"`
	ResultTruncated bool               `json:"result_truncated"`
	ResultBytes     *int64             `json:"result_bytes"`
	ModelText       *string            `json:"model_text"`
	ModelTextCut    bool               `json:"model_text_truncated"`
	Observations    []jsonObservation  `json:"observations"`
	Edits           []jsonEdit         `json:"edits"`
	PolicyEvents    []jsonPolicyEvent  `json:"policy_events"`
	ProviderCalls   []jsonProviderCall `json:"provider_calls"`
	Citations       []jsonCitation     `json:"citations"`
	ServerTools     []jsonServerTool   `json:"server_tools"`
}

type jsonObservation struct {
	Step          int     `json:"step"`
	Kind          string  `json:"kind"`
	Target        *string `json:"target"`
	Text          string  `json:"text"`
	TextTruncated bool    `json:"text_truncated"`
	TextBytes     *int64  `json:"text_bytes"`
}

type jsonEdit struct {
	Tool         string  `json:"tool"`
	Path         string  `json:"path"`
	LinesAdded   int     `json:"lines_added"`
	LinesRemoved int     `json:"lines_removed"`
	Hunk         *string `json:"hunk"`
	HunkCut      bool    `json:"hunk_truncated"`
	HunkBytes    *int64  `json:"hunk_bytes"`
}

type jsonPolicyEvent struct {
	Kind      string  `json:"kind"`
	Act       string  `json:"act"`
	Target    string  `json:"target"`
	Rule      *string `json:"rule"`
	Layer     *string `json:"layer"`
	Decision  *string `json:"decision"`
	Source    *string `json:"source"`
	Performed *string `json:"performed"`
}

type jsonProviderCall struct {
	Attempt            int     `json:"attempt"`
	Provider           string  `json:"provider"`
	Model              *string `json:"model"`
	PromptTokens       *int64  `json:"prompt_tokens"`
	CompletionTokens   *int64  `json:"completion_tokens"`
	TotalTokens        *int64  `json:"total_tokens"`
	CacheReadTokens    *int64  `json:"cache_read_tokens"`
	CacheWriteTokens   *int64  `json:"cache_write_tokens"`
	ReasoningTokens    *int64  `json:"reasoning_tokens"`
	ServerToolRequests *int64  `json:"server_tool_requests"`
	LatencyMS          int64   `json:"latency_ms"`
	TTFTMS             *int64  `json:"ttft_ms"`
	FinishReason       *string `json:"finish_reason"`
	Failure            *string `json:"failure"`
	At                 *string `json:"at"`
}

type jsonCitation struct {
	URL       string  `json:"url"`
	Title     *string `json:"title"`
	CitedText *string `json:"cited_text"`
}

type jsonServerTool struct {
	Provider string  `json:"provider"`
	Tool     string  `json:"tool"`
	Error    *string `json:"error"`
}

type jsonSample struct {
	Step      int      `json:"step"`
	Estimated *int64   `json:"estimated"`
	Reported  *int64   `json:"reported"`
	Gap       *int64   `json:"gap"`
	Drift     *float64 `json:"drift"`
	Detail    *string  `json:"detail"`
	DetailCut bool     `json:"detail_truncated"`
	// DetailBytes is the whole detail's length when it is cut.
	DetailBytes *int64 `json:"detail_bytes"`
}

type jsonDrift struct {
	Turns      int      `json:"turns"`
	Missing    int      `json:"missing"`
	Estimated  int64    `json:"estimated"`
	Reported   int64    `json:"reported"`
	Gap        int64    `json:"gap"`
	Cumulative *float64 `json:"cumulative"`
}

type jsonPlanStep struct {
	Intent string  `json:"intent"`
	Agent  *string `json:"agent"`
}

// jsonRunLink is the agent run and tool call a gate request acts on.
type jsonRunLink struct {
	Format string  `json:"format"`
	RunID  string  `json:"run_id"`
	CallID *string `json:"call_id"`
	InSet  bool    `json:"in_set"` // run_id is a run of what was read
}

type jsonRequest struct {
	Key              string          `json:"key"`
	Kind             string          `json:"kind"`
	ID               string          `json:"id"`
	RunID            string          `json:"run_id"`
	Step             int             `json:"step"`
	Ancestry         []string        `json:"ancestry"`
	AskedAt          *string         `json:"asked_at"`
	Act              *string         `json:"act"`
	Target           *string         `json:"target"`
	AlwaysAllow      *string         `json:"always_allow,omitempty"`
	For              *jsonRunLink    `json:"for,omitempty"`
	Content          *string         `json:"content"`
	ContentBytes     *int64          `json:"content_bytes"`
	ContentTruncated *bool           `json:"content_truncated"`
	Question         *string         `json:"question"`
	Context          *string         `json:"context"`
	Choices          *[]string       `json:"choices"`
	PlanSteps        *[]jsonPlanStep `json:"plan_steps"`
	Resolved         bool            `json:"resolved"`
	Decision         *string         `json:"decision"`
	DecidedBy        *string         `json:"decided_by"`
	Correction       *string         `json:"correction"`
	Delivery         string          `json:"delivery"`
	DeliveryReason   *string         `json:"delivery_reason"`
}

type jsonRuns struct {
	Store    jsonStore     `json:"store"`
	At       string        `json:"at"`
	Runs     []jsonRun     `json:"runs"`
	Requests []jsonRequest `json:"requests"` // every open request in the store
}

type jsonShow struct {
	Store     jsonStore      `json:"store"`
	At        string         `json:"at"`
	Run       jsonRun        `json:"run"`
	Ancestry  []string       `json:"ancestry"`
	Tree      []jsonRun      `json:"tree"`
	Steps     []jsonStep     `json:"steps"`
	Context   []jsonSample   `json:"context"`
	Drift     jsonDrift      `json:"drift"`
	Requests  []jsonRequest  `json:"requests"`
	Decisions []jsonDecision `json:"decisions"` // the tree's decided requests

	// PolicyEvents are every policy event of the run, at its step, the
	// steps never committed too (show_policy.go).
	PolicyEvents []jsonRunPolicyEvent `json:"policy_events"`
}

// writeJSON writes v indented, with every character a terminal could act
// on escaped as \uXXXX. encoding/json escapes C0 controls and the line
// separators but passes DEL, the C1 controls (U+0080–U+009F: a lone CSI or
// OSC) and bidi controls raw, and `vigil runs --json` is read on terminals.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSONControls(buf.Bytes()))
	return err
}

// jsonDoc writes one top-level JSON object the way writeJSON would write
// it (indented by two spaces, ending in a newline), member by member, so
// that a list of 100 000 runs is never held encoded at once.
type jsonDoc struct {
	w     *bufio.Writer
	first bool
	err   error
	run   jsonRun    // the run runList is writing
	sc    runScratch // and what its pointers point at
}

func newJSONDoc(w io.Writer) *jsonDoc {
	d := &jsonDoc{w: bufio.NewWriterSize(w, 64<<10), first: true}
	d.raw([]byte("{"))
	return d
}

func (d *jsonDoc) raw(b []byte) {
	if d.err == nil {
		_, d.err = d.w.Write(escapeJSONControls(b))
	}
}

func (d *jsonDoc) key(name string) {
	if !d.first {
		d.raw([]byte(","))
	}
	d.first = false
	k, _ := json.Marshal(name)
	d.raw(append(append([]byte("\n  "), k...), ": "...))
}

func (d *jsonDoc) value(v any, prefix string) {
	if d.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, prefix, "  ")
	if err != nil {
		d.err = err
		return
	}
	d.raw(b)
}

// field writes one member.
func (d *jsonDoc) field(name string, v any) {
	d.key(name)
	d.value(v, "  ")
}

// list writes a member that is a list of n values, elem(i) each.
func (d *jsonDoc) list(name string, n int, elem func(i int) any) {
	d.items(name, n, func(i int) { d.value(elem(i), "    ") })
}

// items writes a member that is a list of n items, each written by
// write(i) on its own indented line.
func (d *jsonDoc) items(name string, n int, write func(i int)) {
	d.key(name)
	if n == 0 {
		d.raw([]byte("[]"))
		return
	}
	d.raw([]byte("["))
	for i := 0; i < n && d.err == nil; i++ {
		if i > 0 {
			d.raw([]byte(","))
		}
		d.raw([]byte("\n    "))
		write(i)
	}
	d.raw([]byte("\n  ]"))
}

// runList is list for runs, run(i, &j, &sc) filling each: every run is
// filled into one jsonRun and written before the next is filled in its
// place (a list of 100 k runs boxed as values was 100 k copies).
func (d *jsonDoc) runList(name string, n int, run func(i int, j *jsonRun, sc *runScratch)) {
	d.items(name, n, func(i int) {
		run(i, &d.run, &d.sc)
		d.value(&d.run, "    ")
	})
}

// close ends the object.
func (d *jsonDoc) close() error {
	d.raw([]byte("\n}\n"))
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

// escapeJSONControls rewrites encoded JSON so that it holds no DEL, C1 or
// bidi control (sanitize.Hazard). They can only be inside strings (JSON's
// own syntax is printable ASCII), where \uXXXX means the same character.
func escapeJSONControls(b []byte) []byte {
	i := 0
	for i < len(b) {
		if i+8 <= len(b) && !hasDELOrHigh(binary.LittleEndian.Uint64(b[i:])) {
			i += 8 // eight bytes below DEL at once: 64 MB of runs is mostly ASCII
			continue
		}
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if sanitize.Hazard(r) {
			break
		}
		i += size
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if sanitize.Hazard(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// hasDELOrHigh says whether any of the eight bytes in w is 0x7f or above.
// Adding 1 to each byte sets the high bit of a 0x7f; only a byte of 0xff
// carries into the next one, and its own high bit is set already.
func hasDELOrHigh(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w|(w+ones))&highs != 0
}

func ptr[T any](v T) *T { return &v }

// str is nil for "".
func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func jsonTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// timePtr is nil for the zero time.
func timePtr(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return ptr(jsonTime(t))
}

func storeJSON(src store.Source) jsonStore {
	ro, why := src.ReadOnly()
	return jsonStore{Path: src.Path(), Format: src.Format(), ReadOnly: ro, ReadOnlyReason: str(why)}
}

func (rd *reading) runJSON(id string) jsonRun {
	var j jsonRun
	rd.fillRunJSON(&j, id, new(runScratch))
	return j
}

// runScratch holds what a jsonRun's own pointers point at, so that filling
// one makes one allocation, or none: runList fills every run of a list
// into one jsonRun and one scratch (ten small allocations a run were most
// of what `runs --json` allocated on 100 k runs).
type runScratch struct {
	parent, status, outcome, workspace, provider, turnKind, started, finished string
	success                                                                   bool
	agentSteps, treeSteps, agentUnreported, treeUnreported                    int
	agentTokens, treeTokens, durationMS                                       int64
}

// strIn is str(v) kept in slot.
func strIn(slot *string, v string) *string {
	if v == "" {
		return nil
	}
	*slot = v
	return slot
}

// countedTokens is a known count's token sum kept in slot: nil when every
// step it counted had none reported, as a step's own tokens are (knownTokens).
func countedTokens(slot *int64, c runmodel.Counts) *int64 {
	if c.Unreported > 0 && c.Tokens == 0 {
		return nil
	}
	return ptrIn(slot, c.Tokens)
}

// ptrIn is ptr(v) kept in slot.
func ptrIn[T any](slot *T, v T) *T {
	*slot = v
	return slot
}

// timeIn is timePtr(t) kept in slot.
func timeIn(slot *string, t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return ptrIn(slot, jsonTime(t))
}

// fillRunJSON sets *out to runJSON(id), its pointers into sc.
func (rd *reading) fillRunJSON(out *jsonRun, id string, sc *runScratch) {
	md := rd.md
	got, ok := md.Read(id, rd.now) // the root, lease and liveness too: one look-up a run
	if !ok {
		got.Root, got.Liveness = md.RootOf(id), md.Liveness(id, rd.now)
		got.Lease, got.LeaseHolder = md.Lease(id)
	}
	r := &got.Run
	lease, heldBy := got.Lease, got.LeaseHolder
	*out = jsonRun{
		ID: r.ID, ParentID: strIn(&sc.parent, r.ParentID), RootID: got.Root, Depth: r.Depth,
		State: stateName(got.State), Status: strIn(&sc.status, string(r.Status)), Outcome: strIn(&sc.outcome, string(r.Outcome)),
		Goal: r.Goal, Workspace: strIn(&sc.workspace, r.Workspace), Provider: strIn(&sc.provider, r.Provider),
		TurnKind: strIn(&sc.turnKind, r.TurnKind), StartedAt: timeIn(&sc.started, r.StartedAt), TreeAgents: got.Agents,
		AgentWait: got.Waiting, TreeWait: got.TreeWaiting,
		Liveness: got.Liveness.String(),
	}
	j := out
	if c := got.Own; c.Known {
		j.AgentSteps, j.AgentUnreported = ptrIn(&sc.agentSteps, c.Steps), ptrIn(&sc.agentUnreported, c.Unreported)
		j.AgentTokens = countedTokens(&sc.agentTokens, c)
	}
	if c := got.Tree; c.Known {
		j.TreeSteps, j.TreeUnreported = ptrIn(&sc.treeSteps, c.Steps), ptrIn(&sc.treeUnreported, c.Unreported)
		j.TreeTokens = countedTokens(&sc.treeTokens, c)
	}
	if sum := r.Summary; sum != nil {
		j.Success = ptrIn(&sc.success, sum.Success)
		j.FinishedAt = timeIn(&sc.finished, sum.FinishedAt)
		if sum.HasDuration {
			j.DurationMS = ptrIn(&sc.durationMS, sum.Duration.Milliseconds())
		}
	}
	if lease != nil {
		jl := &jsonLease{HeldBy: heldBy, Owner: lease.Owner, Generation: lease.Generation,
			AcquiredAt: timePtr(lease.AcquiredAt), RenewedAt: timePtr(lease.RenewedAt), TTLSeconds: int64(lease.TTL / time.Second)}
		if pid := lease.OwnerPID(); pid > 0 {
			jl.PID = ptr(pid)
		}
		_, note := store.OwnerCheck(*lease)
		jl.LivenessNote = str(note)
		j.Lease = jl
	}
	if rec := r.Recovery; rec != nil {
		j.Recovery = &jsonRecovery{AttemptID: rec.AttemptID, Step: rec.Step, Tool: rec.Tool, StartedAt: timePtr(rec.StartedAt)}
	}
}

func stepJSON(st store.Step, d *store.StepDetail) jsonStep {
	j := jsonStep{RunID: st.RunID, Number: st.Number, Decision: st.Decision, ToolCall: st.ToolCall, Tokens: knownTokens(st.Tokens, st.TokensUnknown),
		Retries: []jsonRetry{}, Pending: st.Pending, At: timePtr(st.At),
		Observations: []jsonObservation{}, Edits: []jsonEdit{}, PolicyEvents: []jsonPolicyEvent{}, ProviderCalls: []jsonProviderCall{},
		Citations: []jsonCitation{}, ServerTools: []jsonServerTool{}}
	for _, r := range st.Retries {
		j.Retries = append(j.Retries, jsonRetry{Decision: r.Decision})
	}
	if st.Latency > 0 {
		j.LatencyMS = ptr(st.Latency.Milliseconds())
	}
	if d == nil {
		return j
	}
	if !st.Pending {
		j.Result = ptr(d.Result)
		j.ResultTruncated = slices.Contains(d.Truncated, "result")
		if n, ok := d.FieldBytes["result"]; ok {
			j.ResultBytes = ptr(n)
		} else if !j.ResultTruncated {
			j.ResultBytes = ptr(int64(len(d.Result)))
		}
	}
	if d.HasTurnText {
		j.ModelText = ptr(d.TurnText)
		j.ModelTextCut = slices.Contains(d.Truncated, "turn")
	}
	// A side field cut to its head is named in Truncated by its row
	// (store.ObservationField, EditField), with its whole size when the
	// store knows it; an uncut one is its own size.
	cutSize := func(name string, shown int) (bool, *int64) {
		if !slices.Contains(d.Truncated, name) {
			return false, ptr(int64(shown))
		}
		if n, ok := d.FieldBytes[name]; ok {
			return true, ptr(n)
		}
		return true, nil
	}
	for _, o := range d.Observations {
		jo := jsonObservation{Step: o.Step, Kind: o.Kind, Target: str(o.Target), Text: o.Text}
		jo.TextTruncated, jo.TextBytes = cutSize(store.ObservationField(o.RowID), len(o.Text))
		j.Observations = append(j.Observations, jo)
	}
	for _, e := range d.Edits {
		je := jsonEdit{Tool: e.Tool, Path: e.Path, LinesAdded: e.LinesAdded, LinesRemoved: e.LinesRemoved, Hunk: str(e.Hunk)}
		if je.HunkCut, je.HunkBytes = cutSize(store.EditField(e.RowID), len(e.Hunk)); je.Hunk == nil && !je.HunkCut {
			je.HunkBytes = nil
		}
		j.Edits = append(j.Edits, je)
	}
	for _, p := range d.Policy {
		if p.Step != d.Number {
			continue // an event before the first step: the run's policy_events has it at its step
		}
		j.PolicyEvents = append(j.PolicyEvents, policyEventJSON(p))
	}
	for _, c := range d.ProviderCalls {
		j.ProviderCalls = append(j.ProviderCalls, jsonProviderCall{Attempt: c.Attempt, Provider: c.Provider, Model: str(c.Model),
			PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, TotalTokens: c.TotalTokens,
			CacheReadTokens: c.CacheReadTokens, CacheWriteTokens: c.CacheWriteTokens, ReasoningTokens: c.ReasoningTokens,
			ServerToolRequests: c.ServerToolCalls, LatencyMS: c.LatencyMS, TTFTMS: c.TTFTMS, FinishReason: str(c.FinishReason),
			Failure: str(c.Failure), At: timePtr(c.At)})
	}
	for _, c := range d.Citations {
		j.Citations = append(j.Citations, jsonCitation{URL: c.URL, Title: str(c.Title), CitedText: str(c.CitedText)})
	}
	for _, t := range d.ServerTools {
		j.ServerTools = append(j.ServerTools, jsonServerTool{Provider: t.Provider, Tool: t.Tool, Error: str(t.Error)})
	}
	return j
}

func sampleJSON(c store.ContextSample) jsonSample {
	j := jsonSample{Step: c.Step, Reported: c.Reported, Detail: str(c.Detail)}
	if c.DetailBytes > 0 {
		j.DetailCut, j.DetailBytes = true, ptr(c.DetailBytes)
	}
	if !c.NoEstimate {
		j.Estimated = ptr(c.Estimated)
	}
	if c.Reported != nil && j.Estimated != nil {
		gap := *c.Reported - c.Estimated
		j.Gap = &gap
		if *c.Reported != 0 {
			j.Drift = ptr(float64(gap) / float64(*c.Reported))
		}
	}
	return j
}

func (rd *reading) requestJSON(q store.Request) jsonRequest {
	d, why := rd.delivery(q)
	j := jsonRequest{
		Key: requestKey(q.Key()), Kind: q.Kind.String(), ID: q.ID, RunID: q.RunID, Step: q.Step,
		Ancestry: q.Ancestry, AskedAt: timePtr(q.AskedAt), Resolved: q.Resolved,
		Delivery: deliveryName(d), DeliveryReason: str(why),
	}
	if j.Ancestry == nil {
		j.Ancestry = rd.md.Ancestry(q.RunID)
	}
	if q.Resolved {
		j.Decision, j.DecidedBy, j.Correction = ptr(q.Decision), str(q.DecidedBy), str(q.Correction)
	}
	switch q.Kind {
	case store.Approval:
		j.Act, j.Target = ptr(q.Act), ptr(q.Target)
		if q.AlwaysAllow != "" {
			j.AlwaysAllow = ptr(q.AlwaysAllow)
		}
		if f := q.For; f.RunID != "" {
			j.For = &jsonRunLink{Format: f.Format, RunID: f.RunID, CallID: str(f.CallID), InSet: f.InSet}
		}
		if q.HasContent {
			j.Content, j.ContentBytes = ptr(q.Content), ptr(q.ContentBytes)
			j.ContentTruncated = ptr(int64(len(q.Content)) < q.ContentBytes)
		}
	case store.Question:
		j.Question, j.Context = ptr(q.Question), str(q.Context)
		choices := append([]string{}, q.Choices...)
		j.Choices = &choices
	case store.Plan:
		steps := []jsonPlanStep{}
		for _, p := range q.PlanSteps {
			steps = append(steps, jsonPlanStep{Intent: p.Intent, Agent: str(p.Agent)})
		}
		j.PlanSteps = &steps
	}
	return j
}

// requestKey is the typed key the decision commands take: approval:12.
func requestKey(k store.RequestKey) string { return k.Kind.String() + ":" + k.ID }

func policyEventJSON(p store.PolicyEvent) jsonPolicyEvent {
	return jsonPolicyEvent{Kind: string(p.Kind), Act: p.Act, Target: p.Target, Rule: str(p.Rule),
		Layer: str(p.Layer), Decision: str(string(p.Decision)), Source: str(p.Source), Performed: str(p.Performed)}
}
