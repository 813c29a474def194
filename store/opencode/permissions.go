package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

// opencode keeps its permission requests in its server's memory, never in
// the database: a request is listed by the running `opencode serve`
// (GET /permission) and answered there (POST /permission/{id}/reply).
// Each one becomes an approval of the session it belongs to, at the step
// of the message whose tool call it gates.

// Requests lists what waits in the opencode server for the sessions of
// this database, and the requests seen waiting since that have been
// answered (unless unresolvedOnly). No server running means nothing
// waits: browsing does not fail for it.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	dirs, err := s.runningDirs(ctx, nil)
	if err != nil {
		return nil, err
	}
	pend, _ := s.srv.browse(ctx, dirs)
	reqs, err := s.requestsOf(ctx, pend)
	if err != nil {
		return nil, err
	}
	if !unresolvedOnly {
		done, err := s.answered(ctx, reqs)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, done...)
	}
	if len(runIDs) == 0 {
		return reqs, nil
	}
	want := map[string]bool{}
	for _, id := range runIDs {
		want[id] = true
	}
	var out []store.Request
	for _, r := range reqs {
		if want[r.RunID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Request reads one request: waiting in the server, or answered since this
// process saw it wait.
func (s *Store) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	if key.Kind != store.Approval {
		return store.Request{}, store.Errorf(s.path, store.ErrNoSuchReq, nil, "%s: opencode asks approvals only", key)
	}
	dirs, err := s.runningDirs(ctx, nil)
	if err != nil {
		return store.Request{}, err
	}
	// The server's own directory too: a decider is told when no server runs.
	pend, err := s.srv.pending(ctx, append(dirs, ""))
	if err != nil {
		return store.Request{}, store.Errorf(s.path, store.ErrNoSuchReq, nil, "%s", err)
	}
	reqs, err := s.requestsOf(ctx, pend)
	if err != nil {
		return store.Request{}, err
	}
	done, err := s.answered(ctx, reqs)
	if err != nil {
		return store.Request{}, err
	}
	for _, r := range append(reqs, done...) {
		if r.ID == key.ID {
			return r, nil
		}
	}
	if c, found := s.claim(ctx, key.ID); found {
		// Decided through vigil by another process: its claim says how.
		r := store.Request{Kind: store.Approval, ID: key.ID, Resolved: true, Decision: c.Verdict, DecidedBy: c.DecidedBy, DecidedAt: c.DecidedAt}
		if c.Outcome == gate.ClaimAnswered {
			r.Decision, r.DecidedBy = "answered in opencode", "opencode"
		} else if c.Verdict == string(store.VerdictDeny) {
			r.Reason = c.Reason
		}
		return r, nil
	}
	return store.Request{}, store.Errorf(s.path, store.ErrNoSuchReq, nil,
		"%s is not waiting in the opencode server at %s (answered there already, or never asked)", key, s.srv.url)
}

// CarriesReason: a reject's message reaches the model as the rejection's
// feedback (Permission.reply: CorrectedError, "The user rejected
// permission to use this specific tool call with the following feedback:
// <message>").
func (s *Store) CarriesReason(kind store.RequestKind, v store.Verdict) bool {
	return kind == store.Approval && v == store.VerdictDeny
}

// Classify: a request is answerable while the server lists it; Decide asks
// the server again.
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	if req.Resolved {
		return store.Closed, "already decided: " + store.DecisionWords(req)
	}
	return store.Deliverable, ""
}

