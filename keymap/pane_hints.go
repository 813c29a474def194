package keymap

import "charm.land/bubbles/v2/key"

// PaneHints are the keys worth a one-line hint in the status bar while
// pane i (0–5, in the order of PaneNames) has the focus, most useful
// first: the bar shows as many as fit, then ? help for the rest.
func (k KeyMap) PaneHints(i int) []key.Binding {
	// One label for both ways: the bar has little room.
	move := key.NewBinding(key.WithKeys(append(k.Up.Keys(), k.Down.Keys()...)...), key.WithHelp("↑↓", "move"))
	switch PaneNames[i] {
	case "Runs":
		return []key.Binding{move, Hint(k.Open, "open"), Hint(k.Filter, "filter"), Hint(k.Sort, "sort"), Hint(k.Summary, "summary"), Hint(k.NextWaiting, "oldest waiting")}
	case "Agents":
		return []key.Binding{move, Hint(k.Open, "open"), Hint(k.Summary, "summary"), Hint(k.Back, "runs"), Hint(k.NextWaiting, "oldest waiting")}
	case "Timeline":
		return []key.Binding{move, Hint(k.Follow, "follow"), Hint(k.Filter, "search"), Hint(k.StepFilter, "tool"), Hint(k.Page, "open"), Hint(k.Copy, "copy"), Hint(k.Zoom, "zoom")}
	case "Step":
		return []key.Binding{Hint(k.PageDown, "scroll"), Hint(k.Filter, "search"), Hint(k.Follow, "follow"), Hint(k.Page, "open"), Hint(k.PagePrompt, "prompt"), Hint(k.Zoom, "zoom")}
	case "Drift":
		return []key.Binding{move, Hint(k.Zoom, "zoom"), Hint(k.Back, "back")}
	case "Approvals":
		return []key.Binding{move, Hint(k.Approve, "approve"), Hint(k.Deny, "deny"), Hint(k.Answer, "answer"), Hint(k.Revise, "revise"), Hint(k.Decided, "decided"), Hint(k.NextWaiting, "next waiting")}
	}
	return nil
}
