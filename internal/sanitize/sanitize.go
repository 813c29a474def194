// Package sanitize makes text from a store safe to put on a terminal.
//
// Everything a run store holds is untrusted: model output and tool results
// can carry escape sequences that recolour the screen, move the cursor,
// rewrite the window title (OSC), or talk to the terminal (DCS), and bidi
// controls that reorder what a person reads. Every string from a store goes
// through Text or Line before it is rendered. Nothing is interpreted: each
// control character becomes a visible stand-in, so a person can see that
// something was there without the terminal acting on it.
package sanitize

import (
	"strings"
	"unicode/utf8"
)

// TabWidth is how many spaces a tab becomes.
const TabWidth = 4

// Text keeps line breaks and makes everything else printable.
func Text(s string) string { return clean(s, false) }

// Line makes text fit one line: line breaks become spaces.
func Line(s string) string { return clean(s, true) }

func clean(s string, oneLine bool) string {
	if safeASCII(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD') // invalid UTF-8
		case r == '\n':
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue // CRLF is a line break
			}
			b.WriteRune('\u240D') // ␍
		case r == '\t':
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteString(strings.Repeat(" ", TabWidth))
			}
		case r < 0x20:
			b.WriteRune(0x2400 + r) // control pictures: ␛ for ESC, ␇ for BEL, …
		case r == 0x7f:
			b.WriteRune('\u2421') // ␡
		case r >= 0x80 && r <= 0x9f, isBidiControl(r), r == '\u2028', r == '\u2029':
			// C1 controls (a lone CSI or OSC byte as a code point), bidi
			// overrides and isolates, and Unicode line separators.
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// safeASCII reports text made only of printable ASCII and (unless oneLine)
// line breaks, which needs no work.
func safeASCII(s string, oneLine bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && (c != '\n' || oneLine)) || c >= 0x7f {
			return false
		}
	}
	return true
}

func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') || r == '\u061C' || r == '\u200E' || r == '\u200F'
}

// Safe reports whether text holds nothing a terminal would act on: no
// control character but the line break, no bidi control, valid UTF-8. Tests
// use it to check rendered output.
func Safe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) {
			return false
		}
	}
	return true
}
