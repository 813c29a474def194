package starweaver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/vigil-run/vigil/store"
)

// Requests are Starweaver's HITL records:
//   - an ApprovalRecord is an Approval (approve → "approved", deny →
//     "denied", as `starweaver approval approve|reject` writes them);
//   - a DeferredToolRecord is a Question: a tool call whose result someone
//     outside the run supplies; the answer (JSON, or text taken as a JSON
//     string) completes it, as `starweaver deferred complete` does.
// Plans do not exist in the format.

// reqRow is a decoded approval or deferred-tool row and where it lives.
type reqRow struct {
	rowid   int64
	session string
	run     string
	id      string
	req     store.Request
	callID  string // the tool call that asked
	pending bool
}

const (
	approvalCols = "rowid, session_id, run_id, approval_id, record"
	deferredCols = "rowid, session_id, run_id, deferred_id, record"
)

func scanApproval(r *sql.Rows) (reqRow, bool, error) {
	var x reqRow
	var rec []byte
	if err := r.Scan(&x.rowid, &x.session, &x.run, &x.id, &rec); err != nil {
		return x, false, err
	}
	var a approvalRec
	if !decode(rec, schemaApproval, true, &a) {
		return x, false, nil
	}
	x.callID, x.pending = a.ActionID, a.Status == "pending" || a.Status == ""
	x.req = approvalRequest(x, &a)
	return x, true, nil
}

func approvalRequest(x reqRow, a *approvalRec) store.Request {
	r := store.Request{Kind: store.Approval, ID: x.id, RunID: x.run, Act: a.ActionName, AskedAt: parseTS(a.CreatedAt)}
	var req struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(a.Request, &req)
	r.Target = target(req.Arguments)
	if content := prettyJSON(a.Request); content != "" {
		r.HasContent, r.ContentBytes = true, int64(len(content))
		r.Content = cutBytes(content, store.MaxContentBytes)
	}
	if !x.pending {
		r.Resolved = true
		r.Decision = verdictOf(a.Status)
		if a.Decision != nil {
			r.DecidedBy, r.Reason = a.Decision.DecidedBy, a.Decision.Reason
			r.DecidedAt = parseTS(a.Decision.DecidedAt)
		}
	}
	return r
}

// approvalStatus is the ApprovalStatus Starweaver records for a verdict.
var approvalStatus = map[store.Verdict]string{store.VerdictApprove: "approved", store.VerdictDeny: "denied"}

// verdictOf is an ApprovalStatus as vigil's decision words say it.
func verdictOf(status string) string {
	for v, st := range approvalStatus {
		if st == status {
			return string(v)
		}
	}
	return status // expired, cancelled
}

// target is the argument a person recognises a call by: a path, a
// command, a URL; else the arguments on one line.
func target(args json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) == nil {
		for _, k := range []string{"path", "file_path", "file", "command", "cmd", "url", "query", "pipeline", "name"} {
			if v, ok := m[k]; ok {
				if t := rawText(v); t != "" {
					return cutBytes(t, summaryBytes)
				}
			}
		}
	}
	return cutBytes(compactJSON(args), summaryBytes)
}

func scanDeferred(r *sql.Rows) (reqRow, bool, error) {
	var x reqRow
	var rec []byte
	if err := r.Scan(&x.rowid, &x.session, &x.run, &x.id, &rec); err != nil {
		return x, false, err
	}
	var d deferredRec
	if !decode(rec, schemaDeferred, true, &d) {
		return x, false, nil
	}
	x.callID, x.pending = d.ToolCallID, deferredOpen(d.Status)
	x.req = deferredRequest(x, &d)
	return x, true, nil
}

func deferredRequest(x reqRow, d *deferredRec) store.Request {
	var req struct {
		Arguments json.RawMessage `json:"arguments"`
		Reason    string          `json:"reason"`
	}
	_ = json.Unmarshal(d.Request, &req)
	q := "Deferred tool call " + d.ToolName
	if t := target(req.Arguments); t != "" {
		q += " " + t
	}
	if req.Reason != "" {
		q += ": " + req.Reason
	}
	ctxt := "The run waits for this call's result from outside. Answer with the result (JSON, or text); it completes the call."
	if a := prettyJSON(req.Arguments); a != "" {
		ctxt = "arguments:\n" + a + "\n\n" + ctxt
	}
	r := store.Request{Kind: store.Question, ID: x.id, RunID: x.run, Question: q, Context: ctxt, AskedAt: parseTS(d.CreatedAt)}
	if !x.pending {
		r.Resolved = true
		switch d.Status {
		case "completed":
			r.Decision = compactJSON(d.Response)
		case "failed":
			r.Decision = "failed: " + rawText(d.Response)
		default:
			r.Decision = d.Status
		}
	}
	return r
}

