package tailbuf

import "testing"

func TestKeepsTheEnd(t *testing.T) {
	b := &Buffer{Max: 16}
	b.Write([]byte("first line\nsecond line\n"))
	b.Write([]byte("last words\n\n"))
	if got, want := b.String(), "ine\nlast words\n\n"; got != want {
		t.Fatalf("kept %q, want the last 16 bytes %q", got, want)
	}
	if got := b.LastLine(); got != "last words" {
		t.Fatalf("last line %q", got)
	}
}
