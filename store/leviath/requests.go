package leviath

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vigil-run/vigil/store"
)

// NotDurable is why nothing can be decided through vigil: Leviath keeps its
// human-in-the-loop prompts in the daemon's memory and journals only the
// waiting_input status, so an answer written anywhere else would reach
// nobody.
const NotDurable = "Leviath's prompts are not durable: answer it in lev"

// trackWaiting opens an episode when the run enters waiting_input and
// closes it when it leaves.
func (rs *runState) trackWaiting(l *ledger, status string, at int64) {
	last := len(rs.episodes) - 1
	open := last >= 0 && !rs.episodes[last].resolved
	switch {
	case status == "waiting_input" && !open:
		rs.episodes = append(rs.episodes, episode{n: len(rs.episodes) + 1, askedAt: at, step: rs.turns})
		l.note(evRequest, rs, len(rs.episodes)-1)
	case status != "waiting_input" && status != "" && open:
		e := &rs.episodes[last]
		e.resolved, e.endStatus, e.resolvedAt = true, status, at
		l.noteUpdate(evRequest, rs, last)
	}
}

// interaction is what interactions.json says about the open prompt.
type interaction struct {
	text    string
	context string
	choices []string
}

// maxSidecar caps how much of a sidecar is read.
const maxSidecar = 1 << 20

// parseInteractions reads interactions.json leniently: Leviath's
// InteractionPointState is {cursor, round, body, …}, but the file's outer
// shape is not known (docs/formats/leviath.md, "Waiting on a human"), so
// the first object holding "body" (at any of the top levels) is taken.
func parseInteractions(b []byte) *interaction {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	obj, under := findBody(v, "", 0)
	if obj == nil {
		return nil
	}
	in := &interaction{}
	var ctx []string
	point := under
	for _, k := range []string{"point", "name", "kind", "id"} {
		if s, ok := obj[k].(string); ok && s != "" {
			point = s
			break
		}
	}
	if point != "" {
		ctx = append(ctx, "interaction point "+point)
	}
	if r, ok := obj["round"].(float64); ok {
		ctx = append(ctx, fmt.Sprintf("round %d of at most 4", int(r)))
	}
	in.context = strings.Join(ctx, " · ")
	body := obj["body"]
	in.text = textOf(body)
	in.choices = stringsOf(obj["choices"], obj["options"])
	if bo, ok := body.(map[string]any); ok && len(in.choices) == 0 {
		in.choices = stringsOf(bo["choices"], bo["options"])
	}
	return in
}

// findBody returns the first object holding "body" and the key it sits
// under ("" at the top).
func findBody(v any, key string, depth int) (map[string]any, string) {
	if depth > 3 {
		return nil, ""
	}
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["body"]; ok {
			return x, key
		}
		for _, k := range sortedKeys(x) {
			if o, name := findBody(x[k], k, depth+1); o != nil {
				return o, name
			}
		}
	case []any:
		for _, e := range x {
			if o, name := findBody(e, key, depth+1); o != nil {
				return o, name
			}
		}
	}
	return nil, ""
}

func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		for _, k := range []string{"prompt", "question", "text", "message", "content", "summary", "plan", "title"} {
			if s, ok := x[k].(string); ok && s != "" {
				return s
			}
		}
	case []any:
		var lines []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				lines = append(lines, s)
			}
		}
		if len(lines) == len(x) {
			return strings.Join(lines, "\n")
		}
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return cut(string(b), 4096)
}

