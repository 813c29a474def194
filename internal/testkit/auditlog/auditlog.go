// Package auditlog reads a vigil audit log in a test: every line, each a
// record, or the test fails naming the line.
package auditlog

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/audit"
)

// Read is every record of the log at path.
func Read(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}
