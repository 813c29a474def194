package ioharness

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/store"
)

// liveEvent decodes an event's JSON once into a struct; it reads what the
// map of raw values it replaced read (liveEventByMap, kept here as the
// oracle), for every kind the stream carries and for fields of the wrong
// type.
func TestLiveEventAsByMap(t *testing.T) {
	raws := []string{
		`{"event":"started","provider":"anthropic"}`,
		`{"event":"token","text":"héllo \u00e9"}`, `{"event":"reasoning","text":"hmm"}`,
		`{"event":"tool_call","name":"run","target":"go test"}`, `{"event":"tool_call","name":7,"target":"x"}`,
		`{"event":"server_tool_used","provider":"p","tool":"web","ok":false}`, `{"event":"server_tool_used","provider":"p","tool":"web","ok":true}`,
		`{"event":"server_tool_used","provider":"p","tool":"web","ok":"no"}`,
		`{"event":"retry","kind":"rate_limit","attempt":2,"delay_ms":1500}`, `{"event":"retry","kind":"x","attempt":2.5,"delay_ms":"7"}`,
		`{"event":"approval_requested","act":"write","target":"a.md"}`, `{"event":"question_asked","question":"why?"}`,
		`{"event":"plan_proposed","plan_id":3,"steps":[{"a":1},2,"x"]}`, `{"event":"plan_proposed","plan_id":3,"steps":{"a":1}}`,
		`{"event":"recovery_paused","tool":"run"}`, `{"event":"approval_decided","decision":"deny","act":"write","target":"b"}`,
		`{"event":"question_answered","by":"ana"}`, `{"event":"plan_decided","verdict":"approve","by":"bo"}`,
		`{"event":"spawned","child_run_id":12,"goal":"write docs"}`, `{"event":"fleet","tier":1,"working":3,"queued":2,"done":9}`,
		`{"event":"handle_started","line":"make"}`, `{"event":"handle_polled","handle":4,"bytes":900}`,
		`{"event":"handle_exited","handle":4,"code":2}`, `{"event":"handle_exited","handle":4,"code":null}`, `{"event":"handle_exited","handle":4}`, `{"event":"handle_exited","handle":"4","code":"x"}`, `{"event":"handle_exited","handle":4,"code":1.5}`,
		`{"event":"handle_killed","handle":4}`, `{"event":"handle_orphaned","handle":4}`,
		`{"event":"reviewed","passed":true}`, `{"event":"reviewed","passed":false}`, `{"event":"reviewed","passed":"yes"}`,
		`{"event":"sandbox","kind":"gate_phase_failed"}`, `{"event":"sandbox","kind":"denied"}`, `{"event":"mcp","server":"gh","tool":"pr"}`,
		`{"event":"refused","act":"exec","target":"rm"}`, `{"event":"fell_back_to","provider":"openai"}`,
		`{"event":"compacted","through_step":9,"before_tokens":9000,"after_tokens":1200}`,
		`{"event":"step","decision":"ran it"}`, `{"event":"finished","outcome":"success"}`, `{"event":"novel","x":1}`,
		`{"event":"token","text":"cut`, `not json`, ``, `{"event":5}`,
	}
	for _, raw := range raws {
		for _, name := range []string{"", "token"} {
			got, want := store.RunEvent{Name: name}, store.RunEvent{Name: name}
			liveEvent(&got, raw)
			liveEventByMap(&want, raw)
			if got != want {
				t.Errorf("%s (kind column %q): %+v, by map %+v", raw, name, got, want)
			}
		}
	}
}

