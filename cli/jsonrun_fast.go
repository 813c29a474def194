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
	var err error
	b = append(b, `{"id":`...)
	b = appendJSONString(b, j.ID)
	b = append(b, `,"parent_id":`...)
	b = appendJSONStringPtr(b, j.ParentID)
	b = append(b, `,"root_id":`...)
	b = appendJSONString(b, j.RootID)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(j.Depth), 10)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, j.State)
	b = append(b, `,"status":`...)
	b = appendJSONStringPtr(b, j.Status)
	b = append(b, `,"outcome":`...)
	b = appendJSONStringPtr(b, j.Outcome)
	b = append(b, `,"success":`...)
	if j.Success == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendBool(b, *j.Success)
	}
	b = append(b, `,"goal":`...)
	b = appendJSONString(b, j.Goal)
	b = append(b, `,"workspace":`...)
	b = appendJSONStringPtr(b, j.Workspace)
	b = append(b, `,"provider":`...)
	b = appendJSONStringPtr(b, j.Provider)
	b = append(b, `,"turn_kind":`...)
	b = appendJSONStringPtr(b, j.TurnKind)
	b = append(b, `,"agent_steps":`...)
	b = appendJSONIntPtr(b, j.AgentSteps)
	b = append(b, `,"agent_tokens":`...)
	b = appendJSONInt64Ptr(b, j.AgentTokens)
	b = append(b, `,"tree_agents":`...)
	b = strconv.AppendInt(b, int64(j.TreeAgents), 10)
	b = append(b, `,"tree_steps":`...)
	b = appendJSONIntPtr(b, j.TreeSteps)
	b = append(b, `,"tree_tokens":`...)
	b = appendJSONInt64Ptr(b, j.TreeTokens)
	b = append(b, `,"started_at":`...)
	b = appendJSONStringPtr(b, j.StartedAt)
	b = append(b, `,"finished_at":`...)
	b = appendJSONStringPtr(b, j.FinishedAt)
	b = append(b, `,"duration_ms":`...)
	b = appendJSONInt64Ptr(b, j.DurationMS)
	b = append(b, `,"agent_waiting":`...)
	b = strconv.AppendInt(b, int64(j.AgentWait), 10)
	b = append(b, `,"tree_waiting":`...)
	b = strconv.AppendInt(b, int64(j.TreeWait), 10)
	b = append(b, `,"liveness":`...)
	b = appendJSONString(b, j.Liveness)
	b = append(b, `,"lease":`...)
	if j.Lease == nil {
		b = append(b, "null"...)
	} else if b, err = appendMarshal(b, j.Lease); err != nil {
		return nil, err
	}
	b = append(b, `,"recovery":`...)
	if j.Recovery == nil {
		b = append(b, "null"...)
	} else if b, err = appendMarshal(b, j.Recovery); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendMarshal(b []byte, v any) ([]byte, error) {
	m, err := json.Marshal(v)
	return append(b, m...), err
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
