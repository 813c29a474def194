package serve

import (
	"fmt"
	"sort"
	"strings"
)

// Keys of the reads a view shares through its hub (livetail.Shared): the
// same question from two sessions is the same key.

func idsKey(kind string, ids []string) string {
	s := append([]string(nil), ids...)
	sort.Strings(s)
	return kind + "\x00" + strings.Join(s, "\x00")
}

func detailKey(run string, row int64) string { return fmt.Sprintf("detail\x00%s\x00%d", run, row) }
