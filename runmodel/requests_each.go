package runmodel

// EachRequest calls f with every undecided request, in no order: for a
// caller that looks at each once and needs no sort (the explorer's
// notices, on every refresh).
func (m *Model) EachRequest(f func(Request)) {
	for _, q := range m.requests {
		f(*q)
	}
}
