package textfmt

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		n             int64
		tokens, thous string
	}{
		{0, "0", "0"}, {950, "950", "950"}, {1000, "1k", "1,000"}, {12_400, "12.4k", "12,400"},
		{999_600, "999k", "999,600"}, {1_234_567, "1.2M", "1,234,567"}, {-2_500, "-2.5k", "-2,500"},
		{250_000_000, "250M", "250,000,000"},
	} {
		if got := Tokens(c.n); got != c.tokens {
			t.Errorf("Tokens(%d) = %q, want %q", c.n, got, c.tokens)
		}
		if got := Thousands(c.n); got != c.thous {
			t.Errorf("Thousands(%d) = %q, want %q", c.n, got, c.thous)
		}
	}
	for r, want := range map[float64]string{0.125: "+12.5%", -0.03: "-3%", 0: "+0%"} {
		if got := Percent(r); got != want {
			t.Errorf("Percent(%v) = %q, want %q", r, got, want)
		}
	}
}

func TestTimes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850ms", 42 * time.Second: "42s", 4*time.Minute + 12*time.Second: "4m12s",
		time.Hour + 3*time.Minute: "1h03m", 52 * time.Hour: "2d04h", -time.Second: "-",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for at, want := range map[time.Time]string{
		{}: "-", now.Add(time.Second): "just now", now.Add(-3 * time.Second): "3s ago",
		now.Add(-5 * time.Minute): "5m ago", now.Add(-2 * time.Hour): "2h ago", now.Add(-3 * 24 * time.Hour): "3d ago",
	} {
		if got := Ago(at, now); got != want {
			t.Errorf("Ago(%v) = %q, want %q", at, got, want)
		}
	}
}

func TestCells(t *testing.T) {
	if got := Cut("Coordinate", 5); got != "Coor…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut("abc", 0); got != "" {
		t.Errorf("Cut to 0 = %q", got)
	}
	if got := PadRight("ab", 4); got != "ab  " {
		t.Errorf("PadRight = %q", got)
	}
	if got := PadLeft("ab", 4); got != "  ab" {
		t.Errorf("PadLeft = %q", got)
	}
	if got := PadLeft("abcdef", 4); got != "abc…" {
		t.Errorf("PadLeft cut = %q", got)
	}
	if got := Fit("\x1b[1mbold\x1b[0m", 6); Width(got) != 6 {
		t.Errorf("Fit of a styled line is %d cells: %q", Width(got), got)
	}
	if got := Width("日本"); got != 2*2 {
		t.Errorf("Width of wide runes = %d", got)
	}
}

// The plain-ASCII fast paths agree with the general ones.
func TestCellsASCII(t *testing.T) {
	for _, s := range []string{"", "a", "hello world", "exactly ten", strings.Repeat("x", 50), "tab\there", "é accent", "\x1b[1mbold\x1b[0m"} {
		for w := 0; w <= 14; w++ {
			if got, want := Width(s), ansi.StringWidth(s); got != want {
				t.Fatalf("Width(%q) = %d, want %d", s, got, want)
			}
			want := ""
			if w > 0 {
				want = s
				if ansi.StringWidth(s) > w {
					want = ansi.Truncate(s, w, "…")
				}
			}
			if got := Cut(s, w); got != want {
				t.Fatalf("Cut(%q, %d) = %q, want %q", s, w, got, want)
			}
			if got := Fit(s, w); ansi.StringWidth(got) != w {
				t.Fatalf("Fit(%q, %d) = %q", s, w, got)
			}
		}
	}
}
