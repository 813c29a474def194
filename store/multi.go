package store

// StoreSet is a source over several stores at once (store/union): one
// runs list, one approval queue. Its run and request ids are each store's
// own prefixed with the store's short prefix and a slash ("b/42"), so ids
// from two stores never meet. Without it, a source is one store.
type StoreSet interface {
	// Stores are the stores in the order they were named.
	Stores() []StoreState
	// StoreOf is the store a run (or request) id of the set belongs to.
	StoreOf(id string) (StoreState, bool)
	// RecordsLeasesOf says whether the store a run id belongs to records
	// leases (the set's RecordsLeases is whether any does).
	RecordsLeasesOf(id string) bool
}

// StoreState is one store of a set as it stands now.
type StoreState struct {
	Prefix string // what the set's ids of this store start with, before the slash
	Name   string // the store as the user named it (a path, an ssh:// URL)
	// Offline says why the store cannot be read now ("" when it can): the
	// link dropped, the file is gone, the last read failed. Its rows stay
	// shown as last read.
	Offline string
}
