package textfmt

import "testing"

// A total with unreported steps keeps its "+?" in any column it is given,
// and says "?" when no step's count is known.
func TestTokensPartAndProse(t *testing.T) {
	for _, c := range []struct {
		known      int64
		unreported int
		w          int
		part       string
		prose      string
	}{
		{12_300, 0, 6, "12.3k", "12.3k tokens"},
		{12_300, 2, 7, "12.3k+?", "12.3k tokens + 2 steps not reported"},
		{12_300, 1, 6, "12k+?", "12.3k tokens + 1 step not reported"},
		{10_900, 1, 6, "11k+?", "10.9k tokens + 1 step not reported"},
		{1_250_000, 1, 5, "1M+?", "1.2M tokens + 1 step not reported"},
		{999, 3, 6, "999+?", "999 tokens + 3 steps not reported"},
		{0, 4, 6, "?", "tokens not reported"},
		{0, 0, 6, "0", "0 tokens"},
	} {
		if got := TokensPart(c.known, c.unreported, c.w); got != c.part {
			t.Errorf("TokensPart(%d, %d, %d) = %q, want %q", c.known, c.unreported, c.w, got, c.part)
		}
		if got := TokensProse(c.known, c.unreported); got != c.prose {
			t.Errorf("TokensProse(%d, %d) = %q, want %q", c.known, c.unreported, got, c.prose)
		}
	}
}
