package views

import "github.com/vigil-run/vigil/store"

// decidedGlyph marks a decided request by what was decided: a deny or a
// cancel is not a ✓.
func decidedGlyph(q store.Request) string {
	switch store.Verdict(q.Decision) {
	case store.VerdictDeny, store.VerdictCancel:
		return "✗"
	}
	return "✓"
}
