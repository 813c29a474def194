package leviath

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// mapStatus maps a RunStatus onto the neutral vocabulary store.StateOf
// reads: live statuses are running (waiting_input is running with an open
// request), paused is paused, and the four terminal statuses are completed
// with the Leviath word as the outcome.
func mapStatus(st string) (status store.Status, outcome store.Outcome, finished bool) {
	switch st {
	case "starting", "running", "waiting_input", "":
		return store.StatusRunning, "", false
	case "paused":
		return store.StatusPaused, "", false
	case "complete":
		return store.StatusCompleted, store.OutcomeComplete, true
	case "complete_interactive":
		return store.StatusCompleted, store.OutcomeCompleteInteractive, true
	case "error":
		return store.StatusCompleted, store.OutcomeError, true
	case "cancelled":
		return store.StatusCompleted, store.OutcomeCancelled, true
	}
	return store.Status(st), "", false // a status from a newer Leviath: shown as it is
}

func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// runOf is a run as vigil shows it.
func (s *Store) runOf(rs *runState) store.Run {
	// The run id carries its creation second ("<agent>-<secs>-<hex>"): the
	// start time of a run whose meta cannot be read.
	r := store.Run{ID: rs.id, StartedAt: unixTime(created(rs.id))}
	m, ok := rs.meta()
	if !ok {
		why := "nothing readable yet"
		switch {
		case rs.jerr != nil:
			why = shortErr(rs.jerr)
		case rs.fmetaErr != nil:
			why = shortErr(rs.fmetaErr)
		}
		if rs.jerr == nil && rs.fmetaErr == nil {
			// A journal still being started: nothing to show but its id,
			// driven (as far as anyone can tell) since the file was written.
			r.Status, r.Goal = store.StatusRunning, "(starting)"
			r.Lease = &store.Lease{Owner: "lev-daemon@unknown-unknown", Generation: 1, AcquiredAt: time.Unix(0, rs.lvr.mtime).UTC(),
				RenewedAt: time.Unix(0, rs.lvr.mtime).UTC(), TTL: LeaseTTL}
			return r
		}
		r.Status, r.Outcome = store.StatusCompleted, store.OutcomeUnreadable
		r.Goal = "(unreadable: " + why + ")"
		r.Summary = &store.Summary{Outcome: store.OutcomeUnreadable}
		r.StatsKnown = true
		return r
	}
	r.ParentID, r.Depth, r.Goal, r.Workspace, r.Provider = m.parent(), m.Depth, m.Task, m.Workdir, m.model()
	if r.ParentID == "" {
		r.ParentID = s.childOf[rs.id]
	}
	if r.ParentID != "" && r.Depth == 0 {
		if p := s.runs[r.ParentID]; p != nil {
			if pm, ok := p.meta(); ok {
				r.Depth = pm.Depth + 1
			}
		}
	}
	if m.StartedAt > 0 {
		r.StartedAt = unixTime(m.StartedAt)
	}
	status, outcome, finished := mapStatus(m.Status)
	r.Status, r.Outcome = status, outcome
	if finished && rs.pending {
		return r // its counts (the Summary's) wait for the fold: not known yet
	}
	if finished {
		sum := &store.Summary{Outcome: outcome, Success: outcome.Succeeded(),
			Steps: rs.turns, Tokens: m.spend(), FinishedAt: unixTime(m.UpdatedAt)}
		if m.StartedAt > 0 && m.UpdatedAt >= m.StartedAt {
			sum.Duration, sum.HasDuration = time.Duration(m.UpdatedAt-m.StartedAt)*time.Second, true
		}
		r.Summary = sum
		r.Steps, r.Tokens, r.StatsKnown = sum.Steps, sum.Tokens, true
		return r
	}
	r.Lease = s.lease(rs, m)
	return r
}

