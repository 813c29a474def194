package views

import "github.com/vigil-run/vigil/store"

// SelectNextWaiting moves the cursor to the next request that waits and can
// be decided here, after the one under the cursor (wrapping round, so the
// one under the cursor comes last); failing that, to the next one that
// waits at all. It reports whether there was one.
func (p *Approvals) SelectNextWaiting() bool { return p.selectWaiting(p.list.Cursor + 1) }

// SelectOldestWaiting moves the cursor to the oldest request that waits and
// can be decided here (the queue is oldest first); failing that, to the
// oldest that waits at all. Coming from another pane, the request that has
// waited longest is the one to see first, wherever the cursor was left.
func (p *Approvals) SelectOldestWaiting() bool { return p.selectWaiting(0) }

// selectWaiting looks for a waiting request from index from on, wrapping.
func (p *Approvals) selectWaiting(from int) bool {
	p.bump()
	n := len(p.items)
	if n == 0 || p.mode != browsing {
		return false
	}
	p.hist.on = false
	for _, decidable := range []bool{true, false} {
		for d := 0; d < n; d++ {
			i := (from + d) % n
			it := p.items[i]
			if it.Decided != nil || !it.Req.Waits() || (decidable && p.blocked(it) != "") {
				continue
			}
			p.list.Select(i)
			p.remember(p.env.Now())
			return true
		}
	}
	return false
}

// Selected is the key of the request under the cursor.
func (p *Approvals) Selected() store.RequestKey { return p.selected }

// SelectKey puts the cursor back on a request, if it is still listed.
func (p *Approvals) SelectKey(k store.RequestKey) {
	p.bump()
	if p.mode != browsing {
		return
	}
	for i, it := range p.items {
		if it.Req.Key() == k {
			p.list.Select(i)
			p.remember(p.env.Now())
			return
		}
	}
}
