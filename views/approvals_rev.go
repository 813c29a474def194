package views

import (
	"slices"

	"github.com/vigil-run/vigil/store"
)

// The run list is rebuilt on every commit that moves a run, and the queue
// with it: most of those rebuilds hand the queue what it holds already.
// Rev says whether one changed anything it draws, so the root keeps its
// last drawing of the queue until one does (tui's pane cache).

// Rev is bumped by every SetItems that changed what the pane draws; the
// pane's other changes come from calls the root knows it made.
func (p *Approvals) Rev() uint64 { return p.rev }

// approvalsLook is the state SetItems may move besides the items.
type approvalsLook struct {
	list              List
	selected, mine    store.RequestKey
	guard             Guard
	mode              queueMode
	verdict           store.Verdict
	held              *held
	recent            int
	scroll, contentH  int
	status            string
	statusOK          bool
	laid              store.RequestKey
	laidW, head, body int
	typing            bool
	draft, kept       string
}

func (p *Approvals) look() approvalsLook {
	return approvalsLook{
		list: p.list, selected: p.selected, mine: p.mine, guard: p.guard, mode: p.mode, verdict: p.verdict,
		held: p.held, recent: len(p.recent), scroll: p.scroll, contentH: p.contentH, status: p.status, statusOK: p.statusOK,
		laid: p.laid, laidW: p.laidW, head: len(p.laidHead), body: len(p.laidBody),
		typing: p.input.Focused(), draft: p.input.Value(), kept: p.kept,
	}
}

// sameApprovalItems compares two queues field by field (the same request
// read again shares its strings: comparing a megabyte of content is one
// pointer).
func sameApprovalItems(a, b []ApprovalItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameApprovalItem(a[i], b[i]) {
			return false
		}
	}
	return true
}

// sameApprovalItem compares every field of two items (approvals_rev_test
// fails when a field is added to either struct, until it is compared here).
func sameApprovalItem(a, b ApprovalItem) bool {
	return a.Asker == b.Asker && a.Delivery == b.Delivery && a.Why == b.Why && a.FirstSeen == b.FirstSeen &&
		a.Decided == b.Decided && sameRequest(a.Req, b.Req)
}

func sameRequest(a, b store.Request) bool {
	return a.Kind == b.Kind && a.ID == b.ID && a.RunID == b.RunID && a.Step == b.Step &&
		a.Act == b.Act && a.Target == b.Target && a.Content == b.Content && a.HasContent == b.HasContent &&
		a.ContentBytes == b.ContentBytes && a.Question == b.Question && a.Context == b.Context &&
		slices.Equal(a.Choices, b.Choices) && slices.Equal(a.PlanSteps, b.PlanSteps) && a.Correction == b.Correction &&
		a.Resolved == b.Resolved && a.Standing == b.Standing && a.StandingReason == b.StandingReason &&
		a.Decision == b.Decision && a.DecidedBy == b.DecidedBy && a.DecidedAt == b.DecidedAt &&
		a.Reason == b.Reason && a.AskedAt == b.AskedAt && slices.Equal(a.Ancestry, b.Ancestry)
}
