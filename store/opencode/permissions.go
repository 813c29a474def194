package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
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
	var pend []permission
	// Which sessions run is read from every session's last message: not
	// when no server listens.
	if s.srv.listening(ctx) {
		dirs, err := s.runningDirs(ctx, nil)
		if err != nil {
			return nil, err
		}
		pend, _ = s.srv.browse(ctx, dirs)
	}
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
