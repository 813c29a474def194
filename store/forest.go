package store

// Subtree is id and every run below it, parents before children, siblings
// in the order children lists them. A cycle in the parent links (a damaged
// store) is walked once, never forever.
func Subtree(id string, children map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		out = append(out, id)
		for _, c := range children[id] {
			walk(c)
		}
	}
	walk(id)
	return out
}

// IDNumber is a numeric id's value, for ordering ids by age (0 for an id
// that is not a number, as other formats' ids are).
func IDNumber(id string) int64 {
	var n int64
	for _, c := range id {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
