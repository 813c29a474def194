package cli

import (
	"encoding/json"
	"strconv"
)

// appendRunJSON appends json.Marshal(j)'s exact bytes, written out by hand:
// reflection over jsonRun was a sixth of `runs --json` on 100 k runs. A
// string with anything encoding/json escapes, and the nested lease and
// recovery objects, still go through json.Marshal, so the output cannot
// drift from it (jsonrun_fast_test.go holds them equal).
func appendRunJSON(b []byte, j *jsonRun) ([]byte, error) {
	o := jsonObj{b: b}
	err := o.run(j)
	return o.b, err
}

// appendRunJSONIndented appends what indentJSON makes of appendRunJSON's
// bytes at prefix, written indented in the first place: indenting 100 k
// runs after the fact was a fifth of `runs --json`.
func appendRunJSONIndented(b []byte, j *jsonRun, prefix string) ([]byte, error) {
	o := jsonObj{b: b, indent: true, prefix: prefix}
	err := o.run(j)
	return o.b, err
}

// jsonObj writes one object's members, compact or as indentJSON lays them
// out (each member on a line of its own, two spaces in from prefix).
type jsonObj struct {
	b      []byte
	indent bool
	prefix string
	n      int // members written
}

// key opens a member; name is printable ASCII that needs no escape.
func (o *jsonObj) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	if o.indent {
		o.b = append(o.b, '\n')
		o.b = append(o.b, o.prefix...)
		o.b = append(o.b, "  "...)
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
	if o.indent {
		o.b = append(o.b, ' ')
	}
}

// nested writes a member's value through json.Marshal, indented one level
// deeper than the object's members.
func (o *jsonObj) nested(v any) error {
	m, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if o.indent {
		o.b = indentJSON(o.b, m, o.prefix+"  ")
	} else {
		o.b = append(o.b, m...)
	}
	return nil
}

func (o *jsonObj) run(j *jsonRun) error {
	o.b = append(o.b, '{')
	o.key("id")
	o.b = appendJSONString(o.b, j.ID)
	o.key("parent_id")
	o.b = appendJSONStringPtr(o.b, j.ParentID)
	o.key("root_id")
	o.b = appendJSONString(o.b, j.RootID)
	o.key("depth")
	o.b = strconv.AppendInt(o.b, int64(j.Depth), 10)
	o.key("state")
	o.b = appendJSONString(o.b, j.State)
	o.key("status")
	o.b = appendJSONStringPtr(o.b, j.Status)
	o.key("outcome")
	o.b = appendJSONStringPtr(o.b, j.Outcome)
	o.key("success")
	if j.Success == nil {
		o.b = append(o.b, "null"...)
	} else {
		o.b = strconv.AppendBool(o.b, *j.Success)
	}
	o.key("goal")
	o.b = appendJSONString(o.b, j.Goal)
	o.key("workspace")
	o.b = appendJSONStringPtr(o.b, j.Workspace)
	o.key("provider")
	o.b = appendJSONStringPtr(o.b, j.Provider)
	o.key("turn_kind")
	o.b = appendJSONStringPtr(o.b, j.TurnKind)
	o.key("agent_steps")
	o.b = appendJSONIntPtr(o.b, j.AgentSteps)
	o.key("agent_tokens")
	o.b = appendJSONInt64Ptr(o.b, j.AgentTokens)
	o.key("tree_agents")
	o.b = strconv.AppendInt(o.b, int64(j.TreeAgents), 10)
	o.key("tree_steps")
	o.b = appendJSONIntPtr(o.b, j.TreeSteps)
	o.key("tree_tokens")
	o.b = appendJSONInt64Ptr(o.b, j.TreeTokens)
	o.key("started_at")
	o.b = appendJSONStringPtr(o.b, j.StartedAt)
	o.key("finished_at")
	o.b = appendJSONStringPtr(o.b, j.FinishedAt)
	o.key("duration_ms")
	o.b = appendJSONInt64Ptr(o.b, j.DurationMS)
	o.key("agent_waiting")
	o.b = strconv.AppendInt(o.b, int64(j.AgentWait), 10)
	o.key("tree_waiting")
	o.b = strconv.AppendInt(o.b, int64(j.TreeWait), 10)
	o.key("liveness")
	o.b = appendJSONString(o.b, j.Liveness)
	o.key("lease")
	if j.Lease == nil {
		o.b = append(o.b, "null"...)
	} else if err := o.nested(j.Lease); err != nil {
		return err
	}
	o.key("recovery")
	if j.Recovery == nil {
		o.b = append(o.b, "null"...)
	} else if err := o.nested(j.Recovery); err != nil {
		return err
	}
	if o.indent {
		o.b = append(o.b, '\n')
		o.b = append(o.b, o.prefix...)
	}
	o.b = append(o.b, '}')
	return nil
}

// appendJSONString writes s quoted; only printable ASCII that encoding/json
// leaves alone is written directly.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			m, _ := json.Marshal(s) // a string always marshals
			return append(b, m...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

func appendJSONIntPtr(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func appendJSONInt64Ptr(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}
