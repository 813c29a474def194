package cli

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// Text helpers. Every string from a store goes through clean (one line) or
// sanitize.Text before it reaches a terminal.

func clean(s string) string { return sanitize.Line(s) }

func cleanCut(s string, w int) string { return textfmt.Cut(sanitize.Line(s), w) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(a.loc).Format("2006-01-02 15:04:05")
}

// stepsText and tokensText are a count as a table cell: "-" while unknown,
// never the floor a partial count would show.
func stepsText(c runmodel.Counts) string {
	if !c.Known {
		return "-"
	}
	return strconv.Itoa(c.Steps)
}

// A count with steps whose tokens were not reported says so: "12.3k+?"
// in a cell, "?" when none was (textfmt.TokensPart).
func tokensText(c runmodel.Counts, format func(int64) string) string {
	switch {
	case !c.Known:
		return "-"
	case c.Unreported == 0:
		return format(c.Tokens)
	case c.Tokens == 0:
		return "?"
	}
	return format(c.Tokens) + "+?"
}

// tokensLine is the count on a line of its own: "12,300 + 2 steps not
// reported".
func tokensLine(c runmodel.Counts) string {
	switch {
	case !c.Known:
		return "-"
	case c.Unreported == 0:
		return textfmt.Thousands(c.Tokens)
	case c.Tokens == 0:
		return "not reported"
	case c.Unreported == 1:
		return textfmt.Thousands(c.Tokens) + " + 1 step not reported"
	}
	return fmt.Sprintf("%s + %d steps not reported", textfmt.Thousands(c.Tokens), c.Unreported)
}

// stateName is a state as the CLI prints it.
func stateName(st store.State) string {
	if st == store.StateUnknown {
		return "unknown"
	}
	return st.String()
}

func deliveryName(d store.Delivery) string {
	switch d {
	case store.Deliverable:
		return "deliverable"
	case store.DeliveryUnknown:
		return "unknown"
	case store.Deferred:
		return "deferred"
	case store.NotLive:
		return "not_live"
	case store.Closed:
		return "closed"
	case store.Orphaned:
		return "orphaned"
	}
	return "unknown"
}

// table writes aligned columns (the header row only when there is one);
// the last column is not padded.
type table struct {
	header []string
	rows   [][]string
	right  map[int]bool // right-aligned columns
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, indent string) {
	all := t.rows
	if t.header != nil {
		all = append([][]string{t.header}, t.rows...)
	}
	// Each cell is measured once: padding is its column's width less its
	// own, as no cell is wider than its column (100 k rows of Cut, Width
	// and Repeat again per cell were a seventh of listing them).
	var widths []int
	cells := make([]int32, 0, len(all)*len(t.header))
	for _, row := range all {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			n := textfmt.Width(c)
			cells = append(cells, int32(n))
			widths[i] = max(widths[i], n)
		}
	}
	// Rows go out in chunks of whole lines: a write a row was 100 k write
	// calls to standard output for `vigil runs` on 100 k runs, and each
	// write is sanitized on its own (textOut), which whole lines keep exact.
	const chunk = 64 << 10
	var b []byte
	k := 0
	for _, row := range all {
		if len(b) >= chunk {
			w.Write(b)
			b = b[:0]
		}
		start := len(b)
		b = append(b, indent...)
		for i, c := range row {
			pad := widths[i] - int(cells[k])
			k++
			last := i == len(row)-1
			switch {
			case t.right[i]:
				b = appendSpaces(b, pad)
				b = append(b, c...)
			case last:
				b = append(b, c...)
			default:
				b = append(b, c...)
				b = appendSpaces(b, pad)
			}
			if !last {
				b = append(b, "  "...)
			}
		}
		for len(b) > start && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
		b = append(b, '\n')
	}
	if len(b) > 0 {
		w.Write(b)
	}
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}
