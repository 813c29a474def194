package starweaver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/foreign"
)

// foreignWriter is Starweaver's process as a foreign party: python3's
// sqlite3 writes every statement the fixture builders make, in a process
// of its own; the Go connection only reads (the next sequence numbers).
func foreignWriter(t *testing.T, path string) *fx {
	t.Helper()
	f := writerFx(t, path)
	f.party = foreign.Python(t)
	return f
}

// inline puts args into q as SQL literals, for a party that takes SQL
// text. The foreign runner splits statements on ';', so a value holding
// one is refused rather than cut.
func inline(t testing.TB, q string, args []any) string {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		if n >= len(args) {
			t.Fatalf("more placeholders than arguments in %s", q)
		}
		switch v := args[n].(type) {
		case string:
			if strings.Contains(v, ";") {
				t.Fatalf("a value with ';' cannot go through the foreign runner: %.80s", v)
			}
			b.WriteString("'" + strings.ReplaceAll(v, "'", "''") + "'")
		case int, int64:
			fmt.Fprintf(&b, "%d", v)
		default:
			t.Fatalf("inline: an argument of type %T", v)
		}
		n++
	}
	if n != len(args) {
		t.Fatalf("%d arguments for %d placeholders in %s", len(args), n, q)
	}
	return b.String()
}
