package store

import "unicode/utf8"

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
	head, tail, cut := displayCut(id)
	if !cut {
		return id
	}
	return head + "…" + tail
}

// DisplayIDParts is DisplayID's text in parts, made without copying: id
// itself, or its head and tail around the "…" (cut).
func DisplayIDParts(id string) (head, tail string, cut bool) { return displayCut(id) }

func displayCut(id string) (head, tail string, cut bool) {
	n := utf8.RuneCountInString(id)
	if n <= 14 {
		return id, "", false
	}
	i, k := 0, 0
	for j := range id {
		if k == 8 {
			head = id[:j]
		}
		if k == n-4 {
			i = j
			break
		}
		k++
	}
	return head, id[i:], true
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
