package views

import "time"

// Misfire guard timings: a decision key counts only once input has been
// quiet this long since a request appeared or came into view, but never
// waits longer than the ceiling, however fast one types.
const (
	QuietFor     = 425 * time.Millisecond
	QuietCeiling = 1500 * time.Millisecond
)

// Guard ignores decision keys for a short moment after something new is put
// in front of the user, so typing meant for elsewhere cannot approve.
type Guard struct {
	armed, until time.Time
}

// Arm starts a quiet period.
func (g *Guard) Arm(now time.Time) { g.armed, g.until = now, now.Add(QuietFor) }

// Allow reports whether a key pressed now may act. A key inside the quiet
// period is refused and extends it (up to the ceiling).
func (g *Guard) Allow(now time.Time) bool {
	if !now.Before(g.until) {
		return true
	}
	g.until = now.Add(QuietFor)
	if limit := g.armed.Add(QuietCeiling); g.until.After(limit) {
		g.until = limit
	}
	return false
}

// Quiet reports whether keys are being ignored now.
func (g *Guard) Quiet(now time.Time) bool { return now.Before(g.until) }

// Until is when the quiet period ends (in the past when keys act now).
func (g *Guard) Until() time.Time { return g.until }
