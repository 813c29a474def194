package views

import (
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// stepTokens is a step's token count as a column shows it: "?" when the
// store recorded none (a provider that reported no usage), never a 0 that
// reads as a count.
func stepTokens(st store.Step) string {
	if st.TokensUnknown {
		return "?"
	}
	return textfmt.Tokens(st.Tokens)
}
