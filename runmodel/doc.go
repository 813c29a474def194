// Package runmodel is the one picture of a store's runs that the explorer
// and the command line both read: the forest of runs and sub-agents, the
// requests waiting on a human, who drives each run, its state, how long it
// has run, and its counts with their scope said — this agent's own, or its
// whole tree's.
//
// A Model is loaded from a Source (Runs, RunStats, Requests) and folded
// forward with each Changes; the folding is O(changes). What is derived
// from the rows — the forest, the sums over trees, the effective leases —
// is worked out in one linear pass each, the first time a question needs
// it after its inputs changed, and kept until they change again. So a
// 100 000-deep chain of sub-agents costs what a flat list does.
//
// The forest's rules: a run whose parent is not in the store is a root;
// a loop of parent links (a damaged store) is cut at the loop's smallest
// id, which becomes a root; roots are newest first and children oldest
// first (by start time, then numeric id, then id text).
//
// The package imports only store and the standard library: it reads and
// draws nothing.
package runmodel
