package leviath

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameAsJSON fails t unless decodeFrame (decodeFast, falling back to
// encoding/json) and encoding/json alone give in the same verdict, the
// same error text and decodeWhy, and the same record. It says whether the
// fast path took the frame.
func sameAsJSON(t testing.TB, name string, in []byte) (fast bool) {
	return sameAsJSONf(t, func() string { return name }, in)
}

func sameAsJSONf(t testing.TB, nameOf func() string, in []byte) (fast bool) {
	t.Helper()
	var got, want runRecord
	gv, gerr := decodeFrame(in, &got)
	wv, werr := decodeFrameJSON(in, &want)
	if gv != wv || errText(gerr) != errText(werr) {
		name := nameOf()
		t.Fatalf("%s: decodeFrame gives %v %q, encoding/json %v %q\ninput %q", name, gv, errText(gerr), wv, errText(werr), clip(in))
	}
	if werr != nil && decodeWhy(gerr) != decodeWhy(werr) {
		name := nameOf()
		t.Fatalf("%s: decodeWhy %q against %q", name, decodeWhy(gerr), decodeWhy(werr))
	}
	if !reflect.DeepEqual(got, want) {
		name := nameOf()
		t.Fatalf("%s: records differ\ndecodeFrame   %#v\nencoding/json %#v\ninput %q", name, got, want, clip(in))
	}
	var r runRecord
	fast = decodeFast(in, &r)
	if fast && werr != nil {
		name := nameOf()
		t.Fatalf("%s: decodeFast took a frame encoding/json refuses (%v)", name, werr)
	}
	return fast
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func clip(b []byte) []byte {
	if len(b) > 600 {
		return append(append(b[:300:300], "…"...), b[len(b)-300:]...)
	}
	return b
}

// journalFrames is every whole frame of every run.lvr under root.
func journalFrames(t testing.TB, root string) [][]byte {
	t.Helper()
	var out [][]byte
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Name() != "run.lvr" || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < preambleLen {
			return nil
		}
		for b = b[preambleLen:]; len(b) >= 8; {
			n := binary.BigEndian.Uint64(b)
			if n > uint64(len(b)-8) {
				break
			}
			out = append(out, b[8:8+n])
			b = b[8+n:]
		}
		return nil
	})
	return out
}

// skeletonOf is the frame cut as a long frame is (strings over limit
// bytes replaced by their heads and a marker).
func skeletonOf(t testing.TB, frame []byte, limit int) []byte {
	var dst bytes.Buffer
	if err := skeleton(bytes.NewReader(frame), int64(len(frame)), limit, &dst); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), dst.Bytes()...)
}

// naughty are strings the generator writes into every text of a run
// (internal/testkit/hostile's corpus imports this package).
var naughty = []string{"", "\x1b]0;PWNED\x07", "\x1b_APC\x1b\\", "\u202eevil", "a\u200db", "\x00nul", "\"quoted\" \\ back",
	"\U0001F600 emoji \xed\xa0\x80 half", "\ufffd", "line\nbreak\r\n", "\t tab", "</script>", "{\"json\":true}", "\u2028\u2029",
	"\x7f del", "\u0085 nel", "ÿ", strings.Repeat("long ", 100), "\\u0000vigil-cut:00:1:2"}

// frameCorpus is the frames the generator writes (the fixture's journals,
// the hostile strings' runs), each whole and as a skeleton cut at 64
// bytes (common), and cut at 16, which cuts keys too (cut: a key with an
// escape is left to encoding/json).
func frameCorpus(t testing.TB) (common, cut [][]byte) {
	t.Helper()
	dir := t.TempDir()
	fx := buildFixture(t, filepath.Join(dir, "fx"))
	frames := journalFrames(t, fx.runs)
	frames = append(frames, journalFrames(t, BuildHostile(t, filepath.Join(dir, "hostile"), naughty))...)
	for _, f := range frames {
		common = append(common, f, skeletonOf(t, f, 64))
		cut = append(cut, skeletonOf(t, f, 16))
	}
	return common, cut
}

