package union

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vigil-run/vigil/store"
)

// Ids of the set are "<prefix>/<the store's own id>". No store's own id
// holds the prefix's slash at its start, and a prefix holds no slash, so
// the first slash always splits them.

// prefixes gives each store a short prefix from its name: the base name
// without its extension, letters, digits, '.', '_' and '-' only, at most
// 12 of them; "s<n>" when nothing is left; a name already taken gets its
// position added ("runs", "runs2").
func prefixes(names []string) []string {
	out := make([]string, len(names))
	taken := map[string]bool{}
	for i, n := range names {
		base := strings.TrimSuffix(n, "/")
		if j := strings.LastIndexAny(base, "/"); j >= 0 {
			base = base[j+1:]
		}
		base = strings.TrimSuffix(base, filepath.Ext(base))
		var b strings.Builder
		for _, r := range base {
			if r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				b.WriteRune(r)
			}
			if b.Len() == 12 {
				break
			}
		}
		p := strings.Trim(b.String(), ".")
		if p == "" {
			p = "s" + strconv.Itoa(i+1)
		}
		if taken[p] {
			for k := i + 1; ; k++ {
				if q := p + strconv.Itoa(k); !taken[q] {
					p = q
					break
				}
			}
		}
		taken[p] = true
		out[i] = p
	}
	return out
}

func join(prefix, id string) string {
	if id == "" {
		return ""
	}
	return prefix + "/" + id
}

// split is an id of the set as its prefix and the store's own id.
func split(id string) (prefix, own string, ok bool) {
	i := strings.IndexByte(id, '/')
	if i <= 0 {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

func joinAll(prefix string, ids []string) []string {
	if ids == nil {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = join(prefix, id)
	}
	return out
}

func outRun(p string, r store.Run) store.Run {
	r.ID, r.ParentID = join(p, r.ID), join(p, r.ParentID)
	return r
}

func inRun(r store.Run) store.Run {
	_, r.ID, _ = split(r.ID)
	if r.ParentID != "" {
		_, r.ParentID, _ = split(r.ParentID)
	}
	return r
}

func outRequest(p string, q store.Request) store.Request {
	q.ID, q.RunID, q.Ancestry = join(p, q.ID), join(p, q.RunID), joinAll(p, q.Ancestry)
	return q
}

func inRequest(q store.Request) store.Request {
	_, q.ID, _ = split(q.ID)
	_, q.RunID, _ = split(q.RunID)
	if q.Ancestry != nil {
		a := make([]string, len(q.Ancestry))
		for i, id := range q.Ancestry {
			_, a[i], _ = split(id)
		}
		q.Ancestry = a
	}
	return q
}

func outStep(p string, s store.Step) store.Step {
	s.RunID = join(p, s.RunID)
	return s
}

func outEvent(p string, e store.AgentEvent) store.AgentEvent {
	e.RunID, e.ChildRunID = join(p, e.RunID), join(p, e.ChildRunID)
	return e
}

func outSample(p string, s store.ContextSample) store.ContextSample {
	s.RunID = join(p, s.RunID)
	return s
}

func outCall(p string, c store.ProviderCall) store.ProviderCall {
	c.RunID = join(p, c.RunID)
	return c
}

func outDetail(p string, d store.StepDetail) store.StepDetail {
	d.Step = outStep(p, d.Step)
	for i := range d.ProviderCalls {
		d.ProviderCalls[i] = outCall(p, d.ProviderCalls[i])
	}
	for i := range d.Policy {
		d.Policy[i].RunID = join(p, d.Policy[i].RunID)
	}
	for i := range d.Citations {
		d.Citations[i].RunID = join(p, d.Citations[i].RunID)
	}
	for i := range d.ServerTools {
		d.ServerTools[i].RunID = join(p, d.ServerTools[i].RunID)
	}
	return d
}

func outEventPtr(p string, e *store.RunEvent) *store.RunEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.RunID = join(p, c.RunID)
	return &c
}

func outFacts(p string, f store.RunFacts) store.RunFacts {
	f.RunID = join(p, f.RunID)
	for i := range f.ContextEvents {
		f.ContextEvents[i].RunID = join(p, f.ContextEvents[i].RunID)
	}
	for i := range f.Citations {
		f.Citations[i].RunID = join(p, f.Citations[i].RunID)
	}
	for i := range f.ServerTools {
		f.ServerTools[i].RunID = join(p, f.ServerTools[i].RunID)
	}
	for i := range f.Memory {
		f.Memory[i].RunID = join(p, f.Memory[i].RunID)
	}
	for i := range f.Audit {
		f.Audit[i].RunID = join(p, f.Audit[i].RunID)
	}
	for i := range f.Queued {
		f.Queued[i].ParentID = join(p, f.Queued[i].ParentID)
	}
	for i := range f.Messages {
		f.Messages[i].FromID = join(p, f.Messages[i].FromID)
	}
	for i := range f.Processes {
		f.Processes[i].RunID = join(p, f.Processes[i].RunID)
	}
	f.LastEvent = outEventPtr(p, f.LastEvent)
	return f
}

func outActivity(p string, a store.Activity) store.Activity {
	out := store.Activity{Recorded: a.Recorded, Through: a.Through,
		Todos:     rekey(p, a.Todos, nil),
		Queued:    rekey(p, a.Queued, func(q *store.QueuedAgent) { q.ParentID = join(p, q.ParentID) }),
		Unread:    rekey(p, a.Unread, func(m *store.AgentMessage) { m.FromID = join(p, m.FromID) }),
		Processes: rekey(p, a.Processes, func(x *store.Process) { x.RunID = join(p, x.RunID) }),
	}
	for _, e := range a.Events {
		e.RunID = join(p, e.RunID)
		out.Events = append(out.Events, e)
	}
	return out
}

// rekey is m with each run id given the store's prefix, and fix applied to
// every value (the ids it holds); nil stays nil.
func rekey[T any](p string, m map[string][]T, fix func(*T)) map[string][]T {
	if m == nil {
		return nil
	}
	out := make(map[string][]T, len(m))
	for id, v := range m {
		if fix != nil {
			for i := range v {
				fix(&v[i])
			}
		}
		out[join(p, id)] = v
	}
	return out
}
