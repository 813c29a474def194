// Package sanitize makes text from a store safe to put on a terminal.
//
// Everything a run store holds is untrusted: model output and tool results
// can carry escape sequences that recolour the screen, move the cursor,
// rewrite the window title (OSC, or APC in tmux), or talk to the terminal
// (DCS), a carriage return that draws over what is already on the line,
// and bidi controls that reorder what a person reads. Every string from a
// store goes through Text or Line before it is rendered. Nothing is
// interpreted: each control character becomes a visible stand-in, so a
// person can see that something was there without the terminal acting on
// it.
//
// Text and Line also take out what terminals disagree on the width of
// (Unambiguous; conjoining Hangul jamo become syllables), so that the
// width vigil lays a line out with is the width the terminal draws it
// with, and borders stay where they belong.
//
// Frame is the last line of defence: the explorer passes every frame it
// draws through it, and it lets nothing through but text, line breaks and
// the frame's own colours (SGR), whatever a pane did.
package sanitize

import (
	"io"
	"unicode/utf8"
	"unsafe"
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
	b, _ := appendClean(make([]byte, 0, len(s)+8), s, oneLine, true)
	return string(b)
}

// appendClean appends the safe form of s to b and says how much of s it
// took. Unless final, it stops short of what the bytes after s could
// change: a character cut off at the end, a CR that may be half a CRLF, a
// regional indicator that may be half a flag. Text and the writers share
// it, so text made safe a piece at a time is byte for byte the text made
// safe whole.
func appendClean(b []byte, s string, oneLine, final bool) ([]byte, int) {
	for i := 0; i < len(s); {
		if !final && !utf8.FullRuneInString(s[i:]) {
			return b, i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		start := i
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, '\uFFFD') // invalid UTF-8
		case r == '\n':
			if oneLine {
				b = append(b, ' ')
			} else {
				b = append(b, '\n')
			}
		case r == '\r':
			if i == len(s) && !final {
				return b, start // a CRLF's LF may come next
			}
			if i < len(s) && s[i] == '\n' {
				continue // CRLF is a line break
			}
			b = utf8.AppendRune(b, '\u240D') // ␍
		case r == '\t':
			if oneLine {
				b = append(b, ' ')
			} else {
				b = append(b, "    "[:TabWidth]...)
			}
		case r < 0x20:
			b = utf8.AppendRune(b, 0x2400+r) // control pictures: ␛ for ESC, ␇ for BEL, …
		case r == 0x7f:
			b = utf8.AppendRune(b, '\u2421') // ␡
		case r >= 0x80 && r <= 0x9f, isBidiControl(r), r == '\u2028', r == '\u2029':
			// C1 controls (a lone CSI or OSC byte as a code point), bidi
			// overrides and isolates, and Unicode line separators.
			b = utf8.AppendRune(b, '\uFFFD')
		case invisible(r):
			b = utf8.AppendRune(b, '\uFFFD')
		case widthJoiner(r):
			// Dropped: see Unambiguous.
		case isJamo(r):
			// See composeJamo. Unless final, wait for the jamo that may
			// complete the syllable.
			c, n, ok := composeJamo(r, s[i:], final)
			if !ok {
				return b, start
			}
			b = utf8.AppendRune(b, c)
			i += n
		case isRegional(r):
			// Regional indicators draw as a flag in pairs; one left over
			// is a cell to some terminals and two to others.
			if !final && !utf8.FullRuneInString(s[i:]) {
				return b, start // its pair may come next
			}
			if next, n := utf8.DecodeRuneInString(s[i:]); isRegional(next) {
				b = utf8.AppendRune(b, r)
				b = utf8.AppendRune(b, next)
				i += n
			} else {
				b = utf8.AppendRune(b, '\uFFFD')
			}
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b, len(s)
}

// widthJoiner reports the code points that join or restyle the character
// before them into one glyph whose width terminals disagree on: the zero
// width joiner of emoji sequences (one glyph of two cells to tmux and to
// grapheme-aware terminals, one glyph per emoji to wcwidth), emoji skin-tone
// modifiers (two cells of their own to wcwidth and tmux, none to
// grapheme-aware terminals), the text and emoji presentation selectors (❤️
// is one cell to wcwidth and tmux, two to others) and the soft hyphen (a
// cell to tmux, none to wcwidth). Without them every terminal and every
// width function agrees: a family emoji becomes its members, a thumbs-up
// loses its skin tone, a word its invisible hyphenation point.
func widthJoiner(r rune) bool {
	switch {
	case r == '\u200D', r == '\uFE0E', r == '\uFE0F', r == '\u00AD':
		return true
	case r >= 0x1F3FB && r <= 0x1F3FF:
		return true
	}
	return false
}

// isJamo reports the conjoining Hangul jamo (the Hangul Jamo block and
// Jamo Extended-A and -B). A run of them is one syllable of two cells to
// tmux and grapheme-aware terminals, and a cell or two per jamo to wcwidth.
func isJamo(r rune) bool {
	return (r >= 0x1100 && r <= 0x11FF) || (r >= 0xA960 && r <= 0xA97F) || (r >= 0xD7B0 && r <= 0xD7FF)
}

// composeJamo makes the jamo r, followed by rest, one character every
// terminal draws two cells wide: a modern leading consonant and vowel,
// with a trailing consonant if one follows, become their precomposed
// syllable (U+AC00–U+D7A3) and take n bytes of rest; any other jamo (a lone
// one, old Hangul, fillers) is U+FFFD, as it would otherwise join its
// neighbours. ok is false, unless final, when rest is too short to tell.
func composeJamo(r rune, rest string, final bool) (c rune, n int, ok bool) {
	if r < 0x1100 || r > 0x1112 {
		return '\uFFFD', 0, true
	}
	if !final && !utf8.FullRuneInString(rest) {
		return 0, 0, false
	}
	v, vn := utf8.DecodeRuneInString(rest)
	if v < 0x1161 || v > 0x1175 {
		return '\uFFFD', 0, true
	}
	c = 0xAC00 + ((r-0x1100)*21+(v-0x1161))*28
	if !final && !utf8.FullRuneInString(rest[vn:]) {
		return 0, 0, false
	}
	if t, tn := utf8.DecodeRuneInString(rest[vn:]); t >= 0x11A8 && t <= 0x11C2 {
		return c + t - 0x11A7, vn + tn, true
	}
	return c, vn, true
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

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

// Hazard reports the characters above the C0 range that a terminal acts on
// or that reorder what a person reads: DEL, the C1 controls (U+0080–U+009F:
// a lone CSI, OSC, DCS or ST), bidi embeddings, overrides, isolates and
// marks, and the Unicode line and paragraph separators. Writers of escaped
// output (JSON) escape these as well as C0.
func Hazard(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) || r == '\u2028' || r == '\u2029'
}

// invisible reports the characters that draw nothing yet carry text: the
// Unicode tag characters, which spell ASCII a model reads and a person does
// not see ("ASCII smuggling", in an action's content or a goal), and the
// zero-width space, word joiner, invisible operators and byte order mark.
// Each becomes a visible stand-in: what a person approves must not hold
// text they cannot see.
func invisible(r rune) bool {
	return r == '\u200B' || (r >= '\u2060' && r <= '\u2064') || r == '\uFEFF' || (r >= 0xE0000 && r <= 0xE007F)
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
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidiControl(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// Unambiguous reports whether text holds nothing whose width terminals
// disagree on (what Text and Line take out). Tests use it.
func Unambiguous(s string) bool {
	prevRegional := false
	for _, r := range s {
		if widthJoiner(r) || isJamo(r) {
			return false
		}
		if isRegional(r) {
			prevRegional = !prevRegional
		} else if prevRegional {
			return false
		}
	}
	return !prevRegional
}

// WriteText writes Text(s) to w a piece at a time, so that a trace holding
// a 200 MB tool result is not copied whole to be made safe.
func WriteText(w io.Writer, s string) error {
	t := &textWriter{w: w}
	for len(s) > 0 {
		n := min(len(s), writePiece)
		if _, err := io.WriteString(t, s[:n]); err != nil {
			return err
		}
		s = s[n:]
	}
	return t.Close()
}

// writePiece is how much a writer makes safe at once.
const writePiece = 64 << 10

// TextWriter is a writer that passes Text of what it is given on to w,
// whatever the pieces: a character, a CRLF or a flag split between two
// writes comes out as it would whole. Close writes what is held back.
func TextWriter(w io.Writer) io.WriteCloser { return &textWriter{w: w} }

// LineWriter is TextWriter for Line.
func LineWriter(w io.Writer) io.WriteCloser { return &textWriter{w: w, oneLine: true} }

type textWriter struct {
	w       io.Writer
	oneLine bool
	held    []byte // the end of the last write that the next may change
	out     []byte
}

func (t *textWriter) Write(p []byte) (int, error) {
	for at := 0; at < len(p); {
		n := min(len(p)-at, writePiece)
		if err := t.write(p[at:at+n], false); err != nil {
			return at, err
		}
		at += n
	}
	return len(p), nil
}

func (t *textWriter) WriteString(s string) (int, error) {
	return t.Write(unsafeBytes(s))
}

func (t *textWriter) write(p []byte, final bool) error {
	in := p
	if len(t.held) > 0 {
		t.held = append(t.held, p...)
		in = t.held
	}
	if len(t.held) == 0 && safeASCII(unsafeString(in), t.oneLine) {
		// Nothing to change, and nothing the next write could change.
		_, err := t.w.Write(in)
		return err
	}
	var took int
	t.out, took = appendClean(t.out[:0], unsafeString(in), t.oneLine, final)
	rest := in[took:]
	if len(t.held) > 0 {
		t.held = append(t.held[:0], rest...)
	} else {
		t.held = append(t.held[:0:0], rest...)
	}
	if len(t.out) == 0 {
		return nil
	}
	_, err := t.w.Write(t.out)
	return err
}

func (t *textWriter) Close() error {
	err := t.write(nil, true)
	t.held = nil
	return err
}

// unsafeString and unsafeBytes view bytes as a string and back without a
// copy: appendClean only reads what it is given, and nothing keeps it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
