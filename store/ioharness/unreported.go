package ioharness

import "github.com/vigil-run/vigil/store"

// A committed step with tokens 0 is one whose provider reported no usage
// (cellsStepRow): a run's total counts how many it adds as nothing. Retry,
// escalation and compaction rows are not steps and are not counted.

// unreportedStep says a steps row read by its tokens and the head of its
// decision is a committed step with no reported count.
func unreportedStep(tokens int64, decision string) bool {
	return tokens == 0 && stepKind(decision) == store.StepTurn
}

// unreportedSQL is unreportedStep as an SQL expression over a steps row,
// for SQLite to sum: auxRow's three prefixes as GLOB patterns.
const unreportedSQL = `tokens = 0 AND NOT (decision GLOB 'retry [0-9]* after *' OR decision GLOB 'escalated after *' OR decision GLOB 'compacting after *')`