// Decide answers a waiting request in the opencode server, exactly once
// among vigil's deciders: the decision is first claimed in vigil's gate
// store (gate.Hook.Claim, a compare-and-set on the request's key), and only
// the claim's winner sends it. The server itself answers an id once
// (Permission.reply deletes it from its pending map; a second reply is a
// 404), so a request answered in opencode's own TUI meanwhile loses the
// claim's winner the decision too, and it is told so.
func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	var res store.DecideResult
	if s.readOnly {
		return res, store.Errorf(s.path, store.ErrReadOnly, nil, "%s not decided: the store was opened read-only", d.Key)
	}
	reply := map[store.Verdict]string{store.VerdictApprove: "once", store.VerdictDeny: "reject"}[d.Verdict]
	if d.Key.Kind != store.Approval || reply == "" {
		return res, store.Errorf(s.path, store.ErrUnsupported, nil, "%s: an opencode permission is approved or denied", d.Key)
	}
	hook, err := gate.OpenHook(gate.Path(os.Getenv))
	if err != nil {
		return res, err
	}
	defer hook.Close()
	key := claimKey(d.Key.ID)
	if held, found, err := hook.Claimed(ctx, key); err != nil {
		return res, err
	} else if found {
		return lostTo(held), nil
	}
	dirs, err := s.runningDirs(ctx, nil)
	if err != nil {
		return res, err
	}
	pend, err := s.srv.pending(ctx, append(dirs, ""))
	if err != nil {
		return res, err
	}
	var p *permission
	for i := range pend {
		if pend[i].ID == d.Key.ID {
			p = &pend[i]
		}
	}
	if p == nil {
		// Not waiting: answered in opencode, as far as vigil saw it wait.
		r, err := s.Request(ctx, d.Key)
		if err != nil {
			return res, err
		}
		return store.DecideResult{Decision: r.Decision, DecidedBy: r.DecidedBy}, nil
	}
	reason := ""
	if d.Verdict == store.VerdictDeny {
		reason = d.Text
	}
	won, held, err := hook.Claim(ctx, gate.Claim{Key: key, Verdict: string(d.Verdict), Reason: reason})
	if err != nil {
		return res, err
	}
	if !won {
		return lostTo(held), nil
	}
	switch err := s.srv.reply(ctx, *p, reply, reason); {
	case err == nil:
		if err := hook.Settle(ctx, key, gate.ClaimSent); err != nil {
			return res, err
		}
		return store.DecideResult{Won: true, Decision: string(d.Verdict), DecidedBy: held.DecidedBy}, nil
	case errors.Is(err, errAnswered):
		// Answered in opencode between the listing and the reply.
		if err := hook.Settle(ctx, key, gate.ClaimAnswered); err != nil {
			return res, err
		}
		rs, err := s.requestsFrom(ctx, []permission{*p}, false)
		if err != nil || len(rs) == 0 {
			return store.DecideResult{Decision: "answered in opencode", DecidedBy: "opencode"}, err
		}
		return s.answeredIn(ctx, rs[0]), nil
	case refused(err):
		// The server was not there to take it: the request is as it was.
		hook.Release(ctx, key)
		return res, store.Errorf(s.path, store.ErrIO, err, "%s not decided: %v", d.Key, err)
	default:
		hook.Settle(ctx, key, "unknown: "+firstLine(err.Error()))
		return res, store.Errorf(s.path, store.ErrIO, err, "%s: whether opencode took the decision is unknown: %v", d.Key, err)
	}
}

// refused reports an error that left the request untouched: the server's
// port took no connection.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func claimKey(id string) string { return Format + " " + id }

// lostTo is a decision that lost the claim to held.
func lostTo(held gate.Claim) store.DecideResult {
	switch {
	case held.Outcome == gate.ClaimAnswered:
		return store.DecideResult{Decision: "answered in opencode", DecidedBy: "opencode"}
	case strings.HasPrefix(held.Outcome, "unknown"):
		return store.DecideResult{Decision: held.Verdict + ", sent, but whether opencode took it is unknown", DecidedBy: held.DecidedBy}
	}
	return store.DecideResult{Decision: held.Verdict, DecidedBy: held.DecidedBy}
}

// answeredIn is a request answered in opencode itself, as its tool call
// shows it.
func (s *Store) answeredIn(ctx context.Context, r store.Request) store.DecideResult {
	q := s.resolve(ctx, r)
	return store.DecideResult{Decision: q.Decision, DecidedBy: q.DecidedBy}
}

