package leviath

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigil-run/vigil/store"
)

// A text decodes only as far as it is asked, never splitting an escape or
// a character, and agrees with encoding/json on the whole string.
func TestTextHead(t *testing.T) {
	for _, s := range []string{"", "plain", "line\nbreak", "tab\tquote\" back\\slash", "日本語 ✓ \u2028 \x1b[2J", strings.Repeat("é\\\"x\n", 50)} {
		raw, _ := json.Marshal(s)
		var tx text
		if err := json.Unmarshal(raw, &tx); err != nil {
			t.Fatal(err)
		}
		if got := tx.whole(); got != s {
			t.Errorf("whole(%q) = %q", s, got)
		}
		for n := 0; n <= len(raw); n++ {
			h, whole := tx.head(n)
			if len(h) > n || !strings.HasPrefix(s, h) || !utf8.ValidString(h) {
				t.Fatalf("head(%q, %d) = %q", s, n, h)
			}
			if whole && h != s {
				t.Fatalf("head(%q, %d) says whole but is %q", s, n, h)
			}
		}
	}
	var tx text
	if err := json.Unmarshal([]byte(`{"a":1}`), &tx); err == nil {
		t.Error("an object decoded as text")
	}
}

// A frame read through its skeleton decodes to the same record as the
// frame decoded whole: the same fingerprints, the same first lines, every
// short string as it was; a long string keeps its head; a frame that is not
// JSON inside a long string is still not JSON.
func TestSkeleton(t *testing.T) {
	long := strings.Repeat("line \"quoted\" \\ back é \u2028\n", 5000) // ~135 KB encoded
	rec := tagged("Progress", ordered{{"meta", ordered{{"task", long}, {"status", "running"}}},
		{"delta", ordered{{"stage_name", "work"}, {"total_tokens", 1}, {"max_tokens", 2}, {"regions", []any{
			tagged("Append", ordered{{"name", "conversation"}, {"current_tokens", 1}, {"entries", []ordered{
				{{"content", long}, {"tokens", 1}, {"kind", ordered{{"type", "ToolResult"}, {"tool_call_id", "c1"}, {"tool_name", "bash"}, {"is_error", false}}}},
				{{"content", "short"}, {"tokens", 1}, {"kind", ordered{{"type", "UserMessage"}}}},
			}}}),
		}}}}, {"at", 5}})
	payload := frame(rec)[8:]
	var whole, skel runRecord
	if v, err := decodeFrame(payload, &whole); v != frameOK {
		t.Fatal(v, err)
	}
	var buf bytes.Buffer
	if err := skeleton(bytes.NewReader(payload), int64(len(payload)), 1000, &buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 4000 {
		t.Errorf("the skeleton is %d bytes", buf.Len())
	}
	if v, err := decodeFrame(buf.Bytes(), &skel); v != frameOK {
		t.Fatal(v, err)
	}
	we, se := whole.Progress.Delta.Regions[0].Append.Entries, skel.Progress.Delta.Regions[0].Append.Entries
	for i := range we {
		if entryFP(&we[i]) != entryFP(&se[i]) || firstLineOf(we[i].Content) != firstLineOf(se[i].Content) {
			t.Errorf("entry %d: the skeleton reads it otherwise", i)
		}
	}
	if !se[0].Content.cut || se[1].Content.cut || se[1].Content.whole() != "short" {
		t.Errorf("cut: %v %v", se[0].Content.cut, se[1].Content.cut)
	}
	if h, whole := se[0].Content.head(500); whole || !strings.HasPrefix(long, h) || len(h) == 0 {
		t.Errorf("head %q whole %v", h, whole)
	}
	var sk runRecord
	decodeFrame(buf.Bytes(), &sk)
	var rs runState
	rs.setMeta(&ledger{}, &sk.Progress.Meta, 5)
	if task := rs.jmeta.Task; !strings.HasPrefix(long, strings.TrimSuffix(task, "…")) || !strings.HasSuffix(task, "…") {
		t.Errorf("a long task reads %q…", task[:min(len(task), 40)])
	}
	// A raw line break inside a long string: not JSON, either way.
	bad := bytes.Replace(payload, []byte(`\n`), []byte("\n"), 1)
	if err := skeleton(bytes.NewReader(bad), int64(len(bad)), 1000, &buf); err != nil {
		t.Fatal(err)
	}
	if v, _ := decodeFrame(buf.Bytes(), &skel); v != frameInvalid {
		t.Errorf("a damaged long frame reads as %v", v)
	}
}

// A run whose tool result is 2 MB (its frame read through the skeleton):
// its rows are the same as any run's, and its detail shows the result's
// first store.MaxDetailBytes, marked cut.
func TestLongFrameRun(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	m := baseMeta("long-1785427200-0123456789ab", "long", "A run with a long result", t0)
	g := newGenRun(t, runs, m, true, stdRegions(m.task)...)
	result := "first line of a long result\n" + strings.Repeat("x\"\\y\n", 400<<10)
	g.progress(t0+1, g.appendD("conversation", turnE("reading", genCall{"c1", "bash", args("command", "cat")}), resultE("c1", "bash", result, false)))
	g.progress(t0+2, g.appendD("conversation", turnE("done")))
	s, err := Open(runs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	steps, err := s.Steps(bg, m.runID)
	if err != nil {
		t.Fatal(err)
	}
	var res *store.Step
	for i := range steps {
		if steps[i].ResultHead != "" {
			res = &steps[i]
		}
	}
	if len(steps) != 4 || res == nil || res.ResultHead != "first line of a long result" {
		t.Fatalf("steps %+v", steps)
	}
	d, err := s.StepDetail(bg, m.runID, res.RowID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(result, strings.TrimSuffix(d.Result, "…")) || len(d.Result) > store.MaxDetailBytes || len(d.Result) < store.MaxDetailBytes/2 ||
		!slices.Contains(d.Truncated, "result") {
		t.Errorf("detail: %d bytes, truncated %v", len(d.Result), d.Truncated)
	}
}

func TestPlainRun(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{{"", 0}, {"abcdefghijklmnop", 16}, {"abcdefgh\"", 8}, {"abc\\", 3}, {"abcdefghijk\nl", 11}, {"é日本語 ✓ abcdefgh\x1f", 24}, {"\x7f\xff\x80abcdefgh", 11}} {
		if got := plainRun([]byte(c.s)); got != c.want {
			t.Errorf("plainRun(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}
