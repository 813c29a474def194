package views

import "time"

// The panes that show ages (a run's, a request's, a lease's) follow the
// clock by the second; the tree's live strip counts down in tenths of a
// second; the queue's footer says while its misfire guard holds keys back.

func (p *Runs) Clock(now time.Time) int64 { return now.Unix() }

func (p *Tree) Clock(now time.Time) int64 {
	if len(p.live) > 0 {
		return now.UnixMilli() / 100
	}
	return now.Unix() // a lease runs out: the node's state moves
}

func (p *Approvals) Clock(now time.Time) int64 {
	c := now.Unix() << 1
	if p.Quiet(now) {
		c |= 1
	}
	return c
}

// The timeline, the step, the drift pane and the summary draw no clock.

func (p *Timeline) Clock(time.Time) int64 { return 0 }
func (p *Detail) Clock(time.Time) int64   { return 0 }
func (p *Drift) Clock(time.Time) int64    { return 0 }
func (p *Summary) Clock(time.Time) int64  { return 0 }