func liveEventByMap(e *store.RunEvent, raw string) {
	var v map[string]json.RawMessage
	_ = json.Unmarshal([]byte(raw), &v)
	if e.Name == "" {
		_ = json.Unmarshal(v["event"], &e.Name)
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(v[k], &s)
		return s
	}
	num := func(k string) int64 {
		var n int64
		_ = json.Unmarshal(v[k], &n)
		return n
	}
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, " ")
	}
	e.Kind = store.LiveOther
	switch e.Name {
	case "started":
		e.Kind, e.Text = store.LiveStarted, str("provider")
	case "token":
		e.Kind, e.Size = store.LiveModel, len(str("text"))
	case "reasoning":
		e.Kind, e.Size, e.Text = store.LiveModel, len(str("text")), "thinking"
	case "tool_call":
		e.Kind, e.Text = store.LiveTool, join(str("name"), str("target"))
	case "server_tool_used":
		e.Kind, e.Text = store.LiveModel, join(str("provider"), "ran", str("tool"))
		var ok bool
		if json.Unmarshal(v["ok"], &ok) == nil && !ok {
			e.Text += " (failed)"
		}
	case "retry":
		e.Kind, e.Text = store.LiveRetry, fmt.Sprintf("%s, attempt %d", str("kind"), num("attempt"))
		e.Wait = time.Duration(num("delay_ms")) * time.Millisecond
	case "approval_requested":
		e.Kind, e.Text = store.LiveWaiting, join("approval:", str("act"), str("target"))
	case "question_asked":
		e.Kind, e.Text = store.LiveWaiting, join("question:", str("question"))
	case "plan_proposed":
		var steps []json.RawMessage
		_ = json.Unmarshal(v["steps"], &steps)
		e.Kind, e.Text = store.LiveWaiting, fmt.Sprintf("plan %d of %d step(s)", num("plan_id"), len(steps))
	case "recovery_paused":
		e.Kind, e.Text = store.LiveWaiting, join("recovery:", str("tool"))
	case "approval_decided":
		e.Kind, e.Text = store.LiveDecided, join(str("decision"), str("act"), str("target"))
	case "question_answered":
		e.Kind, e.Text = store.LiveDecided, join("answered by", str("by"))
	case "plan_decided":
		e.Kind, e.Text = store.LiveDecided, join(str("verdict"), "by", str("by"))
	case "spawned":
		e.Kind, e.Text = store.LiveSpawned, join(fmt.Sprintf("#%d", num("child_run_id")), str("goal"))
	case "fleet":
		e.Kind, e.Text = store.LiveSpawned, fmt.Sprintf("tier %d: %d working, %d queued, %d done", num("tier"), num("working"), num("queued"), num("done"))
	case "handle_started":
		e.Kind, e.Text = store.LiveProcess, str("line")
	case "handle_polled":
		e.Kind, e.Text = store.LiveProcess, fmt.Sprintf("handle %d: %d bytes", num("handle"), num("bytes"))
	case "handle_exited":
		e.Text = fmt.Sprintf("handle %d exited", num("handle"))
		var code *int64
		if json.Unmarshal(v["code"], &code) == nil && code != nil {
			e.Text += fmt.Sprintf(" (%d)", *code)
		}
	case "handle_killed":
		e.Text = fmt.Sprintf("handle %d killed", num("handle"))
	case "handle_orphaned":
		e.Text = fmt.Sprintf("handle %d orphaned", num("handle"))
	case "reviewed":
		var passed bool
		_ = json.Unmarshal(v["passed"], &passed)
		e.Kind, e.Text = store.LiveGate, "review failed"
		if passed {
			e.Text = "review passed"
		}
	case "sandbox":
		e.Text = join("sandbox", str("kind"))
		if str("kind") == "gate_phase_failed" {
			e.Kind = store.LiveGate
		}
	case "mcp":
		e.Text = join("mcp", str("server"), str("tool"))
	case "refused":
		e.Text = join("refused", str("act"), str("target"))
	case "fell_back_to":
		e.Text = join("fell back to", str("provider"))
	case "compacted":
		e.Text = fmt.Sprintf("compacted through step %d: %d → %d tokens", num("through_step"), num("before_tokens"), num("after_tokens"))
	case "step":
		e.Kind, e.Text = store.LiveStep, str("decision")
	case "finished":
		e.Kind, e.Text = store.LiveFinished, str("outcome")
	}
}
