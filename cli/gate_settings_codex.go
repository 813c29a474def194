package cli

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Codex keeps its hooks in config.toml ([[hooks.PreToolUse]] groups, each
// with [[hooks.PreToolUse.hooks]] handlers). No Go TOML library writes a
// file back with its comments and layout, so vigil edits the text: it
// finds its own group by its table headers and replaces, removes or
// appends that group's lines only, then decodes the old and the new file
// and checks that nothing but vigil's group differs.

// codexTrustNote is what install says about Codex's hook trust: Codex runs
// a user's hook only once its hash is trusted (discovery.rs
// hook_trust_status), which vigil leaves to the user.
const codexTrustNote = `Codex runs a new or changed hook only once you trust it: start codex and review
it under /hooks (or run codex with --dangerously-bypass-hook-trust).`

// codexGateMarker starts the comment line install writes above its group.
const codexGateMarker = "# vigil gate:"

// codexConfigPath is the config.toml of a scope, as Codex finds it: the
// user's under $CODEX_HOME (else ~/.codex), the project's in ./.codex
// (which Codex reads only in a project it trusts).
func (a *app) codexConfigPath(scope string) (string, error) {
	return a.scopedFile(scope, a.getenv("CODEX_HOME"), ".codex", "config.toml", "Codex's config")
}

// gateInstallCodex is `vigil gate install|uninstall codex`.
func (a *app) gateInstallCodex(o gateInstallOpts, install bool) error {
	if err := checkInstall(o, install, "PermissionRequest", "PreToolUse"); err != nil {
		return err
	}
	path, err := a.codexConfigPath(o.scope)
	if err != nil {
		return err
	}
	changed, err := a.rewriteSettings(path, install, func(old []byte, exe string) ([]byte, error) {
		command := fmt.Sprintf("%s gate --agent codex --timeout %s", shellQuote(exe), o.timeout)
		return editCodexConfig(old, install, o.event, o.matcher, command, hookTimeout(o.timeout, time.Second))
	})
	if changed && install {
		fmt.Fprintln(a.out(), codexTrustNote)
	}
	return err
}

// editCodexConfig removes vigil's gate groups from every hook event of a
// Codex config.toml and, when add is set, puts the one for event in: in
// place of vigil's group for that event when there is one (Codex keys a
// hook's trust by its position, so the user's groups after it keep
// theirs), else at the end. Everything else stays byte for byte.
func editCodexConfig(old []byte, add bool, event, matcher, command string, timeoutSec int) ([]byte, error) {
	before, err := decodeTOML(old)
	if err != nil {
		return nil, fmt.Errorf("not TOML Codex can read: %v", err)
	}
	lines := strings.SplitAfter(string(old), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	groups, err := codexGateGroups(lines)
	if err != nil {
		return nil, err
	}
	block := codexGateBlock(event, matcher, command, timeoutSec)
	var out []string
	placed := false
	at := 0
	for _, g := range groups {
		out = append(out, lines[at:g.start]...)
		if add && !placed && g.event == event {
			if g.blank {
				out = append(out, lines[g.start])
			}
			out = append(out, block...)
			placed = true
		}
		at = g.end
	}
	out = append(out, lines[at:]...)
	if add && !placed {
		if n := len(out); n > 0 {
			if !strings.HasSuffix(out[n-1], "\n") {
				out[n-1] += "\n"
			}
			if strings.TrimSpace(out[n-1]) != "" {
				out = append(out, "\n")
			}
		}
		out = append(out, block...)
	}
	next := []byte(strings.Join(out, ""))
	if len(groups) == 0 && !add {
		return old, nil
	}
	// The check: the file decodes, vigil's group is there once (or not at
	// all), and without it the file means what it meant before.
	after, err := decodeTOML(next)
	if err != nil {
		return nil, fmt.Errorf("the hooks are written in a form vigil cannot add to (%v); add this by hand:\n%s", err, strings.Join(block, ""))
	}
	n := countGateGroups(after)
	if add && n != 1 || !add && n != 0 {
		return nil, fmt.Errorf("the edit left %d vigil gate hooks, not %d; the file is left as it was", n, map[bool]int{true: 1, false: 0}[add])
	}
	if !reflect.DeepEqual(withoutGateGroups(before), withoutGateGroups(after)) {
		return nil, errors.New("the edit would change more than vigil's hook; the file is left as it was")
	}
	return next, nil
}

// codexGateBlock is the group install writes, one line each.
func codexGateBlock(event, matcher, command string, timeoutSec int) []string {
	return []string{
		codexGateMarker + " added by `vigil gate install codex`; `vigil gate uninstall codex` removes it\n",
		"[[hooks." + event + "]]\n",
		"matcher = " + tomlString(matcher) + "\n",
		"[[hooks." + event + ".hooks]]\n",
		"type = \"command\"\n",
		"command = " + tomlString(command) + "\n",
		"timeout = " + strconv.Itoa(timeoutSec) + "\n",
	}
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func decodeTOML(b []byte) (map[string]any, error) {
	m := map[string]any{}
	_, err := toml.Decode(string(b), &m)
	return m, err
}

// gateGroup is one of vigil's groups in the file: lines [start, end),
// with install's comment above it.
type gateGroup struct {
	event      string
	start, end int
	blank      bool // the group starts with the blank line install put before it
}

// codexGateGroups finds vigil's groups: a [[hooks.EVENT]] table with its
// sub-tables whose one handler runs vigil's gate.
func codexGateGroups(lines []string) ([]gateGroup, error) {
	secs, err := tomlSections(lines)
	if err != nil {
		return nil, err
	}
	var out []gateGroup
	for i := 0; i < len(secs); i++ {
		s := secs[i]
		if !s.array || len(s.key) != 2 || s.key[0] != "hooks" {
			continue
		}
		j := i + 1
		for j < len(secs) && len(secs[j].key) > 2 && secs[j].key[0] == "hooks" && secs[j].key[1] == s.key[1] {
			j++
		}
		g := gateGroup{event: s.key[1], start: s.start, end: contentEnd(lines, s.start, secs[j-1].end)}
		m, err := decodeTOML([]byte(strings.Join(lines[g.start:g.end], "")))
		if err != nil || countGateGroups(m) != 1 {
			continue
		}
		// Install's comment and the blank line it put before it go too.
		if g.start > 0 && strings.HasPrefix(strings.TrimSpace(lines[g.start-1]), codexGateMarker) {
			g.start--
			if g.start > 0 && strings.TrimSpace(lines[g.start-1]) == "" {
				g.start--
				g.blank = true
			}
		}
		out = append(out, g)
		i = j - 1
	}
	return out, nil
}

// contentEnd is end less the blank and comment lines that close a
// section: they belong to what follows.
func contentEnd(lines []string, start, end int) int {
	for end > start+1 {
		t := strings.TrimSpace(lines[end-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return end
}

// hookGroups are the groups of each hook event in a decoded config.
func hookGroups(m map[string]any) map[string][]map[string]any {
	hooks, _ := m["hooks"].(map[string]any)
	out := map[string][]map[string]any{}
	for ev, v := range hooks {
		if gs, ok := v.([]map[string]any); ok {
			out[ev] = gs
		}
	}
	return out
}

// isGateGroup reports whether a decoded group is vigil's: one command
// handler that runs vigil's gate.
func isGateGroup(g map[string]any) bool {
	hs, ok := g["hooks"].([]map[string]any)
	if !ok || len(hs) != 1 {
		return false
	}
	cmd, _ := hs[0]["command"].(string)
	// isGateCommand splits at spaces; install quotes a path that has some.
	return isGateCommand(cmd) || strings.Contains(cmd, "' gate --agent ")
}

func countGateGroups(m map[string]any) int {
	n := 0
	for _, gs := range hookGroups(m) {
		for _, g := range gs {
			if isGateGroup(g) {
				n++
			}
		}
	}
	return n
}

// withoutGateGroups is a decoded config less vigil's groups, and less the
// hook tables that only they made.
func withoutGateGroups(m map[string]any) map[string]any {
	hooks, ok := m["hooks"].(map[string]any)
	if !ok {
		return m
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	kept := map[string]any{}
	for ev, v := range hooks {
		gs, ok := v.([]map[string]any)
		if !ok {
			kept[ev] = v
			continue
		}
		var rest []map[string]any
		for _, g := range gs {
			if !isGateGroup(g) {
				rest = append(rest, g)
			}
		}
		if len(rest) > 0 {
			kept[ev] = rest
		}
	}
	if len(kept) == 0 {
		delete(out, "hooks")
	} else {
		out["hooks"] = kept
	}
	return out
}
