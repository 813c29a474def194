package remote

import "github.com/vigil-run/vigil/store"

// LinkStats is what the client's links did: how often a reader resumed
// its cursor across a reconnect, and how often it had to load the store
// again instead.
type LinkStats struct {
	Resumed, Reloaded int
}

// Stats are the link's counts so far.
func (c *Client) Stats() LinkStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// noteReload says a reader must load the store again, and why.
func (c *Client) noteReload(why string) {
	c.mu.Lock()
	c.stats.Reloaded++
	c.mu.Unlock()
	c.logf("%s: loading the store again: %s", c.t, why)
}

// noteResumed says a reader resumed its cursor on a new agent.
func (c *Client) noteResumed(ch *store.Changes) {
	c.mu.Lock()
	c.stats.Resumed++
	c.mu.Unlock()
	c.logf("%s: resumed from the cursor held before the link dropped (%d new steps, %d requests since)", c.t, len(ch.Steps), len(ch.Requests))
}