// hostileFrames are frames written to trip a decoder: each is compared
// with encoding/json, whatever it gives.
func hostileFrames() []string {
	meta := `{"task":"t","model":"m","pid":1,"status":"running","current_stage":"s","iteration":2,"prompt_tokens":3,` +
		`"completion_tokens":4,"workdir":"/w","started_at":5,"updated_at":6,"last_progress_at":7,"error":null,` +
		`"parent_run_id":null,"children":["a","b"],"depth":1,"waiting_on":{"reason":"children","outstanding":2}}`
	entry := `{"content":"hello","kind":{"type":"AssistantTurn","tool_calls":[{"id":"c1","name":"bash","arguments":{"command":"ls"}}]},"key":"k"}`
	prog := func(meta, entry string) string {
		return `{"Progress":{"meta":` + meta + `,"delta":{"stage_name":"s","total_tokens":1,"max_tokens":2,"regions":[{"Append":{"name":"conversation","entries":[` +
			entry + `],"current_tokens":3}},{"Clear":{"name":"x"}},{"Remove":{"name":"y"}},{"Set":{"name":"z","kind":"pinned","entries":[]}}]},"at":9}}`
	}
	base := prog(meta, entry)
	m := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	deep := func(n int) string {
		return `{"Unknown":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	return []string{
		base,
		"", " ", "null", " null ", "[]", `"Progress"`, "1", "{}", `{"x":1}`, "\ufeff" + base,
		base + " ", base + "\n\t\r ", base + "x", base + "}", base + base, base + "\x00", "\f" + base, base + "\v",
		// escapes and strings
		m(`"t"`, `"\x"`), m(`"t"`, `"\u12"`), m(`"t"`, `"\uZZZZ"`), m(`"t"`, `"\ud800"`), m(`"t"`, `"\udc00\ud800"`),
		m(`"t"`, `"\ud83d\ude00"`), m(`"t"`, `"\u00e9\n\t\"\\\/\b\f\r"`), m(`"t"`, "\"a\x01b\""), m(`"t"`, "\"\xff\xfe\""),
		m(`"t"`, "\"\xe2\x82\""), m(`"t"`, `"\`), m(`"hello"`, `"he\u0000llo"`), m(`"hello"`, "\"he\x1fllo\""),
		m(`"hello"`, `"\ud800"`), m(`"hello"`, "\"\xc3\""), m(`"hello"`, `null`), m(`"hello"`, `1`), m(`"hello"`, `{"a":1}`),
		m(`"hello"`, `["a"]`), m(`"hello"`, `"`+strings.Repeat(`\\`, 300)+`"`),
		// keys: escapes, case, non-ASCII, duplicates
		m(`"Progress"`, `"Pro\u0067ress"`), m(`"Progress"`, `"progress"`), m(`"task"`, `"TASK"`), m(`"task"`, `"Task"`),
		m(`"task"`, "\"tas\u212a\""), m(`"stage_name"`, "\"\u017ftage_name\""), m(`"task"`, `"task":"u","task"`),
		m(`"Progress"`, `"Header":{},"Progress"`), m(`"at":9`, `"at":9,"at":10`), m(`"pid":1`, `"pid":1,"PID":2`),
		m(`"task"`, `"tásk"`), m(`"task"`, `"callback_secret":"s","task"`), m(`"task"`, `"":1,"task"`),
		m(`"Append"`, `"Append":null,"Append"`), m(`{"Clear"`, `{"Clear":{"name":"q"},"Clear"`),
		// numbers
		m(`"pid":1`, `"pid":1.0`), m(`"pid":1`, `"pid":1e3`), m(`"pid":1`, `"pid":-0`), m(`"pid":1`, `"pid":01`),
		m(`"pid":1`, `"pid":-`), m(`"pid":1`, `"pid":9223372036854775807`), m(`"pid":1`, `"pid":9223372036854775808`),
		m(`"pid":1`, `"pid":-9223372036854775809`), m(`"pid":1`, `"pid":1E+2`), m(`"pid":1`, `"pid":"1"`),
		m(`"pid":1`, `"pid":.5`), m(`"pid":1`, `"pid":1.`), m(`"pid":1`, `"pid":+1`), m(`"pid":1`, `"pid":0x10`),
		m(`"depth":1`, `"depth":99999999999999999999`), m(`"at":9`, `"at":true`), m(`"last_progress_at":7`, `"last_progress_at":null`),
		m(`"last_progress_at":7`, `"last_progress_at":7.5`), m(`"outstanding":2`, `"outstanding":2e400`),
		// literals, nulls and types
		m(`"error":null`, `"error":nul`), m(`"error":null`, `"error":nullx`), m(`"error":null`, `"error":"boom"`),
		m(`"children":["a","b"]`, `"children":null`), m(`"children":["a","b"]`, `"children":[]`),
		m(`"children":["a","b"]`, `"children":[null,"b"]`), m(`"children":["a","b"]`, `"children":"a"`),
		m(`"children":["a","b"]`, `"children":[1]`), m(`"waiting_on":{"reason":"children","outstanding":2}`, `"waiting_on":null`),
		m(`"waiting_on":{"reason":"children","outstanding":2}`, `"waiting_on": [ 1 , {} ] `),
		m(`"is_error"`, `"x"`), m(`"arguments":{"command":"ls"}`, `"arguments":null`), m(`"arguments":{"command":"ls"}`, `"arguments":"s"`),
		m(`"key":"k"`, `"key":null`), m(`"key":"k"`, `"key":7`), m(`"kind":{"type"`, `"kind":null,"x":{"type"`),
		m(`"Progress":{`, `"Progress":null,"x":{`), m(`"Progress":{`, `"Progress":[],"x":{`), m(`"Progress":{`, `"Progress":"s","x":{`),
		m(`"meta":`+meta, `"meta":null`), m(`"meta":`+meta, `"meta":[]`), m(`"entries":[]`, `"entries":null`),
		m(`"entries":[]`, `"entries":[null]`), m(`"entries":[]`, `"entries":{}`), m(`{"Clear":{"name":"x"}}`, `null`),
		m(`{"Clear":{"name":"x"}}`, `{"Clear":null}`), m(`{"Clear":{"name":"x"}}`, `{"Bogus":{"name":"x"}}`),
		m(`"regions":[`, `"regions":[null,`), m(`"at":9`, `"at":null`),
		// whitespace and structure
		strings.NewReplacer(`,`, " ,\n ", `:`, "\t:\r", `{`, "{ ", `}`, " }", `[`, "[\n", `]`, "\n]").Replace(base),
		m(`,"delta"`, `,,"delta"`), m(`,"delta"`, `"delta"`), m(`"at":9}`, `"at":9,}`), m(`"a","b"`, `"a",]`),
		m(`"a","b"`, `"a" "b"`), m(`"task":`, `"task"`), m(`"task":`, `"task"::`), m(`{"task"`, `{task`),
		m(`"task":"t"`, `'task':'t'`), strings.TrimSuffix(base, "}"), base[:len(base)/2],
		// nesting
		deep(10), deep(199), deep(250), deep(10001), `{"Unknown":` + strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300) + "}",
		m(`"waiting_on":{"reason":"children","outstanding":2}`, `"waiting_on":`+strings.Repeat("[", 400)+strings.Repeat("]", 400)),
		// the other variants
		`{"Header":{"identity":{"run_id":"r","machine_id":"m","world_id":"w","created_at":1},"meta":` + meta + `}}`,
		`{"OwnershipChanged":{"machine_id":"m","world_id":"w","at":3}}`, `{"OwnershipChanged":{"machine_id":1}}`,
		`{"StatusChanged":{"status":"error","at":3}}`, `{"ToolCallDone":{"call_id":"c","at":3}}`,
		`{"ToolBatch":{"calls":[{"id":"a","name":"b","result":null},{"id":"c","result":{"ok":true}}],"at":4}}`,
		`{"Message":{"message":{"role":"user","content":"hi\nthere"},"at":5}}`, `{"Message":{"message":{"role":"user","content":{}},"at":5}}`,
		`{"InferenceUsage":{"kind":"stage","stage":"s","iteration":1,"provider":"p","model":"m","prompt_tokens":1,"completion_tokens":2,"cached_tokens":3,"cache_write_tokens":4,"at":5}}`,
		`{"InferenceUsage":null}`, `{"InferenceUsage":{"prompt_tokens":-1.5}}`,
		`{"Inference":{"stage":"s","request":{"model":"m"},"response":{"prompt_tokens":1},"at":2}}`,
		`{"ContextCheckpoint":{"snapshot":{"stage_name":"s","regions":[{"name":"conversation","kind":"history","entries":[` + entry + `]}]},"at":1}}`,
		`{"ContextDiff":{"delta":{"regions":[{"Set":{"name":"a","entries":[` + entry + `]}}]},"at":1}}`,
		`{"Checkpoint":{"meta":` + meta + `,"context":{"regions":[]},"at":1}}`, `{"Checkpoint":{"meta":{"task":5}}}`,
		`{"Foo":{}}`, `{"Foo":[1,2,{"a":null}]}`, `"Foo"`,
	}
}

