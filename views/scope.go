package views

// Every count a pane shows is either one agent's own or its whole tree's,
// and a header says which: the Runs pane's are the tree's (a row is a run
// tree), the Agents pane's each agent's own, the timeline's the agent's.
const (
	TreeScope  = "TREE:"
	AgentScope = "AGENT:"
)

// scopeTag writes a scope tag into a header row just left of the title of
// the column that starts at cell col, in cells the header leaves blank (a
// space kept on both sides). A header with no room for it is left as it
// was. Headers are plain text: titles only, no styles.
func scopeTag(header string, col int, tag string) string {
	r := []rune(header)
	title := col
	for title < len(r) && r[title] == ' ' {
		title++
	}
	tr := []rune(tag)
	from := title - 1 - len(tr)
	if from < 1 {
		return header
	}
	for i := from - 1; i < title; i++ {
		if r[i] != ' ' {
			return header
		}
	}
	copy(r[from:], tr)
	return string(r)
}
