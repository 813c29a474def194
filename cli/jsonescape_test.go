package cli

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// escapeJSONControls escapes exactly what the byte-at-a-time rule escapes,
// wherever in an eight-byte word a hazard or another non-ASCII byte falls.
func TestEscapeJSONControlsWordScan(t *testing.T) {
	slow := func(b []byte) []byte {
		var out []byte
		for i := 0; i < len(b); {
			r, size := utf8.DecodeRune(b[i:])
			if sanitize.Hazard(r) {
				out = fmt.Appendf(out, `\u%04x`, r)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
		return out
	}
	inserts := []string{"\x7f", "\u0085", "\u0090", "\u009b", "\u202e", "é", "\xff", "\xfe\x7e", "\u2028", "~"}
	for n := range 20 {
		for at := 0; at <= n; at++ {
			for _, ins := range inserts {
				b := []byte(strings.Repeat("a", at) + ins + strings.Repeat("~", n-at) + ins)
				if got, want := escapeJSONControls(slices.Clone(b)), slow(b); string(got) != string(want) {
					t.Errorf("escapeJSONControls(%q) = %q, want %q", b, got, want)
				}
			}
		}
	}
	for _, w := range []string{"\x7e\x7e\x7e\x7e\x7e\x7e\x7e\x7e", "\x00\x00\x00\x00\x00\x00\x00\x00", "\xff\x00\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00\x00\x7f"} {
		if got, want := hasDELOrHigh(binary.LittleEndian.Uint64([]byte(w))), strings.ContainsFunc(w, func(r rune) bool { return r >= 0x7f }); got != want {
			t.Errorf("hasDELOrHigh(%q) = %v", w, got)
		}
	}
}
