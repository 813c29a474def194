package store

import "context"

// PolicyReader is a source that reads a run's permission-policy events
// (io-harness's policy_events). vigil reads it for who decided an approval:
// a run records decision/<verdict>/<source> when it acts on the row
// ("attached" for another process, "approver" for its own approver).
// Without it, an approval's channel is not known.
type PolicyReader interface {
	PolicyEvents(ctx context.Context, runID string) ([]PolicyEvent, error)
}

// ReasonCarrier is a source whose format carries a person's reason for a
// decision to the agent: Starweaver's approval record keeps a deny's
// reason. Without it, a reason typed with a deny reaches nobody, and the
// explorer says so. A plan's revise carries its correction in every format
// that has plans; that is not a reason in this sense.
type ReasonCarrier interface {
	CarriesReason(kind RequestKind, v Verdict) bool
}

// CarriesReason reports whether src's format takes a reason with v on a
// request of kind.
func CarriesReason(src Source, kind RequestKind, v Verdict) bool {
	rc, ok := src.(ReasonCarrier)
	return ok && rc.CarriesReason(kind, v)
}

// ApprovalChannel is who decided an approval, read from the asking run's
// policy events: the decision event at the request's step for its act and
// target ("attached", "approver", "stdin", …), "" when the run has not
// recorded one (it records it when it reads the decision, or never, for a
// run that has gone). The event must name the request's own target: a
// decision about another action of the step is not this one's.
func ApprovalChannel(req Request, evs []PolicyEvent) string {
	src := ""
	for _, e := range evs {
		if e.Kind != PolicyDecision || e.Step != req.Step || e.Act != req.Act || e.Target != req.Target {
			continue
		}
		if e.Decision == PolicyDefer {
			continue // deferring leaves the row to someone else
		}
		src = e.Source // the last one: a resume may record another
	}
	return src
}
