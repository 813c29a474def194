// Package gate is vigil's own store: the requests an agent CLI's hook
// (`vigil gate`) waits on, one SQLite file in WAL mode that vigil creates
// (gate.db under $XDG_STATE_HOME/vigil/). Unlike the other SQLite formats
// the file is vigil's, so the hook sets WAL when it creates it; nothing
// else ever changes its journal mode.
//
// A request is one row of the requests table, keyed by its rowid, and
// moves once, by a compare-and-set on state 'waiting', to one of approved,
// denied (by a decider), withdrawn (the hook process went away: the agent
// was interrupted) or expired (nobody decided within the hook's time). A
// waiting row whose hook process is gone (its pid and start time no longer
// name a live process) reads as withdrawn, so a hook killed with SIGKILL
// cannot leave a request that looks answerable.
//
// As a store.Core it shows one run per agent session (a sub-agent is a run
// of its own under its session) whose requests are approvals; Decide is the
// one write a viewer makes.
package gate
