package harness

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-run/vigil/internal/testkit"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
)

// The bytes serde_json 1.0.151 writes for a Value parsed from the left
// side (src/de.rs and src/ser.rs, zmij 1.0.23's format_finite for floats),
// worked out from that source. Each line is one point where Go's
// encoding/json, or a correctly rounded float parse, writes otherwise.
var serdeVectors = []struct{ in, out string }{
	{`12345678901234567890`, `12345678901234567890`}, // a u64: exact (Go's float64 path: 12345678901234567000)
	{`18446744073709551615`, `18446744073709551615`},
	{`18446744073709551616`, `1.8446744073709552e+19`}, // past u64: an f64
	{`-9223372036854775808`, `-9223372036854775808`},   // an i64
	{`-9223372036854775809`, `-9.223372036854776e+18`},
	{`9007199254740993`, `9007199254740993`},
	{`1.0`, `1.0`},   // Go: 1
	{`-0.0`, `-0.0`}, // Go: -0
	{`-0`, `-0.0`},   // parse_number: a negative zero integer is the float -0.0
	{`0`, `0`},
	{`1e21`, `1e+21`}, // zmij writes the exponent's sign
	{`1E+2`, `100.0`},
	{`1e15`, `1000000000000000.0`}, // plain up to a decimal exponent of 15
	{`1e16`, `1e+16`},
	{`0.00001`, `0.00001`}, // plain down to -5
	{`0.000001`, `1e-6`},
	{`1.5e-7`, `1.5e-7`},
	{`0.1`, `0.1`},
	{`123.456`, `123.456`},
	{`2683e26`, `2.6830000000000003e+29`}, // f64_from_parts rounds twice; a correct parse gives 2.683e+29
	{`123456789012345678901234567890`, `1.2345678901234568e+29`},
	{`1e-400`, `0.0`},
	{`"a&b<c>"`, `"a&b<c>"`},                 // no HTML escaping (Go: \u0026 \u003c \u003e)
	{"\"\u2028\u2029\"", "\"\u2028\u2029\""}, // written as they are (Go escapes both)
	{`"\u2028"`, "\"\u2028\""},
	{`"\u0001\u001f\u007f"`, "\"\\u0001\\u001f\u007f\""}, // control characters in lower-case hex; DEL as it is
	{`"\b\f\n\r\t\"\\\/"`, `"\b\f\n\r\t\"\\/"`},
	{`"\ud83d\ude00"`, `"😀"`},
	{`{"b":1,"a":2,"b":3}`, `{"a":2,"b":3}`}, // a BTreeMap: keys in byte order, the last repeat wins
	{`{"é":1,"z":2,"Z":3}`, `{"Z":3,"z":2,"é":1}`},
	{` [ true , false , null , [ ] , { } ] `, `[true,false,null,[],{}]`},
}

func TestSerdeValueVectors(t *testing.T) {
	for _, v := range serdeVectors {
		got, err := serdeValue([]byte(v.in))
		if err != nil {
			t.Errorf("%s: %v", v.in, err)
			continue
		}
		if string(got) != v.out {
			t.Errorf("%s: wrote %s, serde_json writes %s", v.in, got, v.out)
		}
	}
}

// What serde_json refuses to parse, vigil's writer refuses to store: a
// run's turn that io-harness could not have parsed is not written.
func TestSerdeValueRefuses(t *testing.T) {
	deep := strings.Repeat("[", 129) + strings.Repeat("]", 129)
	for _, in := range []string{`01`, `1.`, `1e`, `-`, `"\ud800"`, `"\udc00"`, "\"\x01\"", `{"a":1,}`, `[1,]`, `1e400`, `"\x"`, deep, "\"\xff\"", `{a:1}`, `nul`} {
		if got, err := serdeValue([]byte(in)); err == nil {
			t.Errorf("%q: accepted as %s", in, got)
		}
	}
	if _, err := serdeValue([]byte(strings.Repeat("[", 128) + strings.Repeat("]", 128))); err != nil {
		t.Errorf("128 deep: %v", err)
	}
}

