// Package keymap holds every key binding vigil answers to, with its help
// text. It is the only place a key is named: the views and the root model
// match against these bindings, the help overlay and the README's key table
// are generated from them.
package keymap

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is vigil's bindings.
type KeyMap struct {
	NextPane key.Binding
	PrevPane key.Binding
	Pane     [6]key.Binding // 1–6: jump to a pane

	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Open     key.Binding
	Back     key.Binding

	Filter  key.Binding
	Sort    key.Binding
	Follow  key.Binding
	Summary key.Binding // the run summary overlay (Runs, Agents: the selected run)

	Approve key.Binding
	// ApproveAlways approves and takes what the agent offers to allow from
	// then on (Claude Code's "don't ask again"), where it offers something.
	ApproveAlways key.Binding
	Deny          key.Binding
	// DenyReason denies (an approval) or cancels (a plan) with a reason
	// typed first, where the format carries one to the agent.
	DenyReason key.Binding
	Answer     key.Binding
	Revise     key.Binding
	Confirm    key.Binding
	Cancel     key.Binding
	Decided    key.Binding // the Approvals pane: waiting requests ⇄ decided ones
	// NextWaiting jumps from anywhere to the oldest waiting request (in the
	// Approvals pane, to the next one); pressed again where it jumped, it
	// goes back where it came from.
	NextWaiting key.Binding

	// Submit and Dismiss end typing into a text field (the runs filter, an
	// answer, a revision): they are matched only while one is open, where
	// enter and esc cannot mean open and back.
	Submit  key.Binding
	Dismiss key.Binding
	// Complete completes the word typed in the command line.
	Complete key.Binding

	Zoom key.Binding // the focused pane takes the whole screen, and gives it back

	// Search: / searches the focused pane (the runs pane filters), n and N
	// move between matches; the timeline also filters by tool or kind.
	SearchNext key.Binding
	SearchPrev key.Binding
	StepFilter key.Binding

	// Open and copy what is selected: in $PAGER, in $EDITOR, the prompt in
	// $PAGER, and to the clipboard (OSC 52).
	Page       key.Binding
	Edit       key.Binding
	PagePrompt key.Binding
	Copy       key.Binding
	CopyPrompt key.Binding

	// Command opens the command line: jumps by name (:run 12, :agent 9,
	// :store NAME), with completion.
	Command key.Binding

	Help      key.Binding
	Quit      key.Binding
	ForceQuit key.Binding // quits even while typing, where q is a letter
}

// PaneNames are the panes in the order of their number keys.
var PaneNames = [6]string{"Runs", "Agents", "Timeline", "Step", "Drift", "Approvals"}

// Default is the keymap vigil ships with.
func Default() KeyMap {
	k := KeyMap{
		NextPane: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),

		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("↓/j", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G/end", "last")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open / select (a request: whole, in $PAGER)")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),

		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter runs / search a pane")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort runs")),
		Follow:  key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "follow new steps (timeline, step)")),
		Summary: key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "run summary")),

		Approve:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve")),
		ApproveAlways: key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "approve, and always allow what the agent offers")),
		Deny:          key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deny / cancel plan")),
		DenyReason:    key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "deny, saying why")),
		Answer:        key.NewBinding(key.WithKeys("e"), key.WithHelp("e/enter", "answer a question")),
		Revise:        key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "revise a plan")),
		Confirm:       key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "confirm")),
		Cancel:        key.NewBinding(key.WithKeys("n"), key.WithHelp("n/esc", "cancel")),
		Decided:       key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "waiting ⇄ decided")),

		NextWaiting: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "oldest waiting (in Approvals: next), and back")),

		Submit:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "done typing")),
		Dismiss:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop typing (an answer keeps its draft)")),
		Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete")),

		Zoom: key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "zoom pane / restore")),

		SearchNext: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		SearchPrev: key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
		StepFilter: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "timeline: pick a tool or kind to show")),

		Page:       key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open in $PAGER")),
		Edit:       key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "open in $EDITOR")),
		PagePrompt: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "the step's prompt in $PAGER")),
		Copy:       key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy tool call / command")),
		CopyPrompt: key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "copy the step's prompt")),

		Command: key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump: run N, agent N, store NAME (tab completes)")),

		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit, even while typing")),
	}
	for i := range k.Pane {
		n := string(rune('1' + i))
		k.Pane[i] = key.NewBinding(key.WithKeys(n), key.WithHelp(n, "go to "+PaneNames[i]))
	}
	return k
}

