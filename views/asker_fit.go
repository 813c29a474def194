package views

import (
	"fmt"
	"strings"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// askerSep joins the agents of an asker's chain (tui builds it:
// "#4 Cut release 0.8.0 › #7 worker: bump the version").
const askerSep = " › "

// fitAsker fits an asking agent's chain to w cells so the agent that asks
// stays readable: the ancestors' goals give way first (their ids stay),
// then the agents between the root and the asker, and last the asker's own
// goal is cut — never the asker's id.
func fitAsker(chain string, w int) string {
	if textfmt.Width(chain) <= w {
		return chain
	}
	parts := strings.Split(chain, askerSep)
	asker := parts[len(parts)-1]
	var ids []string
	for _, p := range parts[:len(parts)-1] {
		id, _, _ := strings.Cut(p, " ")
		ids = append(ids, id)
	}
	if s := strings.Join(append(ids, asker), askerSep); textfmt.Width(s) <= w {
		return s
	}
	prefix := ""
	switch len(ids) {
	case 0:
	case 1:
		prefix = ids[0] + askerSep
	default:
		prefix = ids[0] + askerSep + "…" + askerSep
	}
	if w-textfmt.Width(prefix) < min(askerRoom, textfmt.Width(asker)) {
		prefix = "" // the root would leave the asker too little: the asker alone
	}
	return textfmt.Cut(prefix+asker, w)
}

// askedBy is the "asked by … at step N" line fitted to w cells.
func askedBy(chain string, step, w int) string {
	tail := fmt.Sprintf(" at step %d", step)
	return "asked by " + fitAsker(chain, max(w-textfmt.Width("asked by ")-textfmt.Width(tail), 4)) + tail
}

// askerRoom is the fewest cells an asker is given in a queue row before
// the step and the age there give way: its id and the start of its goal.
const askerRoom = 14

// askerRight is a queue row's right part, at most w cells: the asker, then
// the step and the age. Short of room the step gives way, then the age,
// before the asker is cut below askerRoom.
func askerRight(chain, step, age string, w int) (string, int) {
	more := step + age
	for _, m := range []string{step + age, age, ""} {
		more = m
		if w-textfmt.Width(m) >= min(askerRoom, textfmt.Width(chain)) {
			break
		}
	}
	rightW := min(textfmt.Width(chain)+textfmt.Width(more), w)
	return fitAsker(chain, max(rightW-textfmt.Width(more), 4)) + more, rightW
}