// Every JSON value the writer stores, read back by a foreign reader
// (Python's sqlite3 and json) and checked against what serde_json would
// write, worked out again independently in Python from the inputs:
// step_turns.calls (write_step_turn), pending_questions.choices
// (put_question), plans.steps (put_plan); and mcp_events.millis NULL where
// record_mcp binds None.
func TestWriterValuesAreSerdes(t *testing.T) {
	py := testkit.Tool(t, "python3", "the foreign writer (Python's sqlite3) writes this test's store")
	path := filepath.Join(t.TempDir(), "runs.sqlite3")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	run := must[string](t)(w.StartRun(ctx, "serde", "/w"))
	var ins []string
	for _, v := range serdeVectors {
		ins = append(ins, `{"v":`+v.in+`}`)
	}
	var calls []ToolCall
	for i, in := range ins {
		calls = append(calls, ToolCall{Name: "tool&<" + string(rune('a'+i%26)), Arguments: json.RawMessage(in)})
	}
	calls = append(calls, ToolCall{Name: "no_args"})
	if err := w.CheckpointStep(ctx, run, StepRecord{Step: 1, Decision: "d", Result: "r", Turn: &Turn{Text: ptr("t"), Calls: calls}}); err != nil {
		t.Fatal(err)
	}
	choices := []string{"a & b", "<script>", "line\u2028sep", "tab\there", "nul\x00", "é😀"}
	qid := must[string](t)(w.PutQuestion(ctx, run, 1, "which?", "", choices))
	plan := []store.PlanStep{{Intent: "tag & push"}, {Intent: "<notes>", Agent: "writer\u2029"}}
	pid := must[string](t)(w.PutPlan(ctx, run, 1, plan))
	if err := w.RecordEvent(ctx, Event{RunID: run, Step: 0, Source: "mcp", Kind: "discovered", Server: "fs", Tool: "ls"}); err != nil {
		t.Fatal(err)
	}
	called := 3 * time.Millisecond
	if err := w.RecordEvent(ctx, Event{RunID: run, Step: 1, Source: "mcp", Kind: "called", Server: "fs", Tool: "ls", OK: ptr(true), Millis: &called}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	inputs, _ := json.Marshal(map[string]any{"args": ins, "names": namesOf(calls), "choices": choices, "plan": plan})
	cmd := exec.Command(py, "-c", serdeCheckPy, path, run, qid, pid)
	cmd.Stdin = strings.NewReader(string(inputs))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}

	// And vigil reads back what it wrote.
	r, err := ioharness.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := must[store.Request](t)(r.Request(ctx, store.RequestKey{Kind: store.Question, ID: qid}))
	if strings.Join(q.Choices, "|") != strings.Join(choices, "|") {
		t.Errorf("choices read back %q", q.Choices)
	}
	p := must[store.Request](t)(r.Request(ctx, store.RequestKey{Kind: store.Plan, ID: pid}))
	if len(p.PlanSteps) != 2 || p.PlanSteps[0] != plan[0] || p.PlanSteps[1] != plan[1] {
		t.Errorf("plan read back %+v", p.PlanSteps)
	}
	evs := must[[]Event](t)(r.Events(ctx, run))
	var mcp []Event
	for _, e := range evs {
		if e.Source == "mcp" {
			mcp = append(mcp, e)
		}
	}
	if len(mcp) != 2 || mcp[0].Millis != nil || mcp[1].Millis == nil || *mcp[1].Millis != called {
		t.Errorf("mcp millis read back: %+v", evs)
	}
}

