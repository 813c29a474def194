package sanitize

import (
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// repairs counts the frames Frame and Plain had to change.
var repairs atomic.Uint64

// Repairs is how many frames Frame and Plain have had to change in this
// process: tests that draw hostile stores check that it stays put (every
// pane made the store's strings safe itself) as well as that the output is
// safe.
func Repairs() uint64 { return repairs.Load() }

// Frame makes a whole drawn frame safe for the terminal: it keeps text,
// line breaks and SGR colour sequences (CSI … m) whose every attribute is
// one a frame uses, and turns everything else into the stand-ins Text uses
// — ESC of any other sequence (cursor movement, OSC, DCS, APC, PM, SOS)
// becomes ␛ with the rest of the sequence left as plain text, a carriage
// return ␍, other C0 controls their control pictures, DEL ␡, and C1
// controls, bidi controls, line separators and invalid UTF-8 U+FFFD.
//
// Text and Line are where a store's strings are made safe; Frame is the one
// place every string passes on its way to the terminal, so that a string
// that reached a pane without them still cannot act. A frame that needs
// nothing (every frame vigil draws, if every pane does its part) is
// returned as it is, without allocating.
func Frame(s string) string { return guard(s, true) }

// Plain is Frame for text that has no colours of its own (the command
// line's tables, Markdown and lines): it keeps no escape sequence at all.
func Plain(s string) string { return guard(s, false) }

func guard(s string, sgr bool) string {
	i := frameSafePrefix(s, sgr)
	if i == len(s) {
		return s
	}
	repairs.Add(1)
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' || (c >= 0x20 && c < 0x7f):
			b.WriteByte(c)
			i++
		case c == 0x1b:
			if n := sgrLen(s[i:]); n > 0 && sgr {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			b.WriteRune('\u241B') // ␛: what follows is plain text now
			i++
		case c == '\r':
			b.WriteRune('\u240D')
			i++
		case c == '\t':
			b.WriteByte(' ')
			i++
		case c < 0x20:
			b.WriteRune(0x2400 + rune(c))
			i++
		case c == 0x7f:
			b.WriteRune('\u2421')
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unsafeRune(r, size) {
				b.WriteRune('\uFFFD')
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// frameSafePrefix is how much of s Frame keeps as it is.
func frameSafePrefix(s string, sgr bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || (c >= 0x20 && c < 0x7f):
			i++
		case c == 0x1b:
			n := sgrLen(s[i:])
			if n == 0 || !sgr {
				return i
			}
			i += n
		case c < 0x80:
			return i
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if unsafeRune(r, size) {
				return i
			}
			i += size
		}
	}
	return len(s)
}

func unsafeRune(r rune, size int) bool {
	return (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) || r == '\u2028' || r == '\u2029'
}

// sgrLen is the length of the SGR sequence s starts with, or 0 when s does
// not start with one Frame keeps: ESC [ params m, the params digits, ';'
// and ':' only, each attribute one of those a frame draws with (bold, faint,
// italic, underline and its styles, reverse, strikethrough, their resets,
// and colours). Blink, conceal and the rest are refused: no pane asks for
// them, so one in a frame came from somewhere else.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	end := -1
	for j := 2; j < len(s) && j < 2+128; j++ {
		c := s[j]
		if c == 'm' {
			end = j
			break
		}
		if !(c >= '0' && c <= '9') && c != ';' && c != ':' {
			return 0
		}
	}
	if end < 0 || !sgrParamsOK(s[2:end]) {
		return 0
	}
	return end + 1
}

func sgrParamsOK(p string) bool {
	// Walk the ';'-separated fields without allocating: frames are full of
	// these, and Frame runs on every one.
	next := func() (field string, ok bool) {
		if p == "" {
			return "", false
		}
		field, p, _ = strings.Cut(p, ";")
		return field, true
	}
	if p == "" {
		return true // ESC [ m: reset
	}
	for {
		f, more := next()
		if !more {
			return true
		}
		head, sub, hasSub := strings.Cut(f, ":")
		n, ok := atoi(head)
		switch {
		case !ok:
			return false
		case n == 38 || n == 48 || n == 58: // extended colour: 5;n or 2;r;g;b, or the colon forms
			if hasSub {
				if !digitsAndColons(sub) {
					return false
				}
				continue
			}
			m, _ := next()
			mode, ok := atoi(m)
			args := 0
			switch {
			case !ok || m == "":
				return false
			case mode == 5:
				args = 1
			case mode == 2:
				args = 3
			default:
				return false
			}
			for ; args > 0; args-- {
				a, more := next()
				if _, ok := atoi(a); !more || !ok {
					return false
				}
			}
		case hasSub:
			if n != 4 || !digitsAndColons(sub) { // 4:n underline styles
				return false
			}
		case !allowedSGR(n):
			return false
		}
	}
}

func allowedSGR(n int) bool {
	switch {
	case n <= 4, n == 7, n == 9: // reset, bold, faint, italic, underline, reverse, strikethrough
		return true
	case n >= 21 && n <= 25, n == 27, n == 29: // their resets (25: not blinking)
		return true
	case n >= 30 && n <= 37, n == 39, n >= 40 && n <= 47, n == 49, n == 59:
		return true
	case n >= 90 && n <= 97, n >= 100 && n <= 107:
		return true
	}
	return false
}

func atoi(s string) (int, bool) {
	if s == "" {
		return 0, true // an empty parameter is 0
	}
	if len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func digitsAndColons(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != ':' {
			return false
		}
	}
	return true
}