// lease synthesizes who drives an unfinished run: the daemon's world (and
// pid, when the meta has one that can be checked on this machine), renewed
// at the last journaled update. A paused run has none: nobody drives it
// until someone resumes it.
func (s *Store) lease(rs *runState, m *runMeta) *store.Lease {
	if m.Status == "paused" {
		return nil
	}
	machine, world := orUnknown(rs.ident.MachineID), orUnknown(rs.ident.WorldID)
	var owner string
	switch {
	case m.PID > 0 && m.Status != "starting" && s.machineID != "" && rs.ident.MachineID == s.machineID:
		owner = fmt.Sprintf("%d-%s-%s", m.PID, machine, world) // store.LivenessOf checks this pid
	case m.PID > 0:
		owner = fmt.Sprintf("lev-pid%d@%s-%s", m.PID, machine, world) // another machine: not checkable
	default:
		owner = fmt.Sprintf("lev-daemon@%s-%s", machine, world) // the daemon writes pid 0
	}
	renewed := m.UpdatedAt
	if m.LastProgressAt != nil && *m.LastProgressAt > renewed {
		renewed = *m.LastProgressAt
	}
	acquired := rs.ownerAt
	if acquired == 0 {
		acquired = rs.ident.CreatedAt
	}
	if acquired == 0 {
		acquired = m.StartedAt
	}
	return &store.Lease{Owner: owner, Generation: int64(rs.owners + 1), AcquiredAt: unixTime(acquired),
		RenewedAt: unixTime(renewed), TTL: LeaseTTL}
}

// runSig is what a run row shows, as one string: a change is logged.
func (s *Store) runSig(rs *runState) string {
	r := s.runOf(rs)
	sig := fmt.Sprintf("%s|%s|%s|%s|%d|%s|%s|%t", r.Status, r.Outcome, r.Provider, r.ParentID, r.Depth, r.Goal, r.Workspace, r.Summary != nil)
	if r.Summary != nil {
		sig += fmt.Sprintf("|%d|%d|%d", r.Summary.Steps, r.Summary.Tokens, r.Summary.FinishedAt.Unix())
	}
	if r.Lease != nil {
		sig += "|" + r.Lease.Owner + "|" + strconv.FormatInt(r.Lease.RenewedAt.Unix(), 10)
	}
	return sig
}

// findFolded is find once the run's journal is folded (s.mu held).
func (s *Store) findFolded(ctx context.Context, id string) (*runState, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := s.settle(ctx, id); err != nil {
		return nil, err
	}
	return s.find(id)
}

func (s *Store) find(id string) (*runState, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	rs := s.runs[id]
	if rs == nil {
		return nil, newErr(s.path, store.ErrNoSuchRun, "no such run: "+id, nil)
	}
	return rs, nil
}

// Runs returns every run, newest first.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	return s.listRuns(), nil
}

// listRuns is every run as it reads now, newest first (s.mu held).
func (s *Store) listRuns() []store.Run {
	out := make([]store.Run, 0, len(s.order))
	for _, rs := range s.order {
		out = append(out, s.runOf(rs))
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].StartedAt, out[j].StartedAt
		if !a.Equal(b) {
			return a.After(b)
		}
		return out[i].ID > out[j].ID
	})
	return out
}

// RunStats counts what the timeline rows of unfinished runs add up to:
// assistant turns, and the spend attributed to them.
func (s *Store) RunStats(ctx context.Context, ids []string) (map[string]store.RunStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := s.settle(ctx, ids...); err != nil {
		return nil, err
	}
	out := map[string]store.RunStats{}
	for _, id := range ids {
		rs := s.runs[id]
		if rs == nil {
			continue
		}
		st := store.RunStats{Steps: rs.turns, Tokens: rs.rowTokens}
		if m, ok := rs.meta(); ok {
			if _, _, finished := mapStatus(m.Status); finished {
				st.Tokens = m.spend() // what its Summary says
			}
		}
		if n := len(rs.rows); n > 0 {
			st.Through = rs.rows[n-1].id
		}
		out[id] = st
	}
	return out, nil
}

// Steps returns a run's timeline: one row per transcript entry (user
// message, assistant turn, tool result) plus status, restart and journal
// rows.
func (s *Store) Steps(ctx context.Context, runID string) ([]store.Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.findFolded(ctx, runID)
	if err != nil {
		return nil, err
	}
	if rs.jerr != nil {
		return nil, rs.jerr
	}
	out := make([]store.Step, 0, len(rs.rows))
	for i := range rs.rows {
		out = append(out, stepOf(rs, &rs.rows[i]))
	}
	return out, nil
}