func namesOf(calls []ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

// serdeCheckPy re-derives serde_json's bytes in Python: numbers as
// serde_json's default parser builds them (u64, i64, else the significand
// that fits a u64 times a power of ten, in f64 arithmetic), floats laid out
// as zmij does from the shortest repr, objects sorted, strings escaped as
// serde_json's ESCAPE table says.
const serdeCheckPy = `
import json, math, sqlite3, sys
from decimal import Decimal
path, run, qid, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
inp = json.load(sys.stdin)
U64, I64 = 2**64 - 1, 2**63
P = [float("1e%d" % i) for i in range(309)]

def from_parts(sig, exp, neg):
    f = float(sig)
    while True:
        if abs(exp) < 309:
            f = f * P[exp] if exp >= 0 else f / P[-exp]
            break
        if f == 0: break
        f /= 1e308; exp += 308
    return -f if neg else f

def number(s):
    neg = s.startswith("-")
    t = s[1:] if neg else s
    mant, _, e = t.replace("E", "e").partition("e")
    ip, _, fp = mant.partition(".")
    sig, exp, over = 0, 0, False
    for d in ip:
        if not over and sig * 10 + int(d) <= U64: sig = sig * 10 + int(d)
        else: over = True; exp += 1
    for d in fp:
        if over: continue
        if sig * 10 + int(d) <= U64: sig = sig * 10 + int(d); exp -= 1
        else: over = True
    if e: exp += int(e)
    if not fp and not e and not over:
        if not neg: return sig
        if sig == 0: return -0.0
        if sig <= I64: return -sig
        return -float(sig)
    return from_parts(sig, exp, neg)

def zmij(f):
    neg = math.copysign(1.0, f) < 0
    if f == 0: return "-0.0" if neg else "0.0"
    t = Decimal(repr(abs(f))).as_tuple()   # repr: the shortest digits that read back
    raw = "".join(map(str, t.digits))
    digits = raw.rstrip("0")
    exp = len(digits) - 1 + t.exponent + (len(raw) - len(digits))  # f = d.ddd x 10^exp
    if -5 <= exp <= 15 and len(digits) - 1 <= exp: out = digits + "0" * (exp + 1 - len(digits)) + ".0"
    elif 0 <= exp <= 15: out = digits[:exp + 1] + "." + digits[exp + 1:]
    elif -5 <= exp < 0: out = "0." + "0" * (-exp - 1) + digits
    else: out = digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + ("e+%d" % exp if exp >= 0 else "e-%d" % -exp)
    return ("-" if neg else "") + out

ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
def string(s):
    return '"' + "".join(ESC.get(c) or ("\\u%04x" % ord(c) if ord(c) < 0x20 else c) for c in s) + '"'

def write(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, int): return str(v)
    if isinstance(v, float): return zmij(v)
    if isinstance(v, str): return string(v)
    if isinstance(v, list): return "[" + ",".join(write(x) for x in v) + "]"
    return "{" + ",".join(string(k) + ":" + write(v[k]) for k in sorted(v, key=lambda k: k.encode())) + "}"

def parse(s):
    return json.loads(s, parse_int=number, parse_float=number, parse_constant=None,
                      object_pairs_hook=lambda kv: dict(kv))

db = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
(calls,) = db.execute("SELECT calls FROM step_turns WHERE run_id = ? AND step = 1", (run,)).fetchone()
want = "[" + ",".join('{"name":%s,"arguments":%s}' % (string(n), write(parse(a))) for n, a in zip(inp["names"], inp["args"]))
want += (',' if inp["args"] else '') + '{"name":%s,"arguments":{}}' % string(inp["names"][-1]) + "]"
assert calls == want, "step_turns.calls:\n got  %r\n want %r" % (calls, want)
(choices,) = db.execute("SELECT choices FROM pending_questions WHERE id = ?", (qid,)).fetchone()
assert choices == write(inp["choices"]), "choices %r" % choices
assert json.loads(choices) == inp["choices"]
(steps,) = db.execute("SELECT steps FROM plans WHERE id = ?", (pid,)).fetchone()
want = "[" + ",".join("{" + '"intent":' + string(p["Intent"]) + (',"agent":' + string(p["Agent"]) if p["Agent"] else "") + "}" for p in inp["plan"]) + "]"
assert steps == want, "plans.steps %r, want %r" % (steps, want)
rows = db.execute("SELECT kind, millis FROM mcp_events WHERE run_id = ? ORDER BY id", (run,)).fetchall()
assert rows == [("discovered", None), ("called", 3)], rows
`
