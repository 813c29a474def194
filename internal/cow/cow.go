// Package cow is a copy-on-write map for tailing cursors. A cursor is an
// immutable value (store.Changes returns the next one and leaves the one it
// was given alone), but most refreshes change nothing: copying a cursor's
// maps up front would cost O(cursor) per call for nothing. A Map forked from
// another shares its entries until its first write.
package cow

import (
	"iter"
	"maps"
)

// Map is a map that may share its entries with the Map it was forked from.
// The zero value is an empty map ready to use. Copying a Map value and
// writing to both copies is a bug: use Fork.
type Map[K comparable, V any] struct {
	m     map[K]V
	owned bool // m belongs to this Map alone
}

// Of makes a Map of m, which it takes over.
func Of[K comparable, V any](m map[K]V) Map[K, V] { return Map[K, V]{m: m, owned: true} }

// Fork returns a Map with the same entries, which copies them before its
// first write. Fork reads c and nothing else, so forks may be taken from
// several goroutines at once; c itself must not be written afterwards (a
// cursor never is: Changes writes only the cursor it returns).
func (c *Map[K, V]) Fork() Map[K, V] { return Map[K, V]{m: c.m} }

// Get returns the value under k.
func (c *Map[K, V]) Get(k K) (V, bool) {
	v, ok := c.m[k]
	return v, ok
}

// Has reports whether k is in the map.
func (c *Map[K, V]) Has(k K) bool {
	_, ok := c.m[k]
	return ok
}

// Len is the number of entries.
func (c *Map[K, V]) Len() int { return len(c.m) }

// All iterates over the entries in no particular order. The map must not
// be written during the iteration.
func (c *Map[K, V]) All() iter.Seq2[K, V] { return maps.All(c.m) }

// Keys iterates over the keys in no particular order.
func (c *Map[K, V]) Keys() iter.Seq[K] { return maps.Keys(c.m) }

// Set stores v under k, copying shared entries first.
func (c *Map[K, V]) Set(k K, v V) {
	c.own()
	c.m[k] = v
}

// Delete removes k, copying shared entries first if k is there.
func (c *Map[K, V]) Delete(k K) {
	if _, ok := c.m[k]; !ok {
		return
	}
	c.own()
	delete(c.m, k)
}

func (c *Map[K, V]) own() {
	if c.owned {
		return
	}
	m := make(map[K]V, len(c.m)+1)
	maps.Copy(m, c.m)
	c.m, c.owned = m, true
}
