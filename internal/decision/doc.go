// Package decision is the one way a person's decision reaches a store,
// whichever door it came through: the local explorer, `vigil
// approve/deny/answer/revise`, a `vigil serve` session and the far side's
// `vigil agent`. Each takes the same path (Maker.Make):
//
//  1. classify: the store is refused when it is read-only for this person
//     (a serve viewer), and the decision when the run cannot read it,
//     judged by store.Source.Classify from the run and lease the caller
//     already holds (the explorer's model; no read, no round trip) — a
//     caller without them leaves the judgement to step 3, which makes it
//     again inside its transaction;
//  2. an attempt line in the audit log, fsync'd: a log that cannot be
//     written decides nothing;
//  3. the store's compare-and-set, store.Source.Decide;
//  4. the outcome line — won, lost with what the store holds, refused with
//     why, error, unknown — fsync'd before the result is returned.
//
// Every line names who decided (audit.Who) and the channel. A refusal in
// step 1 is one refused line and no attempt.
package decision
