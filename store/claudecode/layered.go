package claudecode

// layered is a map from path to V that versions share: a version is a
// base that no version changes and a small top layer of what changed on
// it, so a change to one transcript of thousands copies the top layer, not
// the map. A top layer grown past layerMax is folded into a new base.
type layered[V any] struct {
	base map[string]V
	top  map[string]layer[V]
}

type layer[V any] struct {
	v    V
	gone bool
}

const layerMax = 256

func (m layered[V]) get(k string) (V, bool) {
	if l, ok := m.top[k]; ok {
		return l.v, !l.gone
	}
	v, ok := m.base[k]
	return v, ok
}

// each calls fn with every key and value.
func (m layered[V]) each(fn func(string, V)) {
	for k, v := range m.base {
		if _, over := m.top[k]; !over {
			fn(k, v)
		}
	}
	for k, l := range m.top {
		if !l.gone {
			fn(k, l.v)
		}
	}
}

// edit starts a new version of m; m is left as it is.
func (m layered[V]) edit() *layeredEdit[V] { return &layeredEdit[V]{from: m} }

// layeredEdit is a version being made: its top layer is copied from the
// one it was made from at its first change.
type layeredEdit[V any] struct {
	from   layered[V]
	top    map[string]layer[V]
	copied bool
}

func (e *layeredEdit[V]) set(k string, v V, gone bool) {
	if !e.copied {
		e.top = make(map[string]layer[V], len(e.from.top)+1)
		for k, l := range e.from.top {
			e.top[k] = l
		}
		e.copied = true
	}
	e.top[k] = layer[V]{v: v, gone: gone}
}

// done is the new version.
func (e *layeredEdit[V]) done() layered[V] {
	if !e.copied {
		return e.from
	}
	m := layered[V]{base: e.from.base, top: e.top}
	if len(m.top) <= layerMax {
		return m
	}
	base := make(map[string]V, len(m.base)+len(m.top))
	m.each(func(k string, v V) { base[k] = v })
	return layered[V]{base: base}
}
