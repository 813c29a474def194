package views

import (
	"github.com/vigil-run/vigil/store"
)

// The run list is rebuilt on every commit that moves a run, and the queue
// with it: most of those rebuilds hand the queue what it holds already.
// SetItems bumps the pane's revision only when one changed anything it
// draws, so the root keeps its last drawing of the queue until one does
// (tui's pane cache).

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
// fails when a field is added to an item and not compared here; store's
// request_equal_test when one is added to a request).
func sameApprovalItem(a, b ApprovalItem) bool {
	return a.Asker == b.Asker && a.Delivery == b.Delivery && a.Why == b.Why && a.FirstSeen == b.FirstSeen &&
		a.Decided == b.Decided && a.Req.Equal(b.Req)
}
