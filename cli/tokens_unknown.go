package cli

import (
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// knownTokens is a step's count, nil when the store recorded none: printed
// as "not reported" and written as JSON null, never as a 0.
func knownTokens(n int64, unknown bool) *int64 {
	if unknown {
		return nil
	}
	return &n
}

// stepTokensCell is a step's count in a table: "?" when none was recorded.
func stepTokensCell(st store.Step) string {
	if st.TokensUnknown {
		return "?"
	}
	return textfmt.Thousands(st.Tokens)
}
