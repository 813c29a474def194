package ioharness

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/internal/sqlitex"
	"github.com/vigil-run/vigil/store"
)

// Requests returns requests, approvals first, then questions, then plans,
// each oldest first. With unresolvedOnly, only what still waits on a human;
// with runIDs, only those runs' (nil means the whole store). Each carries the
// asking run's ancestry.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	var out []store.Request
	many := &runSet{ids: runIDs} // one set for the three kinds, made only if a row asks
	for _, k := range []store.RequestKind{store.Approval, store.Question, store.Plan} {
		reqs, err := s.requests(ctx, k, unresolvedOnly, runIDs, 0, many)
		if err != nil {
			return nil, err
		}
		out = append(out, reqs...)
	}
	if err := s.fillApprovalTimes(ctx, out); err != nil {
		return nil, err
	}
	if err := s.annotate(ctx, s.read, true, out); err != nil {
		return nil, mapDriverErr(s.path, err)
	}
	return out, s.fillAncestry(ctx, out)
}

// fillApprovalTimes dates approvals, which carry no time of their own, by
// the provider call that produced the asking step: the ask follows it
// within moments.
func (s *Store) fillApprovalTimes(ctx context.Context, reqs []store.Request) error {
	if !s.si().has("provider_calls") {
		return nil
	}
	for i := range reqs {
		r := &reqs[i]
		if r.Kind != store.Approval || !r.AskedAt.IsZero() {
			continue
		}
		var at sql.NullString
		err := s.eachRow(ctx, "SELECT MAX(at) FROM provider_calls WHERE run_id = ? AND step = ?",
			[]any{runNum(r.RunID), r.Step}, func(rows *sql.Rows) error { return rows.Scan(&at) })
		if err != nil {
			return err
		}
		r.AskedAt = nullTime(at)
	}
	return nil
}

// Request returns one request by kind and id.
func (s *Store) Request(ctx context.Context, key store.RequestKey) (store.Request, error) {
	id, ok := parseID(key.ID)
	if !ok {
		return store.Request{}, storeErr(s.path, store.ErrNoSuchReq, key.String(), nil)
	}
	reqs, err := s.requests(ctx, key.Kind, false, nil, id, nil)
	if err != nil {
		return store.Request{}, err
	}
	if len(reqs) == 0 {
		return store.Request{}, storeErr(s.path, store.ErrNoSuchReq, key.String(), nil)
	}
	if err := s.fillApprovalTimes(ctx, reqs); err != nil {
		return store.Request{}, err
	}
	if err := s.annotate(ctx, s.read, true, reqs); err != nil {
		return store.Request{}, mapDriverErr(s.path, err)
	}
	return reqs[0], s.fillAncestry(ctx, reqs)
}

