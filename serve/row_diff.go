package serve

import (
	"strings"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// A commit changes a few cells of most rows a frame rewrites: the explorer's
// panes sit side by side, so a timeline that scrolls by one step changes
// every row it shares with the agents tree, whose half of each row stays
// as it was. Written whole, a frame of an explorer of its own came to about
// 4.2 kB at 120 columns (the SSH cipher, the socket and the fifty client
// terminals all paid for every byte): a row is now written from its first
// changed cell on, as far back as a place where both the old and the new row
// are at a character boundary the terminal cannot join across.

// rowCut says where to start writing row now over row was, both drawn at
// the same width: the byte offset in now, the column it starts at (0: the
// whole row), and the SGR sequences in force at that offset (since the last
// reset), to be set again before the rest of the row.
//
// A cut is made only before a printable ASCII byte of now (or an escape),
// where was also has one (or an escape, or its end), after a printable ASCII
// byte or a whole SGR sequence, outside every escape: no grapheme cluster,
// wide character or combining mark straddles it in either row, and the
// prefix the terminal keeps is byte for byte what now would draw. Any
// escape but SGR in the common part (a hyperlink, a cursor move) stops the
// search there.
func rowCut(was, now string) (cut, col int, sgr string) {
	n := 0
	for n < len(was) && n < len(now) && was[n] == now[n] {
		n++
	}
	if n == len(was) && n == len(now) {
		return len(now), -1, "" // the same row
	}
	w := 0         // the width of now[:i]
	from := 0      // where the SGR sequences in force at i begin (after the last reset)
	cutFrom := 0   // from, at cut
	run := -1      // where the run of non-ASCII bytes before i began (-1: none)
	prevOK := true // the byte before i ends a printable ASCII character or an SGR sequence
	for i := 0; i <= n; i++ {
		if run >= 0 && (i == n || now[i] < 0x80) {
			// A run of non-ASCII between ASCII bytes and escapes is whole
			// characters: measured alone (textfmt remembers the long ones).
			w += textfmt.Width(now[run:i])
			run = -1
		}
		if prevOK && boundaryByte(now, i) && boundaryByte(was, i) {
			cut, col, cutFrom = i, w, from
		}
		if i == n {
			break
		}
		switch c := now[i]; {
		case c == 0x1b:
			end := sgrEnd(now, i)
			if end < 0 || end > n {
				return cut, col, sgrIn(now, cutFrom, cut)
			}
			if seq := now[i:end]; seq == "\x1b[m" || seq == "\x1b[0m" {
				from = end
			}
			i = end - 1
			prevOK = true
		case c >= 0x20 && c < 0x7f:
			w++
			prevOK = true
		case c < 0x20 || c == 0x7f:
			return cut, col, sgrIn(now, cutFrom, cut)
		default:
			if run < 0 {
				run = i
			}
			prevOK = false
		}
	}
	return cut, col, sgrIn(now, cutFrom, cut)
}

// sgrIn is the SGR sequences in s[from:to], which holds no other escape.
func sgrIn(s string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		if s[i] != 0x1b {
			continue
		}
		end := sgrEnd(s, i)
		b.WriteString(s[i:end])
		i = end - 1
	}
	return b.String()
}

// boundaryByte: offset i of s starts nothing a character before it could
// join (printable ASCII, an escape) or is s's end.
func boundaryByte(s string, i int) bool {
	if i == len(s) {
		return true
	}
	c := s[i]
	return c == 0x1b || (c >= 0x20 && c < 0x7f)
}

// sgrEnd is the end of the SGR sequence (CSI … m) starting at s[i], or -1
// if there is none there.
func sgrEnd(s string, i int) int {
	if i+1 >= len(s) || s[i] != 0x1b || s[i+1] != '[' {
		return -1
	}
	for j := i + 2; j < len(s); j++ {
		switch c := s[j]; {
		case c == 'm':
			return j + 1
		case (c >= '0' && c <= '9') || c == ';' || c == ':':
		default:
			return -1
		}
	}
	return -1
}
