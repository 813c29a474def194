package gate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// permissionUpdate is one of Claude Code's permission suggestions: what
// its own prompt's "yes, and don't ask again" would change.
type permissionUpdate struct {
	Type        string   `json:"type"`
	Rules       []rule   `json:"rules"`
	Behavior    string   `json:"behavior"`
	Mode        string   `json:"mode"`
	Directories []string `json:"directories"`
	Destination string   `json:"destination"`
}

type rule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent"`
}

// alwaysAllow says in words what approving with the suggestions does,
// "" when there are none; a suggestion of a kind it does not know is
// named by its type, so nothing offered is left unsaid.
func alwaysAllow(suggestions string) string {
	var ups []permissionUpdate
	if suggestions == "" || json.Unmarshal([]byte(suggestions), &ups) != nil || len(ups) == 0 {
		return ""
	}
	var parts []string
	for _, u := range ups {
		var what string
		switch u.Type {
		case "addRules", "replaceRules":
			var rs []string
			for _, r := range u.Rules {
				if r.RuleContent != "" {
					rs = append(rs, r.ToolName+"("+r.RuleContent+")")
				} else {
					rs = append(rs, r.ToolName)
				}
			}
			what = fmt.Sprintf("%s %s", orWord(u.Behavior, "allow"), strings.Join(rs, ", "))
		case "setMode":
			what = "switch to " + u.Mode + " mode"
		case "addDirectories":
			what = "allow the director" + plural(len(u.Directories), "y", "ies") + " " + strings.Join(u.Directories, ", ")
		default:
			what = u.Type
		}
		parts = append(parts, what+where(u.Destination))
	}
	return strings.Join(parts, "; ")
}

// where names a suggestion's destination as Claude Code keeps it.
func where(dest string) string {
	switch dest {
	case "session":
		return " for this session"
	case "localSettings":
		return " in .claude/settings.local.json"
	case "projectSettings":
		return " in .claude/settings.json"
	case "userSettings":
		return " in ~/.claude/settings.json"
	case "":
		return ""
	}
	return " (" + dest + ")"
}

func orWord(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
