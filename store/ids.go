package store

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

// DisplayID is an id short enough for a column: numeric ids and short ones
// as they are, a long one (a uuid, a Leviath run directory) as its start and
// its end, which still tell runs apart: "run_d7a3…9f2c".
func DisplayID(id string) string {
	r := []rune(id)
	if len(r) <= 14 {
		return id
	}
	return string(r[:8]) + "…" + string(r[len(r)-4:])
}

// Ancestry is the chain of run ids from the root down to id. A cycle in the
// parent links (a damaged store) ends the chain instead of looping.
func Ancestry(id string, parents map[string]string) []string {
	chain := []string{id}
	seen := map[string]bool{id: true}
	for cur := parents[id]; cur != "" && !seen[cur]; cur = parents[cur] {
		seen[cur] = true
		chain = append(chain, cur)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}
