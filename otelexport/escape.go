package otelexport

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// content is what a person or a model wrote, sent with --content: the text
// as the store holds it, made valid UTF-8 (OTLP carries only UTF-8), with
// every character a terminal would act on written as \uXXXX, as `vigil
// runs --json` writes it. A backend's UI, a log line or `jq -r` on the
// collector's output can put an attribute on a terminal; an OSC 52
// clipboard write, an ESC[2J or a BEL in a goal or a tool's result then
// arrives as text a person can read, never as an action. Line breaks and
// tabs are kept: they are the text's own layout.
func content(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if escaped(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func escaped(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || sanitize.Hazard(r)
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
		if s[i] >= utf8.RuneSelf {
			return strings.IndexFunc(s[i:], escaped) >= 0
		}
	}
	return false
}

// escapeJSONHazards writes, in encoded JSON, the characters encoding/json
// passes raw (DEL, C1 controls, bidi controls: sanitize.Hazard) as \uXXXX.
// They can only be inside strings, where the escape means the same
// character to a JSON reader.
func escapeJSONHazards(b []byte) string {
	s := string(b)
	if strings.IndexFunc(s, sanitize.Hazard) < 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s) + 16)
	for _, r := range s {
		if sanitize.Hazard(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.WriteRune(r)
		}
	}
	return out.String()
}
