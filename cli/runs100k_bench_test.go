//go:build unix

package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/vigil-run/vigil/internal/testkit/bigrun"
)

// BenchmarkHundredK is issue 12's D4 bound in process: runs and show ROOT,
// text and JSON, on a chain of 100 000 runs and a tree 100 000 wide (the
// stores bigrun.Tree keeps under $TMPDIR/vigil-bench; the first run builds
// them). TestBigTrees holds the real binary to ≤ 1 s and ≤ 200 MB.
//
//	go test ./cli -run '^$' -bench HundredK -benchtime 3x -benchmem
func BenchmarkHundredK(b *testing.B) {
	for _, shape := range []struct {
		name  string
		chain bool
	}{{"chain", true}, {"wide", false}} {
		path := bigrun.Tree(b, 100_000, shape.chain)
		for _, cmd := range []string{"runs", "runs --json", "show 1", "show 1 --json"} {
			b.Run(shape.name+"/"+strings.ReplaceAll(cmd, " ", "_"), func(b *testing.B) {
				args := append(strings.Fields(cmd), "--store", path)
				for b.Loop() {
					if rc := Run(args, strings.NewReader(""), io.Discard, io.Discard, nil); rc != 0 {
						b.Fatalf("vigil %s: exit %d", cmd, rc)
					}
				}
			})
		}
	}
}
