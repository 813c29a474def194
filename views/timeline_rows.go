package views

import (
	"time"

	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// A commit adds one step to the timeline a session follows, yet every row
// on screen was drawn again (its number padded, its text sanitized, cut and
// styled) on every frame of every vigil serve session that shows it: the
// rows were a sixth of drawing a frame under the 50-session bench. A row
// follows from what is in timelineRowKey alone, so a row drawn in the frame
// before with the same key is reused.

// timelineRowKey is everything a step's row is drawn from.
type timelineRowKey struct {
	theme              *Theme
	w                  int
	selected, focused  bool
	number, retries    int
	tokens             int64
	tokensUnknown      bool
	latency            time.Duration
	pending            bool
	decision, toolCall string
}

// CheckTimelineRows draws every row the memo gives again and panics if the
// two differ: an input timelineRowKey does not know of. tui's tests turn it
// on.
var CheckTimelineRows = false

// sharedTimelineRows is the rows drawn lately by any timeline of this
// process: a commit's new row is the same in every vigil serve session that
// follows its agent, and sessions that draw alike share their theme
// (NewThemeFor), so one of them draws it. Small: a frame's own rows are
// kept by its timeline.
var sharedTimelineRows = textfmt.Memo[timelineRowKey, string]{Cap: 512}

// timelineRows is the rows drawn in the last frame and in this one.
type timelineRows = keptDrawings[timelineRowKey]

func (p *Timeline) memoRow(t *Theme, st store.Step, selected, focused bool, w int) string {
	k := timelineRowKey{theme: t, w: w, selected: selected, focused: focused, number: st.Number,
		retries: len(st.Retries), tokens: st.Tokens, tokensUnknown: st.TokensUnknown, latency: st.Latency, pending: st.Pending,
		decision: st.Decision, toolCall: st.ToolCall}
	return p.memo.get(k, &sharedTimelineRows, CheckTimelineRows, "timeline row", func() string {
		return p.row(t, st, selected, focused, w)
	})
}
