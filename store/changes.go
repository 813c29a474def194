package store

// Cursor marks how far a reader has read a source. Only the source that
// made it understands it. A cursor is an immutable value to its holder:
// Changes never changes the cursor it is given, so a cursor can be kept,
// handed to another goroutine or read again (the same changes come back).
type Cursor interface {
	CursorFormat() string
}

// Changes is what a refresh found.
type Changes struct {
	Runs        []Run           // new runs, and open runs whose status, outcome or summary changed
	Steps       []StepRow       // new timeline rows, in row order
	Context     []ContextSample // new turns, and turns whose provider count arrived
	Requests    []Request       // new requests, and known ones that have been decided
	AgentEvents []AgentEvent    // new tree events
	Calls       []ProviderCall  // new provider attempts (they time the steps)
	Leases      map[string]Lease
	// LeasesChanged says Leases is the whole, new lease table.
	LeasesChanged bool
	// More says a table had more new rows than one page: call again with
	// the cursor this call returned.
	More bool
	// Reset says the store is not the one the cursor was made on (it was
	// replaced or rewound): drop everything and load it again.
	Reset bool
	// Reloaded, over several stores (a StoreSet), are the prefixes of the
	// stores that were loaded again from their head (one replaced, or
	// back under a cursor it could not resume): the reader drops every
	// run, request and row of theirs it holds and takes Runs and Requests
	// as each one's whole (its runs, its undecided requests), while the
	// other stores' changes are folded as usual: they are not read again.
	Reloaded []string
	// Unwritten says nothing here was written since the cursor: it is the
	// source catching up on what the store already held (a long Leviath
	// journal's background fold put in place). A reader takes the changes
	// in but keeps its "updated" time: the store did not change.
	Unwritten bool `json:",omitempty"`
}

// Empty reports whether the refresh found nothing.
func (c *Changes) Empty() bool {
	return len(c.Runs) == 0 && len(c.Steps) == 0 && len(c.Context) == 0 && len(c.Requests) == 0 &&
		len(c.AgentEvents) == 0 && len(c.Calls) == 0 && !c.LeasesChanged && !c.Reset && len(c.Reloaded) == 0
}

// RunStats is how far a run has got: its highest step number and the
// tokens it has spent.
type RunStats struct {
	Steps  int
	Tokens int64
	// Unreported is how many counted steps had no reported token count
	// (Run.Unreported).
	Unreported int
	// Through is the highest timeline row id the count includes: a reader
	// adding rows from Changes skips those at or below it.
	Through int64
	// Provider is the model provider the count met, when the store tells
	// it there ("" otherwise): a run whose list entry could not say it
	// (Starweaver's responses too big for SQL) gets it here.
	Provider string
}