func stepOf(rs *runState, r *row) store.Step {
	return store.Step{RowID: r.id, RunID: rs.id, Number: r.number, Decision: r.decision, ToolCall: r.toolCall,
		ResultHead: r.head, Tokens: r.tokens, At: unixTime(r.at)}
}

func stepRowOf(rs *runState, r *row) store.StepRow {
	return store.StepRow{RowID: r.id, RunID: rs.id, Number: r.number, Decision: r.decision, ToolCall: r.toolCall,
		ResultHead: r.head, Tokens: r.tokens}
}

// ContextSamples returns one sample per replay point: Leviath's own
// estimate (total_tokens) beside, at HEAD, the prompt tokens the provider
// reported for the call made with that window. Reported stays nil when no
// call was journaled for it (always in 0.1.x journals).
func (s *Store) ContextSamples(ctx context.Context, runID string) ([]store.ContextSample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.findFolded(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]store.ContextSample, 0, len(rs.samples))
	for i := range rs.samples {
		out = append(out, sampleOf(rs, &rs.samples[i]))
	}
	return out, nil
}

func sampleOf(rs *runState, sm *sample) store.ContextSample {
	cs := store.ContextSample{RowID: sm.id, RunID: rs.id, Step: sm.step, Estimated: sm.total, Detail: sampleDetail(sm)}
	if sm.usage != nil {
		v := sm.usage.PromptTokens
		cs.Reported = &v
	}
	return cs
}

func sampleDetail(sm *sample) string {
	parts := []string{}
	if sm.stage != "" {
		parts = append(parts, "stage "+sm.stage)
	}
	parts = append(parts, fmt.Sprintf("iteration %d", sm.iteration))
	if sm.status != "" {
		parts = append(parts, sm.status)
	}
	parts = append(parts, fmt.Sprintf("%d of %d tokens (Leviath's estimate)", sm.total, sm.max), fmt.Sprintf("%d regions", sm.regions))
	if sm.restart {
		parts = append(parts, "first window after a daemon restart")
	}
	if u := sm.usage; u != nil {
		parts = append(parts, fmt.Sprintf("reported by %s: prompt %d (cached %d, cache write %d), completion %d",
			strings.TrimSpace(orText(u.Provider, "")+" "+u.Model), u.PromptTokens, u.CachedTokens, u.CacheWriteTokens, u.CompletionTokens))
	}
	return strings.Join(parts, " · ")
}

// ProviderCalls returns the run's journaled provider calls (HEAD's
// InferenceUsage). Latency is not journaled.
func (s *Store) ProviderCalls(ctx context.Context, runID string) ([]store.ProviderCall, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.findFolded(ctx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]store.ProviderCall, 0, len(rs.calls))
	for i := range rs.calls {
		out = append(out, callOf(rs, &rs.calls[i]))
	}
	return out, nil
}

func callOf(rs *runState, c *call) store.ProviderCall {
	p, cpl := c.u.PromptTokens, c.u.CompletionTokens
	tot := p + cpl
	pc := store.ProviderCall{RowID: c.id, RunID: rs.id, Step: c.step, Attempt: c.attempt, Provider: c.u.Provider,
		Model: c.u.Model, PromptTokens: &p, CompletionTokens: &cpl, TotalTokens: &tot, At: unixTime(c.u.At)}
	cr, cw := c.u.CachedTokens, c.u.CacheWriteTokens
	pc.CacheReadTokens, pc.CacheWriteTokens = &cr, &cw
	if c.u.Kind != "stage" {
		pc.FinishReason = c.u.Kind + " call"
	}
	return pc
}

// AgentEvents: a Leviath journal records no tree events (spawns, budget
// draws); the tree comes from parent_run_id and children.
func (s *Store) AgentEvents(ctx context.Context, runIDs ...string) ([]store.AgentEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.usable()
}

// ancestry is the chain of run ids from the root down to id.
func (s *Store) ancestry(id string) []string {
	parents := map[string]string{}
	seen := map[string]bool{}
	for cur := id; cur != "" && !seen[cur]; {
		seen[cur] = true
		rs := s.runs[cur]
		if rs == nil {
			break
		}
		p := ""
		if m, ok := rs.meta(); ok {
			p = m.parent()
		}
		if p == "" {
			p = s.childOf[cur]
		}
		parents[cur] = p
		cur = p
	}
	return store.Ancestry(id, parents)
}
