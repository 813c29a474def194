package tui

import (
	"strings"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
)

// safeRows are rows sanitize.Frame has found safe as they are. A frame is
// mostly the rows of the frame before (and under vigil serve, of every
// other session's frames): a row known safe is not scanned again. Frame
// works byte by byte and no sequence it keeps spans a line break, so a
// frame is safe exactly when each of its rows is. A row that needs a
// repair is never remembered: it is scanned, repaired and counted (see
// sanitize.Repairs) every time it is drawn.
var safeRows textfmt.Memo[string, struct{}]

// safeFrame is sanitize.Frame(frame), row by row.
func safeFrame(frame string) string {
	var out []string // nil while every row is kept as it is
	row, rest, i := "", frame, 0
	for more := true; more; i++ {
		row, rest, more = strings.Cut(rest, "\n")
		if _, ok := safeRows.Get(row); ok {
			if out != nil {
				out = append(out, row)
			}
			continue
		}
		safe := sanitize.Frame(row)
		if safe == row {
			safeRows.Put(row, struct{}{})
		} else if out == nil {
			out = append(strings.Split(frame, "\n")[:i:i], safe)
			continue
		}
		if out != nil {
			out = append(out, safe)
		}
	}
	if out == nil {
		return frame
	}
	return strings.Join(out, "\n")
}
