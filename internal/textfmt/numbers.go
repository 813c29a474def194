package textfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// Tokens shortens a token count: 950, 12.4k, 1.2M.
func Tokens(n int64) string {
	a := n
	if a < 0 {
		a = -a
	}
	sign := ""
	if n < 0 {
		sign = "-"
	}
	switch {
	case a < 1000:
		return sign + strconv.FormatInt(a, 10)
	case a < 100_000:
		return sign + trimZero(fmt.Sprintf("%.1f", float64(a)/1000)) + "k"
	case a < 1_000_000:
		return sign + strconv.FormatInt(a/1000, 10) + "k"
	case a < 100_000_000:
		return sign + trimZero(fmt.Sprintf("%.1f", float64(a)/1e6)) + "M"
	}
	return sign + strconv.FormatInt(a/1_000_000, 10) + "M"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Thousands writes an integer with thousands separators: 999,600.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Percent formats a ratio as a signed percentage: +12.5%, -3%.
func Percent(r float64) string {
	s := trimZero(fmt.Sprintf("%+.1f", r*100))
	return s + "%"
}
