package serve

import (
	"bytes"
	"unicode/utf8"
)

// pasteAtLeast is how many bytes of text one read of a session's input
// must bring to be taken for a paste: nobody types that many between two
// reads. A terminal without bracketed paste (or input piped into ssh)
// sends a paste as plain text; Bubble Tea would make a key press of each
// character, and each key press an update and a frame: a paste kept a
// core busy for as long as it took to draw a frame per byte, and its
// characters acted as keys where no field took them.
const pasteAtLeast = 16

// Bracketed paste's markers (xterm's mode 2004, which the explorer sets
// for terminals that have it).
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// paster makes each read of a session's input that is a paste (text of
// pasteAtLeast bytes or more: UTF-8, line breaks and tabs, nothing else
// below a space) one bracketed paste. Anything with an escape in it
// (keys, mouse reports) is left as it is, and so is what comes inside a
// paste the terminal bracketed itself.
type paster struct {
	inPaste bool   // inside the terminal's own bracketed paste
	tail    []byte // the end of the read before: a marker cut between two reads
	carry   []byte // a character cut between two reads of a paste
}

// chunk is b as the explorer gets it; intoField is whether a paste would
// go into a field now (else plain text stays keys: "1/filter" typed in one
// burst opens the filter and types into it).
func (p *paster) chunk(b []byte, intoField bool) []byte {
	if len(p.carry) > 0 {
		b = append(p.carry, b...)
		p.carry = nil
	}
	seen := append(p.tail, b...)
	p.tail = append([]byte(nil), seen[max(len(seen)-len(pasteStart)+1, 0):]...)
	// The tail is shorter than a marker: a marker seen is (in part) this
	// read's.
	was := p.inPaste
	start, end := bytes.LastIndex(seen, pasteStart), bytes.LastIndex(seen, pasteEnd)
	if start > end {
		p.inPaste = true
	} else if end > start {
		p.inPaste = false
	}
	if !intoField || was || start >= 0 || end >= 0 || len(b) < pasteAtLeast || bytes.IndexByte(b, 0x1b) >= 0 {
		return b
	}
	// A paste read in pieces may cut a character: its start waits for the
	// next read.
	text := b
	if i := lastRuneStart(b); i >= 0 && !utf8.FullRune(b[i:]) {
		text, p.carry = b[:i], append([]byte(nil), b[i:]...)
	}
	if !utf8.Valid(text) {
		p.carry = nil
		return b
	}
	for _, c := range text {
		if c < ' ' && c != '\r' && c != '\n' && c != '\t' || c == 0x7f {
			p.carry = nil
			return b
		}
	}
	return bytes.Join([][]byte{pasteStart, text, pasteEnd}, nil)
}

// lastRuneStart is where the last character of b starts (-1: b is empty).
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}