// runningDirs are the directories whose server instances can hold a
// waiting request: those of the sessions still running (a session waiting
// on a permission has its reply in flight; the server's own directory is
// one of them when its sessions run). None running: the server is not
// asked. running, when given, names those sessions (a cursor's).
func (s *Store) runningDirs(ctx context.Context, running []string) ([]string, error) {
	dirs := map[string]bool{}
	if running == nil {
		// Each session's last message (message_session_time_created_id_idx),
		// read as Runs reads a session's status.
		err := s.eachRow(ctx, `SELECT s.directory, s.time_created, (SELECT data FROM message m WHERE m.session_id = s.id
			ORDER BY m.time_created DESC, m.id DESC LIMIT 1) FROM session s`, nil, func(r *sql.Rows) error {
			var dir string
			var created int64
			var last []byte
			if err := r.Scan(&dir, &created, &last); err != nil {
				return err
			}
			var run store.Run
			var msg *message
			if m, err := decodeMessage(last); last != nil && err == nil {
				msg = &m
			}
			setStatus(&run, msg, created)
			if !run.Status.Ended() {
				dirs[dir] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, id := range running {
		err := s.eachRow(ctx, "SELECT directory FROM session WHERE id = ?", []any{id}, func(r *sql.Rows) error {
			var d string
			err := r.Scan(&d)
			dirs[d] = true
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(dirs))
	for d := range dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// requestsOf turns the server's pending requests into approvals of their
// sessions; those of sessions this database does not hold (another data
// directory's server) are left out. Each is remembered, so that it shows
// answered once it stops waiting.
func (s *Store) requestsOf(ctx context.Context, pend []permission) ([]store.Request, error) {
	return s.requestsFrom(ctx, pend, true)
}

// requestsFrom is requestsOf; remember says to record the new ones in the
// gate store (not when they came from it).
func (s *Store) requestsFrom(ctx context.Context, pend []permission, remember bool) ([]store.Request, error) {
	var out []store.Request
	for _, p := range pend {
		r, err := s.requestOf(ctx, p)
		if errors.Is(err, errNoRun) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if _, ok := s.seenRequest(r.ID); !ok && remember && !s.readOnly {
			s.remember(ctx, p)
		}
		s.mu.Lock()
		s.asked[r.ID] = r
		if p.Tool != nil {
			s.calls[r.ID] = [2]string{p.Tool.MessageID, p.Tool.CallID}
		}
		s.mu.Unlock()
	}
	return out, nil
}

func (s *Store) seenRequest(id string) (store.Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.asked[id]
	return r, ok
}

// requestOf is one pending request as an approval: the tool call it gates
// (its part, found by message and call id) gives the whole input and the
// time it started; its message's place among the session's replies, the
// step.
func (s *Store) requestOf(ctx context.Context, p permission) (store.Request, error) {
	if ok, err := s.hasSession(ctx, p.SessionID); err != nil {
		return store.Request{}, err
	} else if !ok {
		return store.Request{}, errNoRun
	}
	r := store.Request{Kind: store.Approval, ID: p.ID, RunID: p.SessionID, Act: actOf(p.Permission),
		Target: p.Permission + ": " + strings.Join(p.Patterns, " ")}
	if c, ok := p.Metadata["command"].(string); ok && c != "" {
		r.Target = p.Permission + ": " + c
	}
	if meta, err := json.Marshal(p.Metadata); err == nil {
		r.Content, r.HasContent, r.ContentBytes = string(meta), true, int64(len(meta))
	}
	if p.Tool != nil {
		err := s.eachRow(ctx, `SELECT json_extract(data, '$.state.input'), COALESCE(json_extract(data, '$.state.time.start'), time_created),
			(SELECT count(*) FROM message m WHERE m.session_id = ? AND (m.time_created, m.id) <= (SELECT time_created, id FROM message WHERE id = ?)
				AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'assistant')
			FROM part WHERE message_id = ? AND json_valid(data) AND json_extract(data, '$.callID') = ?`,
			[]any{p.SessionID, p.Tool.MessageID, p.Tool.MessageID, p.Tool.CallID}, func(rs *sql.Rows) error {
				var in sql.NullString
				var at int64
				if err := rs.Scan(&in, &at, &r.Step); err != nil {
					return err
				}
				if in.Valid && in.String != "" {
					r.Content, r.HasContent, r.ContentBytes = in.String, true, int64(len(in.String))
				}
				r.AskedAt = millis(at)
				return nil
			})
		if err != nil {
			return store.Request{}, err
		}
	}
	if len(r.Content) > store.MaxContentBytes {
		r.Content = r.Content[:store.MaxContentBytes]
	}
	anc, err := s.ancestry(ctx, p.SessionID)
	if err != nil {
		return store.Request{}, err
	}
	r.Ancestry = anc
	return r, nil
}

// ancestry is the chain of sessions from the root down to id.
func (s *Store) ancestry(ctx context.Context, id string) ([]string, error) {
	chain := []string{id}
	for seen := map[string]bool{id: true}; ; {
		parent := ""
		err := s.eachRow(ctx, "SELECT COALESCE(parent_id, '') FROM session WHERE id = ?", []any{chain[0]}, func(r *sql.Rows) error { return r.Scan(&parent) })
		if err != nil {
			return nil, err
		}
		if parent == "" || seen[parent] {
			return chain, nil
		}
		seen[parent] = true
		chain = append([]string{parent}, chain...)
	}
}

// answered are the requests this process saw waiting that the server no
// longer lists, each as it was answered.
func (s *Store) answered(ctx context.Context, waiting []store.Request) ([]store.Request, error) {
	still := map[string]bool{}
	for _, r := range waiting {
		still[r.ID] = true
	}
	var recalled []permission
	for _, p := range s.recall(ctx) {
		if _, ok := s.seenRequest(p.ID); !ok && !still[p.ID] {
			recalled = append(recalled, p)
		}
	}
	if _, err := s.requestsFrom(ctx, recalled, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var gone []store.Request
	for id, r := range s.asked {
		if !still[id] {
			gone = append(gone, r)
		}
	}
	s.mu.Unlock()
	sort.Slice(gone, func(i, j int) bool { return gone[i].ID < gone[j].ID })
	out := make([]store.Request, 0, len(gone))
	for _, r := range gone {
		out = append(out, s.resolve(ctx, r))
	}
	return out, nil
}

// resolve says how a request that no longer waits was answered: as vigil's
// claim says when vigil decided it, else as its tool call shows (opencode
// decided it: its TUI, another client, or a session cancelled), else
// answered with the verdict unknown. The answer is kept: it does not change.
func (s *Store) resolve(ctx context.Context, r store.Request) store.Request {
	s.mu.Lock()
	done, ok := s.done[r.ID]
	s.mu.Unlock()
	if ok {
		return done
	}
	r.Resolved = true
	if c, found := s.claim(ctx, r.ID); found && c.Outcome != gate.ClaimAnswered && !strings.HasPrefix(c.Outcome, "unknown") {
		r.Decision, r.DecidedBy, r.DecidedAt = c.Verdict, c.DecidedBy, c.DecidedAt
		if c.Verdict == string(store.VerdictDeny) {
			r.Reason = c.Reason
		}
	} else if v, reason := s.toolVerdict(ctx, r); v != "" {
		r.Decision, r.Reason, r.DecidedBy = v, reason, "opencode"
	} else {
		r.Decision, r.DecidedBy = "answered in opencode", "opencode"
		return r // the call may yet say how
	}
	s.mu.Lock()
	s.done[r.ID] = r
	s.mu.Unlock()
	return r
}

// claim reads vigil's claim on request id, when the gate store exists.
func (s *Store) claim(ctx context.Context, id string) (gate.Claim, bool) {
	p := gate.Path(os.Getenv)
	if _, err := os.Stat(p); err != nil {
		return gate.Claim{}, false
	}
	h, err := gate.OpenHook(p)
	if err != nil {
		return gate.Claim{}, false
	}
	defer h.Close()
	c, found, err := h.Claimed(ctx, claimKey(id))
	return c, found && err == nil
}

// rejectedText starts the error opencode records on a tool call whose
// permission was rejected (RejectedError, CorrectedError); a reason
// follows "with the following feedback: ".
const (
	rejectedText = "The user rejected permission to use this specific tool call"
	feedbackText = "with the following feedback: "
)

// toolVerdict reads an answered request's verdict from the tool call it
// gated: rejected (opencode records the rejection as the call's error,
// with the reason after it), or let through (the call ran on). Unknown
// while the call does not say yet.
func (s *Store) toolVerdict(ctx context.Context, r store.Request) (decision, reason string) {
	s.mu.Lock()
	call := s.calls[r.ID]
	s.mu.Unlock()
	var status, errText string
	if call[1] != "" {
		s.eachRow(ctx, `SELECT COALESCE(json_extract(data, '$.state.status'), ''), COALESCE(json_extract(data, '$.state.error'), '')
			FROM part WHERE message_id = ? AND json_valid(data) AND json_extract(data, '$.callID') = ?`, []any{call[0], call[1]},
			func(rs *sql.Rows) error { return rs.Scan(&status, &errText) })
	}
	switch {
	case status == "error" && strings.HasPrefix(errText, rejectedText):
		if _, fb, ok := strings.Cut(errText, feedbackText); ok {
			reason = fb
		}
		return string(store.VerdictDeny), reason
	case status == "running" || status == "completed" || status == "error":
		return string(store.VerdictApprove), ""
	}
	return "", ""
}

// actOf maps opencode's permission names onto the approval acts.
func actOf(permission string) string {
	switch permission {
	case "bash":
		return "exec"
	case "edit", "write", "apply_patch":
		return "write"
	case "read", "glob", "grep", "list":
		return "read"
	case "webfetch", "websearch":
		return "net"
	}
	return permission
}

// waitingIDs are the requests waiting in the server for the cursor's
// running sessions (none when no server answers).
func (s *Store) waitingIDs(ctx context.Context, c *Cursor) map[string]bool {
	ids := map[string]bool{}
	dirs, err := s.runningDirs(ctx, slices.Sorted(maps.Keys(c.sessions)))
	if err != nil {
		return ids
	}
	pend, err := s.srv.browse(ctx, dirs)
	if err != nil {
		return ids
	}
	reqs, _ := s.requestsOf(ctx, pend)
	for _, r := range reqs {
		ids[r.ID] = true
	}
	return ids
}

// permissionChanges adds to ch the requests asked in the server since the
// cursor, and those the cursor saw waiting that have been answered (a
// request whose answer its tool call does not show yet stays in the
// cursor until it does). With no server answering, nothing changes.
func (s *Store) permissionChanges(ctx context.Context, next *Cursor, ch *store.Changes) error {
	dirs, err := s.runningDirs(ctx, slices.Sorted(maps.Keys(next.sessions)))
	if err != nil {
		return err
	}
	pend, err := s.srv.browse(ctx, dirs)
	if err != nil {
		return nil
	}
	reqs, err := s.requestsOf(ctx, pend)
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for _, r := range reqs {
		now[r.ID] = true
		if !next.asked[r.ID] {
			ch.Requests = append(ch.Requests, r)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(next.asked)) {
		if now[id] {
			continue
		}
		r, ok := s.seenRequest(id)
		if !ok {
			continue
		}
		r = s.resolve(ctx, r)
		ch.Requests = append(ch.Requests, r)
		s.mu.Lock()
		_, known := s.done[id]
		s.mu.Unlock()
		if !known {
			now[id] = true // read again at the next change
		}
	}
	next.asked = now
	return nil
}

// remember records a waiting request in vigil's gate store (gate_seen), so
// that once answered in opencode it shows to any vigil process, not only
// to those that saw it wait. Best effort: a gate store that cannot be
// written leaves it to this process's memory. A store opened read-only
// writes nothing.
func (s *Store) remember(ctx context.Context, p permission) {
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	h, err := gate.OpenHook(gate.Path(os.Getenv))
	if err != nil {
		return
	}
	defer h.Close()
	h.Remember(ctx, claimKey(p.ID), string(b))
}

// recall reads the requests vigil has seen waiting in opencode servers.
func (s *Store) recall(ctx context.Context) []permission {
	path := gate.Path(os.Getenv)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	h, err := gate.OpenHook(path)
	if err != nil {
		return nil
	}
	defer h.Close()
	kvs, err := h.Remembered(ctx, claimKey(""))
	if err != nil {
		return nil
	}
	var out []permission
	for _, kv := range kvs {
		var p permission
		if json.Unmarshal([]byte(kv[1]), &p) == nil && p.ID != "" && p.SessionID != "" {
			out = append(out, p)
		}
	}
	return out
}
