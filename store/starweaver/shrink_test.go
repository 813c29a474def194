package starweaver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// shrinkJSON is the record's JSON with long strings, escapes and
// multi-byte characters where a cut could fall badly.
const shrinkJSON = `{"schema":"s","payload":{"event":{"kind":"tool_return","tool_return":{"content":"ab\"c\\d\u00e9\n日本語 🇫🇷 \u001b[2J and more text past the cut","name":"read_file","is_error":false,"list":["short","a string that is long enough to be cut \"quoted\"",{"k":"\ud83d\ude00 emoji escape then more"}]}}}}`

// The shrinker's output, however its input is cut into writes, is valid
// JSON of the same shape whose strings are the originals, or their
// beginnings when longer than the limit.
func TestShrinkerKeepsTheShape(t *testing.T) {
	var orig any
	if err := json.Unmarshal([]byte(shrinkJSON), &orig); err != nil {
		t.Fatal(err)
	}
	for limit := 1; limit < 40; limit++ {
		var want []byte
		for cut := 0; cut <= len(shrinkJSON); cut++ {
			s := &shrinker{limit: limit}
			s.Write([]byte(shrinkJSON[:cut]))
			s.Write([]byte(shrinkJSON[cut:]))
			if want == nil {
				want = s.b
			} else if !bytes.Equal(s.b, want) {
				t.Fatalf("limit %d: cut at %d gives %s, whole gives %s", limit, cut, s.b, want)
			}
		}
		var got any
		if err := json.Unmarshal(want, &got); err != nil {
			t.Fatalf("limit %d: not JSON: %v\n%s", limit, err, want)
		}
		if !prefixes(got, orig) {
			t.Fatalf("limit %d: %s is not the record cut", limit, want)
		}
	}
	s := &shrinker{}
	s.Write([]byte(shrinkJSON))
	if string(s.b) != shrinkJSON || s.cut {
		t.Errorf("a record with no long string was changed: %s", s.b)
	}
}

// prefixes: a is b with each string a beginning of b's.
func prefixes(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && strings.HasPrefix(y, strings.TrimSuffix(x, "\uFFFD"))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !prefixes(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !prefixes(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// BenchmarkShrinkerBigString: the shrinker's pass over one 64 MiB string
// value (a tool's output, a newline every KiB) in 1 MiB writes.
func BenchmarkShrinkerBigString(b *testing.B) {
	line := strings.Repeat("0123456789abcdef", 64) + `\n`
	rec := []byte(`{"event":{"kind":"tool_return","content":"` + strings.Repeat(line, 64<<20/len(line)) + `"}}`)
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		sh := &shrinker{}
		for at := 0; at < len(rec); at += 1 << 20 {
			sh.Write(rec[at:min(at+1<<20, len(rec))])
		}
	}
}

// The skipper finds what bytes.IndexAny(p, `"\`) finds, from every start,
// as the shrinker walks a write.
func TestSkipperIsIndexAny(t *testing.T) {
	for _, in := range []string{``, `abc`, `"`, `\`, `a"b\c"d`, `\\\"""\`, `long text without stops`, `x\ny"z\"w"` + strings.Repeat(`q"`, 5)} {
		p := []byte(in)
		k := skipper{end: len(p), bs: -2}
		for at := 0; at <= len(p); at++ {
			if got, want := k.next(p[at:]), bytes.IndexAny(p[at:], `"\`); got != want {
				t.Fatalf("%q from %d: %d, want %d", in, at, got, want)
			}
		}
	}
}
