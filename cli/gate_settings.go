package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// object is a JSON object that keeps its keys' order, so editing a
// settings file leaves the rest of it as the user wrote it.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(b []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		k := t.(string)
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	delete(o.vals, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// indent writes v as a settings file: two-space indents, a final newline.
func indent(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// isGateCommand tells vigil's own hook entry from the user's: a vigil
// binary's gate subcommand, or any binary's "gate --agent" as install
// writes it (a vigil renamed or run from a test binary).
func isGateCommand(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[1] != "gate" {
		return false
	}
	return strings.HasPrefix(filepath.Base(strings.Trim(f[0], `"'`)), "vigil") || len(f) > 2 && f[2] == "--agent"
}

// hookGroup is one matcher group of a JSON settings file's hooks.
type hookGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	} `json:"hooks"`
}

// editClaudeSettings removes vigil's gate hooks from every event of a
// Claude Code settings file and, when add is set, adds the one for event;
// the user's other hooks and settings stay as they were.
func editClaudeSettings(old []byte, add bool, event, matcher, command string, timeoutSec int) ([]byte, error) {
	return editHookGroups(old, nil, func(hooks *object) {
		if add {
			appendGroup(hooks, event, map[string]any{"matcher": matcher,
				"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": timeoutSec}}})
		}
	})
}

// editHookGroups edits the hooks object of a JSON settings file laid out
// as Claude Code's and Gemini CLI's are (hooks.EVENT: a list of matcher
// groups of command hooks): it removes every group that is vigil's gate,
// leaves the keys of hooks named in notEvents as they are, and lets add
// put vigil's group in. Every other key keeps its place.
func editHookGroups(old []byte, notEvents map[string]bool, add func(hooks *object)) ([]byte, error) {
	top, err := parseObject(old)
	if err != nil {
		return nil, err
	}
	hooks, err := parseObject(top.vals["hooks"])
	if err != nil {
		return nil, fmt.Errorf("hooks: %v", err)
	}
	for _, ev := range append([]string(nil), hooks.keys...) {
		if notEvents[ev] {
			continue
		}
		var groups []json.RawMessage
		if err := json.Unmarshal(hooks.vals[ev], &groups); err != nil {
			return nil, fmt.Errorf("hooks.%s: not a list", ev)
		}
		kept := groups[:0]
		for _, g := range groups {
			var e hookGroup
			ours := json.Unmarshal(g, &e) == nil && len(e.Hooks) == 1 && isGateCommand(e.Hooks[0].Command)
			if !ours {
				kept = append(kept, g)
			}
		}
		switch {
		case len(kept) == len(groups):
		case len(kept) == 0:
			hooks.del(ev)
		default:
			b, _ := json.Marshal(kept)
			hooks.set(ev, b)
		}
	}
	add(hooks)
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		b, _ := hooks.MarshalJSON()
		top.set("hooks", b)
	}
	return indent(top)
}

// appendGroup adds group at the end of hooks.event.
func appendGroup(hooks *object, event string, group any) {
	var groups []json.RawMessage
	if v, ok := hooks.vals[event]; ok {
		json.Unmarshal(v, &groups)
	}
	g, _ := json.Marshal(group)
	b, _ := json.Marshal(append(groups, g))
	hooks.set(event, b)
}
