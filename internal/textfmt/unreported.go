package textfmt

import (
	"fmt"
	"strings"
)

// A run's token total adds its steps' reported counts; a step whose
// provider reported none adds nothing, so a total with such steps is a
// known part, never the spend. These say so: "12.3k+?" in a column,
// "12.3k tokens + 2 steps not reported" in prose, and "?" / "tokens not
// reported" when no step's count is known.

// TokensPart is a total of known tokens with unreported steps, as a column
// of width w shows it: the decimal goes before the "+?" does.
func TokensPart(known int64, unreported, w int) string {
	s := Tokens(known)
	switch {
	case unreported == 0:
		return s
	case known == 0:
		return "?"
	}
	if Width(s)+2 > w && strings.IndexByte(s, '.') >= 0 {
		unit, div := "k", int64(1000) // 12.3k → 12k
		if strings.HasSuffix(s, "M") {
			unit, div = "M", 1_000_000
		}
		s = fmt.Sprintf("%d%s", (known+div/2)/div, unit)
	}
	return s + "+?"
}

// TokensProse is the same total in a sentence, with "tokens" in it.
func TokensProse(known int64, unreported int) string {
	switch {
	case unreported == 0:
		return Tokens(known) + " tokens"
	case known == 0:
		return "tokens not reported"
	case unreported == 1:
		return Tokens(known) + " tokens + 1 step not reported"
	}
	return fmt.Sprintf("%s tokens + %d steps not reported", Tokens(known), unreported)
}
