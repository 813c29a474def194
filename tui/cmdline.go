package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// The command line, as k9s users expect: ":" opens it in the status bar,
// tab completes the word under the cursor, enter jumps, esc closes it.
//
//	:run 12      the run #12 opened, selected in the runs pane
//	:agent 9     the agent #9 opened in its tree, the agents pane focused
//	:store NAME  the newest run of that store selected (several stores open)
//
// An id is the one the panes show (a long id may be typed whole).

var cmdVerbs = []string{"agent", "run", "store"}

// cmdline is the command line's state.
type cmdline struct {
	on    bool
	input textinput.Model
}

// openCmdline starts the command line empty.
func (m *Model) openCmdline() {
	in := textinput.New()
	in.Prompt = ":"
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	in.CharLimit = 256
	in.Focus()
	m.cmd = cmdline{on: true, input: in}
}

// cmdlineKey runs a key while the command line is open.
func (m *Model) cmdlineKey(msg tea.KeyPressMsg) tea.Cmd {
	km := m.env.Keys
	switch {
	case key.Matches(msg, km.Dismiss):
		m.cmd.on = false
		return nil
	case key.Matches(msg, km.Submit):
		m.cmd.on = false
		return m.runCommand(m.cmd.input.Value())
	case key.Matches(msg, km.Complete):
		if done, ok := completeCmd(m.cmd.input.Value(), m.cmdCandidates); ok {
			m.cmd.input.SetValue(done)
			m.cmd.input.CursorEnd()
		}
		return nil
	}
	m.cmd.input, _ = m.cmd.input.Update(msg)
	return nil
}

// cmdCandidates are the words that may follow verb.
func (m *Model) cmdCandidates(verb string) []string {
	var out []string
	md := m.st.model
	switch verb {
	case "run":
		for _, id := range md.Roots() {
			out = append(out, store.DisplayID(id))
		}
	case "agent":
		for _, root := range md.Roots() {
			for _, id := range md.Subtree(root) {
				out = append(out, store.DisplayID(id))
			}
		}
	case "store":
		if set, ok := m.src.Source.(store.StoreSet); ok {
			for _, st := range set.Stores() {
				out = append(out, st.Prefix)
			}
		}
	}
	sort.Strings(out)
	return out
}

// completeCmd completes the last word of line: a verb, or the argument of
// one from cands. ok is false when nothing (or nothing longer) completes.
func completeCmd(line string, cands func(verb string) []string) (string, bool) {
	fields := strings.Fields(line)
	endsInSpace := strings.HasSuffix(line, " ")
	switch {
	case len(fields) == 0 || (len(fields) == 1 && !endsInSpace):
		word := ""
		if len(fields) == 1 {
			word = fields[0]
		}
		if c := commonPrefix(word, cmdVerbs); len(c) > len(word) || (c == word && contains(cmdVerbs, c)) {
			if contains(cmdVerbs, c) {
				return c + " ", true
			}
			return c, true
		}
	case len(fields) == 1 || (len(fields) == 2 && !endsInSpace):
		word := ""
		if len(fields) == 2 {
			word = fields[1]
		}
		if c := commonPrefix(word, cands(fields[0])); len(c) > len(word) {
			return fields[0] + " " + c, true
		}
	}
	return line, false
}

// commonPrefix is the longest prefix shared by the candidates that start
// with word ("" when none does).
func commonPrefix(word string, cands []string) string {
	var match []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) {
			match = append(match, c)
		}
	}
	if len(match) == 0 {
		return ""
	}
	p := match[0]
	for _, c := range match[1:] {
		for !strings.HasPrefix(c, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runCommand carries a command out, or says in the status bar why not.
func (m *Model) runCommand(line string) tea.Cmd {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	usage := "run N, agent N or store NAME"
	if len(fields) != 2 {
		m.problem = fmt.Sprintf(":%s — want %s", sanitize.Line(line), usage)
		return nil
	}
	verb, arg := fields[0], fields[1]
	switch verb {
	case "run", "agent":
		ids := m.findRun(arg)
		switch {
		case len(ids) == 0:
			m.problem = fmt.Sprintf("no %s #%s in this store", verb, sanitize.Line(arg))
			return nil
		case len(ids) > 1:
			m.problem = fmt.Sprintf("#%s is in several stores: %s", sanitize.Line(arg), sanitize.Line(strings.Join(ids, ", ")))
			return nil
		}
		id := ids[0]
		cmd := m.openRun(id)
		if verb == "run" && m.runs.SelectRun(m.st.model.RootOf(id)) {
			m.focusPane(paneRuns)
		} else {
			m.focusPane(paneAgents)
		}
		return cmd
	case "store":
		return m.jumpToStore(arg)
	}
	m.problem = fmt.Sprintf("no command %q — want %s", sanitize.Line(verb), usage)
	return nil
}

// findRun is the runs whose id, or id as the panes show it, is arg; with
// several stores open, an id without its store's prefix ("4" for
// "beta/4") names the run of that id in every store.
func (m *Model) findRun(arg string) []string {
	md := m.st.model
	arg = strings.TrimPrefix(arg, "#")
	if _, ok := md.Run(arg); ok {
		return []string{arg}
	}
	var found []string
	for _, root := range md.Roots() {
		for _, id := range md.Subtree(root) {
			if d := store.DisplayID(id); d == arg || strings.HasSuffix(d, "/"+arg) {
				found = append(found, id)
			}
		}
	}
	sort.Strings(found)
	return found
}

// jumpToStore selects the newest run of the store named (its prefix or
// the name it was opened by).
func (m *Model) jumpToStore(name string) tea.Cmd {
	set, ok := m.src.Source.(store.StoreSet)
	if !ok {
		m.problem = "one store is open: " + sanitize.Line(m.storeLabel())
		return nil
	}
	for _, st := range set.Stores() {
		if st.Prefix != name && st.Name != name {
			continue
		}
		for _, id := range m.st.model.Roots() { // newest first
			if s, ok := set.StoreOf(id); ok && s.Prefix == st.Prefix && m.runs.SelectRun(id) {
				m.focusPane(paneRuns)
				return m.openRun(id)
			}
		}
		m.problem = "store " + sanitize.Line(name) + " has no run listed"
		return nil
	}
	m.problem = fmt.Sprintf("no store %q open", sanitize.Line(name))
	return nil
}

// cmdlineBar is the status bar while the command line is open: the line,
// then what tab would complete to.
func (m *Model) cmdlineBar(w int) string {
	t := m.env.Theme
	line := m.cmd.input.View()
	hint := ""
	fields := strings.Fields(m.cmd.input.Value())
	if len(fields) >= 1 && contains(cmdVerbs, fields[0]) {
		word := ""
		if len(fields) == 2 {
			word = fields[1]
		}
		var match []string
		for _, c := range m.cmdCandidates(fields[0]) {
			if strings.HasPrefix(c, word) {
				match = append(match, c)
			}
		}
		if len(match) > 0 {
			hint = strings.Join(match, " ")
		}
	} else {
		hint = strings.Join(cmdVerbs, " ")
	}
	right := t.Muted.Render(" tab completes · enter jumps · esc closes ")
	room := w - textfmt.Width(line) - textfmt.Width(right) - 2
	if hint != "" && room > 4 {
		line += "  " + t.Muted.Render(textfmt.Cut(hint, room))
	}
	return textfmt.PadRight(line, w-textfmt.Width(right)) + right
}
