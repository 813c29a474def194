package leviath

// terminalStatus is a status Leviath writes nothing after: is_terminal_run
// in leviath-runtime's persistence_bridge.rs ("no further snapshots
// expected"). complete_interactive is not one: such an agent stays live
// for follow-up.
func terminalStatus(st string) bool {
	return st == "complete" || st == "error" || st == "cancelled"
}

// publishEnded tells version (which may run at any time, without s.mu)
// which run directories hold a run in a terminal status as of this
// refresh: their files are not stat'ed by the probe (s.mu held).
func (s *Store) publishEnded() {
	ended := make(map[string]bool)
	for _, rs := range s.order {
		if m, ok := rs.meta(); ok && !rs.pending && rs.tornAt < 0 && terminalStatus(m.Status) {
			ended[rs.id] = true
		}
	}
	s.ended.Store(&ended)
}
