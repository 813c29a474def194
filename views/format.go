package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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

// Duration is a short human duration: 850ms, 42s, 4m12s, 1h03m, 2d04h.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// Ago says how long ago t was, relative to now: 3s ago, 5m ago, Nov 02.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	case d < 7*24*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
	return t.Local().Format("Jan 02")
}

// Percent formats a ratio as a signed percentage: +12.5%, -3%.
func Percent(r float64) string {
	s := trimZero(fmt.Sprintf("%+.1f", r*100))
	return s + "%"
}