// ShortHelp satisfies bubbles' help.KeyMap: the keys worth a one-line hint.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.NextPane, k.Open, k.Approve, k.Deny, k.Filter, k.Help, k.Quit}
}

// Groups are the help overlay's columns, each with a title.
func (k KeyMap) Groups() []Group {
	gs := []Group{
		{"Panes", append([]key.Binding{k.NextPane, k.PrevPane, k.Zoom}, k.Pane[:]...)},
		{"Move", []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown, k.Open, k.Back}},
		{"Runs & timeline", []key.Binding{k.Sort, k.Follow, k.Summary}},
		{"Search, open, copy", []key.Binding{k.Filter, k.SearchNext, k.SearchPrev, k.StepFilter, k.Page, k.Edit, k.PagePrompt, k.Copy, k.CopyPrompt}},
		{"Approvals", []key.Binding{k.Approve, k.ApproveAlways, k.Deny, k.DenyReason, k.Answer, k.Revise, k.Confirm, k.Cancel, k.Decided, k.NextWaiting}},
		{"vigil", []key.Binding{k.Command, k.Help, k.Quit, k.ForceQuit}},
	}
	// A binding a config left with no key is off: not listed.
	for i := range gs {
		gs[i].Bindings = slices.DeleteFunc(gs[i].Bindings, func(b key.Binding) bool { return !b.Enabled() })
	}
	return gs
}

// Hint is a binding as one place on screen offers it: the binding's own key
// label with a word for what it does there ("d cancel" under a plan, "d
// deny" under an approval).
func Hint(b key.Binding, does string) key.Binding {
	b.SetHelp(b.Help().Key, does)
	return b
}

// The approval queue's footer offers what the selected request allows.

// ApprovalHints are the keys for an approval.
func (k KeyMap) ApprovalHints() []key.Binding {
	return []key.Binding{Hint(k.Approve, "approve"), Hint(k.Deny, "deny")}
}

// QuestionHints are the keys for a question.
func (k KeyMap) QuestionHints() []key.Binding { return []key.Binding{Hint(k.Open, "answer")} }

// PlanHints are the keys for a plan.
func (k KeyMap) PlanHints() []key.Binding {
	return []key.Binding{Hint(k.Approve, "approve"), Hint(k.Revise, "revise"), Hint(k.Deny, "cancel")}
}

// ConfirmHints answer "Approve …?".
func (k KeyMap) ConfirmHints() []key.Binding {
	return []key.Binding{Hint(k.Confirm, "yes"), Hint(k.Cancel, "no")}
}

// Group is a titled set of bindings.
type Group struct {
	Title    string
	Bindings []key.Binding
}

// FullHelp satisfies bubbles' help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range k.Groups() {
		out = append(out, g.Bindings)
	}
	return out
}

// MarkdownTable is the keys as a Markdown table, one row per binding, for
// the README (a test keeps the README's copy equal to this).
func (k KeyMap) MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| keys | what they do | group | action (to remap) |\n|---|---|---|---|\n")
	for _, g := range k.Groups() {
		for _, kb := range g.Bindings {
			h := kb.Help()
			keys := make([]string, 0, len(kb.Keys()))
			for _, key := range kb.Keys() {
				keys = append(keys, "`"+key+"`")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", strings.Join(keys, " "), h.Desc, g.Title, k.actionOf(kb))
		}
	}
	return b.String()
}
