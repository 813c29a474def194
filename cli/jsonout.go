package cli

import (
	"encoding/json"
	"io"
	"time"

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
}

type jsonRetry struct {
	Decision string `json:"decision"`
}

type jsonStep struct {
	RunID     string      `json:"run_id"`
	Number    int         `json:"number"`
	Decision  string      `json:"decision"`
	ToolCall  string      `json:"tool_call"`
	Tokens    int64       `json:"tokens"`
	Retries   []jsonRetry `json:"retries"`
	Pending   bool        `json:"pending"`
	At        *string     `json:"at"`
	LatencyMS *int64      `json:"latency_ms"`
}

type jsonSample struct {
	Step      int      `json:"step"`
	Estimated *int64   `json:"estimated"`
	Reported  *int64   `json:"reported"`
	Gap       *int64   `json:"gap"`
	Drift     *float64 `json:"drift"`
	Detail    *string  `json:"detail"`
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
	Store    jsonStore     `json:"store"`
	At       string        `json:"at"`
	Run      jsonRun       `json:"run"`
	Ancestry []string      `json:"ancestry"`
	Tree     []jsonRun     `json:"tree"`
	Steps    []jsonStep    `json:"steps"`
	Context  []jsonSample  `json:"context"`
	Drift    jsonDrift     `json:"drift"`
	Requests []jsonRequest `json:"requests"`
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
	md := rd.md
	r, _ := md.Run(id)
	lease, heldBy := md.Lease(id)
	j := jsonRun{
		ID: r.ID, ParentID: str(r.ParentID), RootID: md.RootOf(id), Depth: r.Depth,
		State: stateName(md.State(id, rd.now)), Status: str(string(r.Status)), Outcome: str(string(r.Outcome)),
		Goal: r.Goal, Workspace: str(r.Workspace), Provider: str(r.Provider), TurnKind: str(r.TurnKind),
		StartedAt: timePtr(r.StartedAt), TreeAgents: md.Agents(id),
		AgentWait: md.Waiting(id), TreeWait: md.TreeWaiting(id),
		Liveness: md.Liveness(id, rd.now).String(),
	}
	if c := md.Agent(id); c.Known {
		j.AgentSteps, j.AgentTokens = ptr(c.Steps), ptr(c.Tokens)
	}
	if c := md.Tree(id); c.Known {
		j.TreeSteps, j.TreeTokens = ptr(c.Steps), ptr(c.Tokens)
	}
	if sum := r.Summary; sum != nil {
		j.Success = ptr(sum.Success)
		j.FinishedAt = timePtr(sum.FinishedAt)
		if sum.HasDuration {
			j.DurationMS = ptr(sum.Duration.Milliseconds())
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
	return j
}

func stepJSON(st store.Step) jsonStep {
	j := jsonStep{RunID: st.RunID, Number: st.Number, Decision: st.Decision, ToolCall: st.ToolCall, Tokens: st.Tokens,
		Retries: []jsonRetry{}, Pending: st.Pending, At: timePtr(st.At)}
	for _, r := range st.Retries {
		j.Retries = append(j.Retries, jsonRetry{Decision: r.Decision})
	}
	if st.Latency > 0 {
		j.LatencyMS = ptr(st.Latency.Milliseconds())
	}
	return j
}

func sampleJSON(c store.ContextSample) jsonSample {
	j := jsonSample{Step: c.Step, Reported: c.Reported, Detail: str(c.Detail)}
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