func stringsOf(vs ...any) []string {
	for _, v := range vs {
		arr, ok := v.([]any)
		if !ok {
			continue
		}
		var out []string
		for _, e := range arr {
			switch x := e.(type) {
			case string:
				out = append(out, x)
			case map[string]any:
				if s := textOf(x); s != "" {
					out = append(out, firstLine(s))
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// reasonText says in words what HEAD's waiting_on reason waits for.
func reasonText(reason string, outstanding int64) string {
	switch reason {
	case "":
		return ""
	case "tool_approval":
		return "a tool approval (allow once / allow for this session / deny)"
	case "user_prompt":
		return "an answer to the model's question"
	case "taint_gate":
		return "a taint-gate approval"
	case "interaction_point":
		return "an interaction point (approve / directive / edit / abort)"
	case "fan_out_workers":
		return fmt.Sprintf("fan-out workers (%d outstanding)", outstanding)
	case "children":
		return fmt.Sprintf("sub-agents (%d outstanding)", outstanding)
	}
	return strings.ReplaceAll(reason, "_", " ")
}

// genericQuestion is the text of a prompt vigil cannot see.
const genericQuestion = "waits for input — Leviath does not journal its prompts; see the question in lev (lev dash, lev respond)"

// request builds the read-only Question for one waiting episode.
func (s *Store) request(rs *runState, ep *episode) store.Request {
	r := store.Request{Kind: store.Question, ID: reqID(rs.id, ep.n), RunID: rs.id, Step: ep.step,
		AskedAt: unixTime(ep.askedAt), Resolved: ep.resolved, Ancestry: s.ancestry(rs.id)}
	if ep.resolved {
		r.Decision, r.DecidedBy = "left waiting_input (now "+ep.endStatus+")", "lev"
	}
	var ctx []string
	if m, ok := rs.meta(); ok {
		if why := reasonText(m.waitingReason()); why != "" {
			ctx = append(ctx, "waiting on "+why)
		}
		if m.CurrentStage != "" {
			ctx = append(ctx, fmt.Sprintf("stage %s (%d of %d)", m.CurrentStage, m.StageIndex+1, max(m.NumStages, m.StageIndex+1)))
		}
	}
	switch {
	case !ep.resolved && rs.inter != nil && strings.TrimSpace(rs.inter.text) != "":
		r.Question = rs.inter.text
		r.Choices = rs.inter.choices
		if rs.inter.context != "" {
			ctx = append([]string{rs.inter.context}, ctx...)
		}
	default:
		r.Question = genericQuestion
	}
	ctx = append(ctx, NotDurable)
	r.Context = strings.Join(ctx, " · ")
	return r
}

// reqID is "<short run id>/<episode>": the 12-hex suffix of a Leviath run
// id, or the whole id when it has none.
func reqID(runID string, n int) string { return fmt.Sprintf("%s/%d", shortID(runID), n) }

func shortID(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || len(id)-i-1 != 12 {
		return id
	}
	for _, c := range id[i+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return id
		}
	}
	return id[i+1:]
}

// Requests returns the waiting_input episodes as read-only questions:
// open ones, and (unresolvedOnly false) the ones that ended.
func (s *Store) Requests(ctx context.Context, unresolvedOnly bool, runIDs ...string) ([]store.Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	if !unresolvedOnly {
		// Only a folded journal knows its waiting stretches; an unfolded
		// one has no open prompt (its meta.json said so).
		if err := s.settle(ctx, runIDs...); err != nil {
			return nil, err
		}
	}
	want := map[string]bool{}
	for _, id := range runIDs {
		want[id] = true
	}
	var out []store.Request
	for _, rs := range s.order {
		if len(want) > 0 && !want[rs.id] {
			continue
		}
		for i := range rs.episodes {
			ep := &rs.episodes[i]
			if unresolvedOnly && ep.resolved {
				continue
			}
			out = append(out, s.request(rs, ep))
		}
	}
	return out, nil
}

// Classify: nothing vigil writes reaches a Leviath run.
func (s *Store) Classify(req store.Request, run store.Run, lease *store.Lease, now time.Time) (store.Delivery, string) {
	switch {
	case req.Resolved:
		return store.Closed, "no longer waiting (" + orText(req.Decision, "-") + ")"
	case run.Status == store.StatusCompleted:
		return store.Closed, fmt.Sprintf("run %s has ended (%s)", run.ID, orText(string(run.Outcome), "-"))
	}
	return store.Deferred, NotDurable
}

// Decide refuses: Leviath is read-only in vigil.
func (s *Store) Decide(ctx context.Context, d store.Decision) (store.DecideResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return store.DecideResult{}, err
	}
	if d.Key.Kind == store.Question {
		for _, rs := range s.order {
			for i := range rs.episodes {
				if reqID(rs.id, rs.episodes[i].n) == d.Key.ID {
					return store.DecideResult{}, &store.RefusedError{Key: d.Key, Reason: NotDurable, Delivery: store.Deferred}
				}
			}
		}
	}
	return store.DecideResult{}, newErr(s.path, store.ErrNoSuchReq, "no such request: "+d.Key.String(), nil)
}

// sortedKeys keeps the sidecar walk deterministic.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
