package cli

import (
	"encoding/json"
	"strconv"
	"sync"
)

// appendRunJSON appends json.Marshal(j)'s exact bytes, written out by hand:
// reflection over jsonRun was a sixth of `runs --json` on 100 k runs. A
// string with anything encoding/json escapes, and the nested lease and
// recovery objects, still go through json.Marshal, so the output cannot
// drift from it (jsonrun_fast_test.go holds them equal).
func appendRunJSON(b []byte, j *jsonRun) ([]byte, error) {
	o := jsonObj{b: b, keys: runKeyTextFor(false, "")}
	err := o.run(j)
	return o.b, err
}

// appendRunJSONIndented appends what indentJSON makes of appendRunJSON's
// bytes at prefix, written indented in the first place: indenting 100 k
// runs after the fact was a fifth of `runs --json`.
func appendRunJSONIndented(b []byte, j *jsonRun, prefix string) ([]byte, error) {
	o := jsonObj{b: b, indent: true, prefix: prefix, keys: runKeyTextFor(true, prefix)}
	err := o.run(j)
	return o.b, err
}

// jsonObj writes one run's members, compact or as indentJSON lays them
// out (each member on a line of its own, two spaces in from prefix).
type jsonObj struct {
	b      []byte
	indent bool
	prefix string
	keys   *runKeyText
}

// runKey is a jsonRun member, in the order json.Marshal writes them.
type runKey int

const (
	kID runKey = iota
	kParentID
	kRootID
	kDepth
	kState
	kStatus
	kOutcome
	kSuccess
	kGoal
	kWorkspace
	kProvider
	kTurnKind
	kAgentSteps
	kAgentTokens
	kTreeAgents
	kTreeSteps
	kTreeTokens
	kStartedAt
	kFinishedAt
	kDurationMS
	kAgentWaiting
	kTreeWaiting
	kLiveness
	kLease
	kRecovery
	runKeys
)

var runKeyNames = [runKeys]string{"id", "parent_id", "root_id", "depth", "state", "status", "outcome", "success", "goal", "workspace", "provider", "turn_kind", "agent_steps", "agent_tokens", "tree_agents", "tree_steps", "tree_tokens", "started_at", "finished_at", "duration_ms", "agent_waiting", "tree_waiting", "liveness", "lease", "recovery"}

// runKeyText is each member's opening as written: the comma before it
// (none before the first), the line break and indent, the quoted name and
// the colon. Putting those together byte by byte for every member of 100 k
// runs was a tenth of `runs --json`.
type runKeyText [runKeys]string

// The openings, made once: compact, and by indent prefix (a list's runs
// all share one).
var (
	compactRunKeys = sync.OnceValue(func() *runKeyText { return makeRunKeyText(false, "") })
	indentRunKeys  sync.Map // prefix → *runKeyText
)

func runKeyTextFor(indent bool, prefix string) *runKeyText {
	if !indent {
		return compactRunKeys()
	}
	if t, ok := indentRunKeys.Load(prefix); ok {
		return t.(*runKeyText)
	}
	t, _ := indentRunKeys.LoadOrStore(prefix, makeRunKeyText(true, prefix))
	return t.(*runKeyText)
}

func makeRunKeyText(indent bool, prefix string) *runKeyText {
	var t runKeyText
	for k, name := range runKeyNames {
		var b []byte
		if k > 0 {
			b = append(b, ',')
		}
		if indent {
			b = append(b, '\n')
			b = append(b, prefix...)
			b = append(b, "  "...)
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		if indent {
			b = append(b, ' ')
		}
		t[k] = string(b)
	}
	return &t
}

// key opens member k.
func (o *jsonObj) key(k runKey) { o.b = append(o.b, o.keys[k]...) }

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
	o.key(kID)
	o.b = appendJSONString(o.b, j.ID)
	o.key(kParentID)
	o.b = appendJSONStringPtr(o.b, j.ParentID)
	o.key(kRootID)
	o.b = appendJSONString(o.b, j.RootID)
	o.key(kDepth)
	o.b = strconv.AppendInt(o.b, int64(j.Depth), 10)
	o.key(kState)
	o.b = appendJSONString(o.b, j.State)
	o.key(kStatus)
	o.b = appendJSONStringPtr(o.b, j.Status)
	o.key(kOutcome)
	o.b = appendJSONStringPtr(o.b, j.Outcome)
	o.key(kSuccess)
	if j.Success == nil {
		o.b = append(o.b, "null"...)
	} else {
		o.b = strconv.AppendBool(o.b, *j.Success)
	}
	o.key(kGoal)
	o.b = appendJSONString(o.b, j.Goal)
	o.key(kWorkspace)
	o.b = appendJSONStringPtr(o.b, j.Workspace)
	o.key(kProvider)
	o.b = appendJSONStringPtr(o.b, j.Provider)
	o.key(kTurnKind)
	o.b = appendJSONStringPtr(o.b, j.TurnKind)
	o.key(kAgentSteps)
	o.b = appendJSONIntPtr(o.b, j.AgentSteps)
	o.key(kAgentTokens)
	o.b = appendJSONInt64Ptr(o.b, j.AgentTokens)
	o.key(kTreeAgents)
	o.b = strconv.AppendInt(o.b, int64(j.TreeAgents), 10)
	o.key(kTreeSteps)
	o.b = appendJSONIntPtr(o.b, j.TreeSteps)
	o.key(kTreeTokens)
	o.b = appendJSONInt64Ptr(o.b, j.TreeTokens)
	o.key(kStartedAt)
	o.b = appendJSONStringPtr(o.b, j.StartedAt)
	o.key(kFinishedAt)
	o.b = appendJSONStringPtr(o.b, j.FinishedAt)
	o.key(kDurationMS)
	o.b = appendJSONInt64Ptr(o.b, j.DurationMS)
	o.key(kAgentWaiting)
	o.b = strconv.AppendInt(o.b, int64(j.AgentWait), 10)
	o.key(kTreeWaiting)
	o.b = strconv.AppendInt(o.b, int64(j.TreeWait), 10)
	o.key(kLiveness)
	o.b = appendJSONString(o.b, j.Liveness)
	o.key(kLease)
	if j.Lease == nil {
		o.b = append(o.b, "null"...)
	} else if err := o.nested(j.Lease); err != nil {
		return err
	}
	o.key(kRecovery)
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