// readRequests reads approvals and deferred tools; where narrows both.
func (s *Store) readRequests(ctx context.Context, where string, args ...any) ([]reqRow, error) {
	var out []reqRow
	for _, t := range []struct {
		q    string
		scan func(*sql.Rows) (reqRow, bool, error)
	}{
		{"SELECT " + approvalCols + " FROM approval_records " + where, scanApproval},
		{"SELECT " + deferredCols + " FROM deferred_tool_records " + where, scanDeferred},
	} {
		err := s.eachRow(ctx, t.q, args, func(r *sql.Rows) error {
			x, ok, err := t.scan(r)
			if ok {
				out = append(out, x)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Requests returns approvals first, then deferred tools, each oldest first.
// With unresolvedOnly, only those that still wait on a human: pending (a
// deferred tool pending, running or waiting) in a run that has not ended —
// a record left pending by a run that completed, failed or was cancelled
// waits on nobody (nothing can resume that run). With runIDs, only those
// runs'. Each carries the step whose call asked and the asking run's
// ancestry.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	var rows []reqRow
	if runIDs == nil {
		all, err := s.readRequests(ctx, "")
		if err != nil {
			return nil, err
		}
		rows = all
	}
	for _, id := range runIDs {
		m, ok, err := s.metaOf(ctx, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		some, err := s.readRequests(ctx, "WHERE session_id = ? AND run_id = ?", m.session, id)
		if err != nil {
			return nil, err
		}
		rows = append(rows, some...)
	}
	kept := rows[:0]
	ended := map[string]bool{}
	for _, x := range rows {
		if !unresolvedOnly {
			kept = append(kept, x)
			continue
		}
		if !x.pending {
			continue
		}
		gone, ok := ended[x.run]
		if !ok {
			rec, err := s.runRecord(ctx, x.session, x.run)
			if err != nil {
				return nil, err
			}
			gone = rec != nil && terminal(rec.Status)
			ended[x.run] = gone
		}
		if !gone {
			kept = append(kept, x)
		}
	}
	out, err := s.finishRequests(ctx, kept)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		if !out[i].AskedAt.Equal(out[j].AskedAt) {
			return out[i].AskedAt.Before(out[j].AskedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Request returns one request by key.
func (s *Store) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	table, col := requestTable(key.Kind)
	if table == "" {
		return store.Request{}, errf(s.path, store.ErrNoSuchReq, nil, "no such request: %s", key)
	}
	cols, scan := approvalCols, scanApproval
	if key.Kind == store.Question {
		cols, scan = deferredCols, scanDeferred
	}
	var rows []reqRow
	err := s.eachRow(ctx, "SELECT "+cols+" FROM "+table+" WHERE "+col+" = ?", []any{key.ID},
		func(r *sql.Rows) error {
			x, ok, err := scan(r)
			if ok {
				rows = append(rows, x)
			}
			return err
		})
	if err != nil {
		return store.Request{}, err
	}
	if len(rows) == 0 {
		return store.Request{}, errf(s.path, store.ErrNoSuchReq, nil, "no such request: %s", key)
	}
	out, err := s.finishRequests(ctx, rows[:1])
	if err != nil {
		return store.Request{}, err
	}
	return out[0], nil
}

func requestTable(k store.RequestKind) (table, idCol string) {
	switch k {
	case store.Approval:
		return "approval_records", "approval_id"
	case store.Question:
		return "deferred_tool_records", "deferred_id"
	}
	return "", ""
}

// finishRequests fills each request's step and ancestry.
func (s *Store) finishRequests(ctx context.Context, rows []reqRow) ([]store.Request, error) {
	out := make([]store.Request, 0, len(rows))
	steps := map[string]int{}
	for _, x := range rows {
		r := x.req
		key := x.run + "\x00" + x.callID
		step, ok := steps[key]
		if !ok {
			var err error
			if step, err = s.callStep(ctx, x.session, x.run, x.callID); err != nil {
				return nil, err
			}
			steps[key] = step
		}
		r.Step = step
		chain, err := s.ancestry(ctx, x.run)
		if err != nil {
			return nil, err
		}
		r.Ancestry = chain
		out = append(out, r)
	}
	return out, nil
}

// callStep is the step of the model turn that made a tool call (0 when
// the stream does not hold it).
func (s *Store) callStep(ctx context.Context, session, run, callID string) (int, error) {
	step, _, err := s.findCall(ctx, session, run, callID)
	return step, err
}

// findCall finds a tool call in a stream: the turn that made it and the
// call itself.
func (s *Store) findCall(ctx context.Context, session, run, callID string) (int, *toolCall, error) {
	if callID == "" {
		return 0, nil, nil
	}
	rows, err := s.streamRows(ctx, `WHERE session_id = ? AND run_id = ? AND record LIKE ?
		AND (record LIKE '%"model_response"%' OR record LIKE '%"tool_call"%') ORDER BY rowid LIMIT 8`,
		session, run, "%"+likeEscape(callID)+"%")
	if err != nil {
		return 0, nil, err
	}
	for _, x := range rows {
		ev := &x.rec.Event
		switch {
		case ev.Kind == "tool_call" && ev.Call != nil && ev.Call.ID == callID:
			return ev.Step, ev.Call, nil
		case ev.Kind == "model_response" && ev.Response != nil:
			for _, c := range ev.Response.calls() {
				if c.ID == callID {
					return ev.Step, &c, nil
				}
			}
		}
	}
	return 0, nil, nil
}

// loadClaims reads the resume claims (the table holds a row only while a
// resume holds a run, so it stays small).
func (s *Store) loadClaims(ctx context.Context) error {
	claims, err := s.readClaims(ctx, s.read, "")
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.claims, s.claimsLoaded = claims, true
	s.mu.Unlock()
	return nil
}

// claimsRead reports whether this source has read the claims table yet
// (one opened to resume a written-down cursor has not: Classify answers
// from what it read).
func (s *Store) claimsRead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claimsLoaded
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readClaims reads the claims a where clause picks (every one when it is
// empty) by the run each holds. A row holds its run whatever its record
// says; the record adds the state. q is the read connection, or the
// transaction a decision checks them in.
func (s *Store) readClaims(ctx context.Context, q querier, where string, args ...any) (map[string]claimRec, error) {
	rows, err := q.QueryContext(ctx, "SELECT run_id, claim_id, record, created_at FROM hitl_resume_claims "+where, args...)
	if err != nil {
		return nil, mapErr(s.path, err)
	}
	defer rows.Close()
	out := map[string]claimRec{}
	for rows.Next() {
		var run, id, created string
		var rec []byte
		if err := rows.Scan(&run, &id, &rec, &created); err != nil {
			return nil, mapErr(s.path, err)
		}
		var c claimRec
		decode(rec, schemaClaim, false, &c)
		c.ClaimID, c.RunID = id, run
		if c.CreatedAt == "" {
			c.CreatedAt = created
		}
		out[run] = c
	}
	return out, mapErr(s.path, rows.Err())
}

// claimReason says why a claimed run's requests cannot be decided.
func claimReason(runID string, c claimRec, now time.Time) string {
	state := c.State
	if state == "" {
		state = "unknown state"
	}
	why := fmt.Sprintf("run %s is being resumed (claim %s, %s", runID, c.ClaimID, state)
	if ago := parseTS(c.CreatedAt); !ago.IsZero() && now.After(ago) {
		why += ", since " + ago.Format(time.RFC3339)
	}
	why += "): the resume already took the run's decisions and rewrites these records when it commits"
	if state == "started" {
		why += "; a started claim never expires — if that resume crashed, recover it in Starweaver"
	}
	return why
}

// Classify says what deciding req now would do, from the run as the
// caller last read it and the resume claims as Runs/Changes last saw them
// (Decide checks both again inside its transaction):
//   - a request already decided, or a run that has ended or been continued:
//     Closed;
//   - a run a resume claim holds: Deferred — the resuming host has taken its
//     decisions and will overwrite the records;
//   - a waiting run: DeliveryUnknown — the next resume reads the decision;
//   - an active run: DeliveryUnknown — Starweaver records no lease, so
//     whether the process still waits cannot be told.
func (s *Store) Classify(req store.Request, run store.Run, _ *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved {
		return store.Closed, "already decided (" + req.Decision + ")"
	}
	s.mu.Lock()
	c, claimed := s.claims[req.RunID]
	s.mu.Unlock()
	if claimed {
		return store.Deferred, claimReason(req.RunID, c, now)
	}
	switch {
	case run.Outcome == store.OutcomeContinued:
		return store.Closed, fmt.Sprintf("run %s was continued by a later run, which already took its decisions", run.ID)
	case run.Status.Ended():
		return store.Closed, fmt.Sprintf("run %s has ended (%s)", run.ID, orDash(string(run.Outcome)))
	case run.Status == store.StatusPaused:
		return store.DeliveryUnknown, fmt.Sprintf("run %s waits for a resume: the next `starweaver resume` reads the decision", run.ID)
	}
	return store.DeliveryUnknown, fmt.Sprintf("run %s is %s; Starweaver records no lease, so whether it still waits cannot be told", run.ID, orDash(string(run.Status)))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
