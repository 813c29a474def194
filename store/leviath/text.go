package leviath

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"unicode/utf8"
)

// text is a JSON string of a journal frame (an entry's or a message's
// content) as the fold reads it: the encoded bytes, still inside the frame
// they were decoded from, never the whole decoded string. A tool result of
// 100 MB costs the frame buffer it arrived in, not copies of itself; the
// fold takes its first line (head), a fingerprint of the encoded bytes
// (serde_json writes one string the same way every time, so the same
// content in a later window fingerprints the same), and a step's detail
// the first store.MaxDetailBytes.
//
// raw aliases the frame's payload: json.Unmarshal hands UnmarshalJSON a
// slice of the input, and the payload is ours (readFrames reuses it only
// after the frame's callback returns; readEntry allocates its own). A text
// must not outlive the payload it was decoded from.
type text struct {
	raw  []byte // the encoded string, quotes included; only its head when cut
	hash uint64 // the fingerprint of the whole encoded string
	cut  bool   // raw is the head of a longer string (see skeleton)
}

func (t *text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		if string(b) == "null" {
			*t = text{}
			return nil
		}
		var s string
		return json.Unmarshal(b, &s) // the type error encoding/json would give
	}
	if head, hash, _, ok := cutMark(b); ok {
		*t = text{raw: head, hash: hash, cut: true}
		return nil
	}
	*t = text{raw: b, hash: contentHash(b)}
	return nil
}

// whole is the full decoded string. Only tests and small values use it.
func (t text) whole() string {
	s, _ := t.head(len(t.raw))
	return s
}

// head is the decoded string cut to at most n bytes (on a character
// boundary), and whether it is the whole string.
func (t text) head(n int) (string, bool) {
	r := t.raw
	if len(r) < 2 || r[0] != '"' {
		return "", true
	}
	body := r[1 : len(r)-1]
	whole := len(body) <= n && !t.cut
	if len(body) > n {
		// Cut the encoded bytes at n without splitting an escape or a
		// UTF-8 sequence: decoded, they are at most n bytes.
		j := 0
		for j < n {
			if body[j] != '\\' {
				j++
				continue
			}
			w := 2
			if j+1 < len(body) && body[j+1] == 'u' {
				w = 6
			}
			if j+w > n {
				break
			}
			j += w
		}
		for j > 0 && j < len(body) && !utf8.RuneStart(body[j]) {
			j--
		}
		body = body[:j]
	}
	if !hasEscape(body) {
		return string(body), whole
	}
	q := make([]byte, 0, len(body)+2)
	q = append(append(append(q, '"'), body...), '"')
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return string(body), whole
	}
	return s, whole
}

// hasEscape says whether b holds a backslash or a control character: a
// detail's 256 KB head is looked at by attention's word-wide loop, not a
// byte at a time.
func hasEscape(b []byte) bool {
	return attention(b) < len(b)
}

// firstLineOf is text's first non-blank line, cut to one row; it decodes
// only the start of the string.
func firstLineOf(t text) string {
	s, _ := t.head(64 << 10)
	return firstLine(s)
}

// fingerprint is a 64-bit FNV-1a of the parts, each followed by a zero
// byte; content is the fingerprint of the encoded content (text.hash).
func fingerprint(kind, id string, content uint64, more []string, key string) uint64 {
	h := fnv.New64a()
	w := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	w(kind)
	w(id)
	w(key)
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], content)
	h.Write(c[:])
	for _, s := range more {
		w(s)
	}
	return h.Sum64()
}
