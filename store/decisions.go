package store

import "context"

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

// DecisionRecord is a decided request with who decided it, as far as the
// store records that.
type DecisionRecord struct {
	Request
	// Channel is the decider: the request's own DecidedBy, else (an
	// io-harness approval, whose row names nobody) the source of the
	// decision event its run recorded; "" when the store records none.
	Channel string
}

// Decisions reads the decided requests of the given runs (every run's
// when runIDs is empty), in the order Requests returns them, each with its
// channel. It reads the requests once and, for approvals that name no
// decider, each asking run's policy events once.
func Decisions(ctx context.Context, src Source, runIDs ...string) ([]DecisionRecord, error) {
	var ids []string
	if len(runIDs) > 0 {
		ids = runIDs
	}
	reqs, err := src.Requests(ctx, false, ids...)
	if err != nil {
		return nil, err
	}
	policy := src.Capabilities().Has(CapPolicy)
	events := map[string][]PolicyEvent{}
	var out []DecisionRecord
	for _, r := range reqs {
		if !r.Resolved {
			continue
		}
		d := DecisionRecord{Request: r, Channel: r.DecidedBy}
		if d.Channel == "" && r.Kind == Approval && policy {
			evs, ok := events[r.RunID]
			if !ok {
				if evs, err = src.PolicyEvents(ctx, r.RunID); err != nil {
					return nil, err
				}
				events[r.RunID] = evs
			}
			d.Channel = ApprovalChannel(r, evs)
		}
		out = append(out, d)
	}
	return out, nil
}

// DecisionWords says what was decided, in words — "approved", "denied:
// <reason>", "answered “drop it”", "sent back for revision: <correction>"
// — as the store's text has it (callers make it safe to print).
func DecisionWords(r Request) string {
	v := Verdict(r.Decision)
	var s string
	switch {
	case r.Kind == Question:
		s = "answered “" + r.Decision + "”"
	case v == VerdictApprove:
		s = "approved"
	case v == VerdictDeny:
		s = "denied"
	case v == VerdictCancel:
		s = "cancelled"
	case v == VerdictRevise:
		s = "sent back for revision"
	case r.Decision == "":
		s = "decided (no verdict recorded)"
	default:
		s = r.Decision
	}
	switch {
	case v == VerdictRevise && r.Correction != "":
		s += ": " + r.Correction
	case r.Reason != "":
		s += ": " + r.Reason
	}
	return s
}