func (s *Store) requests(ctx context.Context, kind store.RequestKind, unresolved bool, runIDs []string, id int64, many *runSet) ([]store.Request, error) {
	var q string
	var where []string
	switch kind {
	case store.Approval:
		q = "SELECT " + requestCols(store.Approval) + " FROM pending_approvals"
		if unresolved {
			where = append(where, "resolved IS NULL")
		}
	case store.Question:
		if !s.si().has("pending_questions") {
			return nil, nil
		}
		q = "SELECT id, run_id, step, question, context, choices, answer, answered_by, resolved, asked_at FROM pending_questions"
		if unresolved {
			where = append(where, "resolved = 0")
		}
	case store.Plan:
		if !s.si().has("plans") {
			return nil, nil
		}
		q = "SELECT id, run_id, step, steps, verdict, correction, decided_by, resolved, proposed_at FROM plans"
		if unresolved {
			where = append(where, "resolved = 0")
		}
	}
	var args []any
	if id != 0 {
		where = append(where, "id = ?")
		args = append(args, id)
	}
	// A whole tree's worth of ids (show ROOT on 100 k runs) is kept here
	// rather than named in SQL: preparing 100 k literals three times was a
	// tenth of the command.
	var want *runSet
	switch {
	case len(runIDs) > manyIDs:
		want = many
		if want == nil {
			want = &runSet{ids: runIDs}
		}
	case runIDs != nil:
		where = append(where, "run_id IN ("+sqlitex.IDList(parseIDs(runIDs))+")")
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id"
	var out []store.Request
	err := s.eachRow(ctx, q, args, func(r *sql.Rows) error {
		req, err := scanRequest(kind, r)
		if err == nil && want != nil && !want.has(runNum(req.RunID)) {
			return nil
		}
		out = append(out, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, s.contentHeads(ctx, out)
}

// contentHeads reads the heads of the approvals' contents requestCols left
// out for their size (a write's whole file, Store::put_pending in
// src/state/approvals.rs), a piece at a time.
func (s *Store) contentHeads(ctx context.Context, reqs []store.Request) error {
	for i := range reqs {
		r := &reqs[i]
		if r.Kind != store.Approval || !r.HasContent || r.Content != "" || r.ContentBytes == 0 {
			continue
		}
		h, _, err := s.head(ctx, "pending_approvals", "content", runNum(r.ID), store.MaxContentBytes)
		if err != nil {
			return err
		}
		r.Content = h
	}
	return nil
}

func scanRequest(kind store.RequestKind, r *sql.Rows) (store.Request, error) {
	var id, run int64
	req := store.Request{Kind: kind}
	switch kind {
	case store.Approval:
		var content, resolved sql.NullString
		var size sql.NullInt64
		if err := r.Scan(&id, &run, &req.Step, &req.Act, &req.Target, &content, &size, &resolved); err != nil {
			return req, err
		}
		// A content too long for SQL reads NULL with its size: its head is
		// read after the rows (contentHeads).
		req.Content, req.HasContent = content.String, content.Valid || size.Valid
		req.ContentBytes = size.Int64
		req.Resolved, req.Decision = resolved.Valid, resolved.String
	case store.Question:
		var context, choices, answer, by, asked sql.NullString
		var resolved int64
		if err := r.Scan(&id, &run, &req.Step, &req.Question, &context, &choices, &answer, &by, &resolved, &asked); err != nil {
			return req, err
		}
		req.Context = context.String
		if choices.Valid {
			// An undecodable list reads as no choices, as io-harness reads it.
			_ = json.Unmarshal([]byte(choices.String), &req.Choices)
		}
		req.Resolved, req.Decision, req.DecidedBy = resolved != 0, answer.String, by.String
		req.AskedAt = nullTime(asked)
	case store.Plan:
		var steps string
		var verdict, correction, by, proposed sql.NullString
		var resolved int64
		if err := r.Scan(&id, &run, &req.Step, &steps, &verdict, &correction, &by, &resolved, &proposed); err != nil {
			return req, err
		}
		var ps []struct {
			Intent string `json:"intent"`
			Agent  string `json:"agent"`
		}
		_ = json.Unmarshal([]byte(steps), &ps)
		for _, p := range ps {
			req.PlanSteps = append(req.PlanSteps, store.PlanStep{Intent: p.Intent, Agent: p.Agent})
		}
		req.Resolved, req.Decision, req.DecidedBy = resolved != 0, verdict.String, by.String
		req.Correction = correction.String
		req.AskedAt = nullTime(proposed)
	}
	req.ID, req.RunID = idStr(id), idStr(run)
	return req, nil
}

// fillAncestry says each request's run and the runs above it, read a
// level at a time from the requests' runs up: as many reads as the deepest
// tree is deep, never the parent of every run (100 k runs: 140 ms before
// the first frame).
func (s *Store) fillAncestry(ctx context.Context, reqs []store.Request) error {
	if len(reqs) == 0 {
		return nil
	}
	ids := make([]string, len(reqs))
	for i, r := range reqs {
		ids[i] = r.RunID
	}
	parents, err := s.parentsAbove(ctx, ids)
	if err != nil {
		return err
	}
	for i := range reqs {
		reqs[i].Ancestry = store.Ancestry(reqs[i].RunID, parents)
	}
	return nil
}

// parentsAbove maps runs and every run above them to their parents (""
// for a root, or a run the store does not hold). A cycle in parent_run_id
// ends where it comes back; 256 levels bound a chain.
func (s *Store) parentsAbove(ctx context.Context, runs []string) (map[string]string, error) {
	out := map[string]string{}
	if !s.si().hasCol("runs", "parent_run_id") {
		return out, nil
	}
	frontier := runs
	for depth := 0; len(frontier) > 0 && depth < 256; depth++ {
		var nums []int64
		for _, id := range frontier {
			if _, seen := out[id]; !seen {
				out[id] = "" // until its row says otherwise
				if n, ok := parseID(id); ok {
					nums = append(nums, n)
				}
			}
		}
		if len(nums) == 0 {
			break
		}
		frontier = frontier[:0:0]
		q := fmt.Sprintf("SELECT id, parent_run_id FROM runs WHERE id IN (%s)", sqlitex.IDList(nums))
		err := s.eachRow(ctx, q, nil, func(r *sql.Rows) error {
			var id int64
			var parent sql.NullInt64
			if err := r.Scan(&id, &parent); err != nil {
				return err
			}
			if p := nullIDStr(parent); p != "" {
				out[idStr(id)] = p
				frontier = append(frontier, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runSet is a long list of run ids (as text, or as numbers), made a set
// the first time a row is looked up in it: most stores hold no request of
// most kinds, and making the set of a 100 k-run tree for each kind was
// most of reading its (no) requests.
type runSet struct {
	ids  []string
	nums []int64
	set  map[int64]bool
}

func (r *runSet) has(run int64) bool {
	if r.set == nil {
		if r.nums == nil {
			r.nums = parseIDs(r.ids)
		}
		r.set = make(map[int64]bool, len(r.nums))
		for _, n := range r.nums {
			r.set[n] = true
		}
	}
	return r.set[run]
}
