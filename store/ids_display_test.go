package store

import "testing"

// DisplayID cuts an id longer than 14 characters to its first 8 and last
// 4 around "…", counting characters, not bytes; DisplayIDParts is the same
// text in parts.
func TestDisplayIDCutsByCharacters(t *testing.T) {
	for id, want := range map[string]string{
		"42":                                   "42",
		"12345678901234":                       "12345678901234",
		"000007d0-0000-4000-8000-0000000007d0": "000007d0…07d0",
		"ééééééééxyzéééé":                      "éééééééé…éééé",
		"日本語のランの識別子はとても長い": "日本語のランの識…ても長い",
	} {
		if got := DisplayID(id); got != want {
			t.Errorf("DisplayID(%q) = %q, want %q", id, got, want)
		}
		head, tail, cut := DisplayIDParts(id)
		if joined := map[bool]string{false: head, true: head + "…" + tail}[cut]; joined != want {
			t.Errorf("DisplayIDParts(%q) joined = %q, want %q", id, joined, want)
		}
	}
}
