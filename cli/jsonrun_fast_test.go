package cli

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-run/vigil/internal/sanitize"
)

// appendRunJSON writes what json.Marshal writes, for every field set and
// unset and for strings encoding/json escapes.
func TestAppendRunJSONIsMarshal(t *testing.T) {
	s := func(v string) *string { return &v }
	n, n64, yes := 7, int64(-12), true
	for _, j := range []jsonRun{
		{},
		{ID: "1", RootID: "1", State: "running", Goal: "goal 1", Liveness: "live"},
		{ID: "2", ParentID: s("1"), RootID: "1", Depth: 1, State: "done", Status: s("completed"), Outcome: s("success"),
			Success: &yes, Goal: `a "quoted" <b>&amp;</b> \ path`, Workspace: s("/w/é"), Provider: s("p\x00\x1b[31m"),
			TurnKind: s("reply"), AgentSteps: &n, AgentTokens: &n64, TreeAgents: 3, TreeSteps: &n, TreeTokens: &n64,
			StartedAt: s("2026-11-29T12:00:00Z"), FinishedAt: s("x\u2028y"), DurationMS: &n64, AgentWait: 1, TreeWait: 2,
			Liveness: "bad \xff utf-8", Lease: &jsonLease{HeldBy: "1", Owner: "o", PID: &n, AcquiredAt: s("t")},
			Recovery: &jsonRecovery{AttemptID: "a", Step: 2, Tool: "write"}},
	} {
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRunJSON(nil, &j)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("appendRunJSON:\n got %s\nwant %s", got, want)
		}
		for _, prefix := range []string{"", "    "} {
			want, _ := json.MarshalIndent(j, prefix, "  ")
			got, err := appendRunJSONIndented([]byte("x"), &j, prefix)
			if err != nil {
				t.Fatal(err)
			}
			if string(got[1:]) != string(want) || got[0] != 'x' {
				t.Errorf("appendRunJSONIndented(%q):\n got %s\nwant %s", prefix, got, want)
			}
		}
	}
}

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
