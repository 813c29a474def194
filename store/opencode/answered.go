package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"sort"
	"strings"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/gate"
)

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
