package store

import "slices"

// Equal reports whether two reads of a request say the same in every
// field (request_equal_test fails when a field is added to Request and
// not compared here). The same request read again shares its strings:
// comparing a megabyte of content is comparing one pointer.
func (r Request) Equal(o Request) bool {
	return r.Kind == o.Kind && r.ID == o.ID && r.RunID == o.RunID && r.Step == o.Step &&
		r.Act == o.Act && r.Target == o.Target && r.Content == o.Content && r.HasContent == o.HasContent &&
		r.ContentBytes == o.ContentBytes && r.AlwaysAllow == o.AlwaysAllow && r.Question == o.Question && r.Context == o.Context &&
		slices.Equal(r.Choices, o.Choices) && slices.Equal(r.PlanSteps, o.PlanSteps) && r.Correction == o.Correction &&
		r.Resolved == o.Resolved && r.Standing == o.Standing && r.StandingReason == o.StandingReason &&
		r.Decision == o.Decision && r.DecidedBy == o.DecidedBy && r.DecidedAt == o.DecidedAt &&
		r.Reason == o.Reason && r.AskedAt == o.AskedAt && r.For == o.For && slices.Equal(r.Ancestry, o.Ancestry)
}