// TestDecodeFastIsEncodingJSON: the one-pass decoder gives what
// encoding/json gives — verdict, error text, decodeWhy, record — over the
// generator's frames and their skeletons, every prefix and one-byte change
// of some of them, and frames written to trip a decoder; and it does take
// the frames Leviath writes.
func TestDecodeFastIsEncodingJSON(t *testing.T) {
	corpus, cut := frameCorpus(t)
	if len(corpus) < 100 {
		t.Fatalf("only %d frames", len(corpus))
	}
	taken, wants := 0, 0
	for i, f := range corpus {
		if sameAsJSON(t, fmt.Sprintf("frame %d", i), f) {
			taken++
		}
		// All but the frames encoding/json refuses (a torn one, a unit
		// variant) and Inference, which no release writes.
		var r runRecord
		if json.Unmarshal(f, &r) == nil && r.Inference == nil {
			wants++
		}
	}
	if taken != wants || wants < len(corpus)*9/10 {
		t.Errorf("decodeFast took %d of the %d frames the generator writes that encoding/json reads (%d in all)", taken, wants, len(corpus))
	}
	for i, f := range cut {
		sameAsJSON(t, fmt.Sprintf("frame %d cut at 16", i), f)
	}
	hostileCases := hostileFrames()
	if len(hostileCases) < 30 {
		t.Fatalf("only %d hostile frames", len(hostileCases))
	}
	var took, refused int
	for i, f := range hostileCases {
		if sameAsJSON(t, fmt.Sprintf("hostile %d", i), []byte(f)) {
			took++
		} else {
			refused++
		}
	}
	t.Logf("%d generated frames, %d cut short; hostile: %d taken, %d left to encoding/json", len(corpus), len(cut), took, refused)
	if took < 10 || refused < 10 {
		t.Errorf("hostile frames: %d taken, %d refused: the cases do not exercise both paths", took, refused)
	}
	// Every prefix of a few frames (a frame cut at every byte), and every
	// byte of them changed to a byte that means something to JSON.
	var some [][]byte
	for _, f := range corpus {
		if len(f) < 1500 && (bytes.HasPrefix(f, []byte(`{"Progress"`)) || bytes.HasPrefix(f, []byte(`{"Header"`))) {
			some = append(some, f)
		}
		if len(some) == 3 {
			break
		}
	}
	some = append(some, []byte(hostileCases[0]))
	subst := []byte{'"', '\\', 0x01, '{', '}', '[', ']', ',', ':', ' ', '0', '-', '.', 'e', 'n', 'u', 0xff}
	for k, f := range some {
		for i := 0; i <= len(f); i++ {
			sameAsJSONf(t, func() string { return fmt.Sprintf("frame %d cut at %d", k, i) }, f[:i])
		}
		for i := range f {
			for _, c := range subst {
				g := append([]byte(nil), f...)
				g[i] = c
				sameAsJSONf(t, func() string { return fmt.Sprintf("frame %d byte %d=%q", k, i, c) }, g)
			}
		}
	}
}

// FuzzDecodeFast compares decodeFrame with encoding/json on any input.
func FuzzDecodeFast(f *testing.F) {
	for _, h := range hostileFrames() {
		f.Add([]byte(h))
	}
	f.Add([]byte(`{"Progress":{"meta":{"task":"t"},"delta":{"regions":[{"Append":{"name":"conversation","entries":[{"content":"x","kind":{"type":"UserMessage"}}]}}]},"at":1}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		sameAsJSON(t, "fuzz", in)
	})
}
