package leviath

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeFast decodes a frame's JSON into rec (zero on entry) in one pass,
// without reflection, for the shapes Leviath writes. It is an optimisation
// of json.Unmarshal, never a second reading of the format: it returns true
// only when encoding/json would give no error and the very same record,
// and gives up (false, rec half filled) at anything else — a syntax error,
// a type it does not expect, a key that differs from a field's name only in
// case or holds an escape or a non-ASCII byte, a key given twice, a number
// with a fraction or exponent or out of range, nesting past fastMaxDepth.
// decodeFrame then asks encoding/json, so every verdict, SyntaxError and
// decodeWhy text is encoding/json's (frame_decode_test.go runs both over a
// corpus, and FuzzDecodeFast compares them).
//
// The time it saves is encoding/json's two passes (checkValid, then the
// decode) byte by byte over each string: here a string is skipped with
// stop, one vector pass, so a skeleton's 4 KB heads and a whole
// 256 KB frame (a step's detail) cost little more than a read.
func decodeFast(payload []byte, rec *runRecord) bool {
	d := fdec{b: payload}
	d.ws()
	if !d.record(rec) {
		return false
	}
	d.ws()
	return d.i == len(d.b) // trailing bytes: encoding/json's SyntaxError
}

// fastMaxDepth bounds the nesting decodeFast follows (encoding/json's own
// limit, 10000, is a SyntaxError it gives).
const fastMaxDepth = 200

type fdec struct {
	b []byte
	i int
}

func (d *fdec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fdec) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// lit consumes the literal s (true, false, null) if it is next.
func (d *fdec) lit(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// str consumes a string token: its bytes, quotes included, and whether it
// holds an escape. Every escape is checked (\uXXXX: four hex digits) and a
// raw control character refused, as encoding/json's scanner does; the
// plain runs between are skipped by stop (one vector pass).
func (d *fdec) str() (raw []byte, esc, ok bool) {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return nil, false, false
	}
	start, j := d.i, d.i+1
	for {
		if j += stop(b[j:]); j == len(b) {
			return nil, false, false // cut short
		}
		if b[j] == '"' {
			d.i = j + 1
			return b[start:d.i], esc, true
		}
		if b[j] != '\\' || j+1 >= len(b) {
			return nil, false, false // a raw control character, or cut short
		}
		esc = true
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j += 2
		case 'u':
			if j+6 > len(b) || !isHex4(b[j+2:j+6]) {
				return nil, false, false
			}
			j += 6
		default:
			return nil, false, false
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// strVal consumes a string and decodes it: a plain valid UTF-8 one is its
// bytes; one with escapes or invalid UTF-8 (which encoding/json replaces
// by U+FFFD) is decoded by encoding/json itself.
func (d *fdec) strVal() (string, bool) {
	raw, esc, ok := d.str()
	if !ok {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !esc && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// num consumes a JSON number and says whether it is an integer literal
// (no fraction, no exponent).
func (d *fdec) num() (tok []byte, isInt, ok bool) {
	b, i := d.b, d.i
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		digits()
	default:
		return nil, false, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false, false
		}
		isInt = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false, false
		}
		isInt = false
	}
	tok, d.i = b[d.i:i], i
	return tok, isInt, true
}

// skip consumes any JSON value, checking it.
func (d *fdec) skip(depth int) bool {
	if depth > fastMaxDepth {
		return false
	}
	switch c := d.peek(); {
	case c == '"':
		_, _, ok := d.str()
		return ok
	case c == '{':
		d.i++
		d.ws()
		if d.peek() == '}' {
			d.i++
			return true
		}
		for {
			if _, _, ok := d.str(); !ok {
				return false
			}
			d.ws()
			if d.peek() != ':' {
				return false
			}
			d.i++
			d.ws()
			if !d.skip(depth + 1) {
				return false
			}
			if more, ok := d.next('}'); !ok || !more {
				return ok
			}
		}
	case c == '[':
		d.i++
		d.ws()
		if d.peek() == ']' {
			d.i++
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			if more, ok := d.next(']'); !ok || !more {
				return ok
			}
		}
	case c == 't':
		return d.lit("true")
	case c == 'f':
		return d.lit("false")
	case c == 'n':
		return d.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		_, _, ok := d.num()
		return ok
	}
	return false
}

// next consumes what follows a member or element: a comma (more) or the
// closing byte.
func (d *fdec) next(closing byte) (more, ok bool) {
	d.ws()
	switch d.peek() {
	case ',':
		d.i++
		d.ws()
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

// obj consumes an object whose members field decodes, one key at a time
// (the value is next; field consumes it). A key with an escape is left to
// encoding/json.
func (d *fdec) obj(depth int, field func(key string) bool) bool {
	if depth > fastMaxDepth || d.peek() != '{' {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		raw, esc, ok := d.str()
		if !ok || esc {
			return false
		}
		d.ws()
		if d.peek() != ':' {
			return false
		}
		d.i++
		d.ws()
		if !field(string(raw[1 : len(raw)-1])) {
			return false
		}
		if more, ok := d.next('}'); !ok || !more {
			return ok
		}
	}
}

// arr consumes an array, elem decoding each element. n is how many.
func (d *fdec) arr(depth int, elem func() bool) bool {
	if depth > fastMaxDepth || d.peek() != '[' {
		return false
	}
	d.i++
	d.ws()
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		if more, ok := d.next(']'); !ok || !more {
			return ok
		}
	}
}

// fields tracks the keys an object gave: a second one is left to
// encoding/json, and so is a key that is a field's name in another case
// (encoding/json matches names case-insensitively) or not ASCII. Any other
// key is skipped, as encoding/json skips a key no field has.
type fields struct {
	names []string
	seen  uint64
}

// take says whether key is names[i] seen for the first time.
func (f *fields) take(i int) bool {
	if f.seen&(1<<i) != 0 {
		return false
	}
	f.seen |= 1 << i
	return true
}

// other handles a key that is no field's exact name.
func (d *fdec) other(key string, names []string, depth int) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return false
		}
	}
	for _, n := range names {
		if len(n) == len(key) && asciiEqualFold(n, key) {
			return false
		}
	}
	return d.skip(depth)
}

func asciiEqualFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// The value decoders below each consume one value into p, treating null as
// encoding/json does: a pointer, slice or RawMessage is reset, a text is
// text{} (its UnmarshalJSON is given "null"), any other value is left as it
// is.

func (d *fdec) strInto(p *string) bool {
	if d.lit("null") {
		return true
	}
	s, ok := d.strVal()
	*p = s
	return ok
}

func (d *fdec) strPtr(p **string) bool {
	if d.lit("null") {
		*p = nil
		return true
	}
	s, ok := d.strVal()
	*p = &s
	return ok
}

func (d *fdec) int64Val() (int64, bool) {
	tok, isInt, ok := d.num()
	if !ok || !isInt {
		return 0, false
	}
	n, err := strconv.ParseInt(string(tok), 10, 64)
	return n, err == nil
}

func (d *fdec) int64Into(p *int64) bool {
	if d.lit("null") {
		return true
	}
	n, ok := d.int64Val()
	*p = n
	return ok
}

func (d *fdec) intInto(p *int) bool {
	if d.lit("null") {
		return true
	}
	n, ok := d.int64Val()
	*p = int(n)
	return ok && int64(int(n)) == n
}

func (d *fdec) int64Ptr(p **int64) bool {
	if d.lit("null") {
		*p = nil
		return true
	}
	n, ok := d.int64Val()
	*p = &n
	return ok
}

func (d *fdec) boolInto(p *bool) bool {
	switch {
	case d.lit("null"):
	case d.lit("true"):
		*p = true
	case d.lit("false"):
		*p = false
	default:
		return false
	}
	return true
}

// rawInto is json.RawMessage: a copy of the value's bytes ("null" too).
func (d *fdec) rawInto(p *json.RawMessage, depth int) bool {
	start := d.i
	if !d.skip(depth) {
		return false
	}
	*p = append((*p)[:0], d.b[start:d.i]...)
	return true
}

// textInto is text.UnmarshalJSON given the string's bytes, as
// encoding/json gives them; anything but a string or null is left to
// encoding/json (its type error).
func (d *fdec) textInto(p *text) bool {
	if d.lit("null") {
		return p.UnmarshalJSON([]byte("null")) == nil
	}
	raw, _, ok := d.str()
	return ok && p.UnmarshalJSON(raw) == nil
}

func (d *fdec) strs(p *[]string, depth int) bool {
	if d.lit("null") {
		*p = nil
		return true
	}
	s := []string{}
	ok := d.arr(depth, func() bool {
		s = append(s, "")
		return d.strInto(&s[len(s)-1])
	})
	*p = s
	return ok
}

// alloc sets *p to a new T (encoding/json's pointer to a struct given an
// object), or nil for null; ok is false when there is no value for it.
func alloc[T any](d *fdec, p **T) (*T, bool) {
	if d.lit("null") {
		*p = nil
		return nil, true
	}
	if d.peek() != '{' {
		return nil, false
	}
	*p = new(T)
	return *p, true
}

// slice decodes an array of T (elem fills one, zero on entry); null is nil
// and [] an empty slice, as encoding/json makes them.
func slice[T any](d *fdec, p *[]T, depth int, elem func(*T) bool) bool {
	if d.lit("null") {
		*p = nil
		return true
	}
	s := []T{}
	ok := d.arr(depth, func() bool {
		var zero T
		s = append(s, zero)
		return elem(&s[len(s)-1])
	})
	*p = s
	return ok
}

// structNull consumes null for a struct value (left as it is) and says
// whether it did.
func (d *fdec) structNull() bool { return d.lit("null") }

var recordNames = []string{"Header", "OwnershipChanged", "Inference", "ToolBatch", "ContextCheckpoint", "ContextDiff",
	"Message", "StatusChanged", "Checkpoint", "Progress", "InferenceUsage", "ToolCallDone"}

func (d *fdec) record(r *runRecord) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: recordNames}
	const dp = 1
	return d.obj(0, func(k string) bool {
		switch k {
		case "Header":
			if !f.take(0) {
				return false
			}
			h, ok := alloc(d, &r.Header)
			if h == nil {
				return ok
			}
			hf := fields{names: []string{"identity", "meta"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "identity":
					return hf.take(0) && d.identity(&h.Identity, dp+1)
				case "meta":
					return hf.take(1) && d.meta(&h.Meta, dp+1)
				}
				return d.other(k, hf.names, dp+1)
			})
		case "OwnershipChanged":
			if !f.take(1) {
				return false
			}
			o, ok := alloc(d, &r.OwnershipChanged)
			if o == nil {
				return ok
			}
			of := fields{names: []string{"machine_id", "world_id", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "machine_id":
					return of.take(0) && d.strInto(&o.MachineID)
				case "world_id":
					return of.take(1) && d.strInto(&o.WorldID)
				case "at":
					return of.take(2) && d.int64Into(&o.At)
				}
				return d.other(k, of.names, dp+1)
			})
		case "ToolBatch":
			if !f.take(3) {
				return false
			}
			b, ok := alloc(d, &r.ToolBatch)
			if b == nil {
				return ok
			}
			bf := fields{names: []string{"calls", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "calls":
					return bf.take(0) && slice(d, &b.Calls, dp+1, func(c *toolCallRecord) bool { return d.toolCall(c, dp+2) })
				case "at":
					return bf.take(1) && d.int64Into(&b.At)
				}
				return d.other(k, bf.names, dp+1)
			})
		case "ContextCheckpoint":
			if !f.take(4) {
				return false
			}
			c, ok := alloc(d, &r.ContextCheckpoint)
			if c == nil {
				return ok
			}
			cf := fields{names: []string{"snapshot", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "snapshot":
					return cf.take(0) && d.snapshot(&c.Snapshot, dp+1)
				case "at":
					return cf.take(1) && d.int64Into(&c.At)
				}
				return d.other(k, cf.names, dp+1)
			})
		case "ContextDiff":
			if !f.take(5) {
				return false
			}
			c, ok := alloc(d, &r.ContextDiff)
			if c == nil {
				return ok
			}
			cf := fields{names: []string{"delta", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "delta":
					return cf.take(0) && d.delta(&c.Delta, dp+1)
				case "at":
					return cf.take(1) && d.int64Into(&c.At)
				}
				return d.other(k, cf.names, dp+1)
			})
		case "Message":
			if !f.take(6) {
				return false
			}
			m, ok := alloc(d, &r.Message)
			if m == nil {
				return ok
			}
			mf := fields{names: []string{"message", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "message":
					return mf.take(0) && d.message(&m.Message, dp+1)
				case "at":
					return mf.take(1) && d.int64Into(&m.At)
				}
				return d.other(k, mf.names, dp+1)
			})
		case "StatusChanged":
			if !f.take(7) {
				return false
			}
			s, ok := alloc(d, &r.StatusChanged)
			if s == nil {
				return ok
			}
			sf := fields{names: []string{"status", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "status":
					return sf.take(0) && d.strInto(&s.Status)
				case "at":
					return sf.take(1) && d.int64Into(&s.At)
				}
				return d.other(k, sf.names, dp+1)
			})
		case "Checkpoint":
			if !f.take(8) {
				return false
			}
			c, ok := alloc(d, &r.Checkpoint)
			if c == nil {
				return ok
			}
			cf := fields{names: []string{"meta", "context", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "meta":
					return cf.take(0) && d.meta(&c.Meta, dp+1)
				case "context":
					return cf.take(1) && d.snapshot(&c.Context, dp+1)
				case "at":
					return cf.take(2) && d.int64Into(&c.At)
				}
				return d.other(k, cf.names, dp+1)
			})
		case "Progress":
			if !f.take(9) {
				return false
			}
			p, ok := alloc(d, &r.Progress)
			if p == nil {
				return ok
			}
			pf := fields{names: []string{"meta", "delta", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "meta":
					return pf.take(0) && d.meta(&p.Meta, dp+1)
				case "delta":
					return pf.take(1) && d.delta(&p.Delta, dp+1)
				case "at":
					return pf.take(2) && d.int64Into(&p.At)
				}
				return d.other(k, pf.names, dp+1)
			})
		case "InferenceUsage":
			if !f.take(10) {
				return false
			}
			u, ok := alloc(d, &r.InferenceUsage)
			if u == nil {
				return ok
			}
			return d.usage(u, dp)
		case "ToolCallDone":
			if !f.take(11) {
				return false
			}
			t, ok := alloc(d, &r.ToolCallDone)
			if t == nil {
				return ok
			}
			tf := fields{names: []string{"call_id", "at"}}
			return d.obj(dp, func(k string) bool {
				switch k {
				case "call_id":
					return tf.take(0) && d.strInto(&t.CallID)
				case "at":
					return tf.take(1) && d.int64Into(&t.At)
				}
				return d.other(k, tf.names, dp+1)
			})
		case "Inference":
			return false // not written by any release: encoding/json reads it
		}
		return d.other(k, f.names, dp)
	})
}

var identityNames = []string{"run_id", "machine_id", "world_id", "created_at"}

func (d *fdec) identity(p *runIdentity, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: identityNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "run_id":
			return f.take(0) && d.strInto(&p.RunID)
		case "machine_id":
			return f.take(1) && d.strInto(&p.MachineID)
		case "world_id":
			return f.take(2) && d.strInto(&p.WorldID)
		case "created_at":
			return f.take(3) && d.int64Into(&p.CreatedAt)
		}
		return d.other(k, f.names, depth+1)
	})
}

var metaNames = []string{"task", "model", "pid", "status", "current_stage", "stage_index", "num_stages", "iteration",
	"prompt_tokens", "completion_tokens", "workdir", "started_at", "updated_at", "last_progress_at", "error",
	"parent_run_id", "children", "depth", "waiting_on"}

func (d *fdec) meta(p *runMeta, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: metaNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "task":
			return f.take(0) && d.strInto(&p.Task)
		case "model":
			return f.take(1) && d.strPtr(&p.Model)
		case "pid":
			return f.take(2) && d.int64Into(&p.PID)
		case "status":
			return f.take(3) && d.strInto(&p.Status)
		case "current_stage":
			return f.take(4) && d.strInto(&p.CurrentStage)
		case "stage_index":
			return f.take(5) && d.int64Into(&p.StageIndex)
		case "num_stages":
			return f.take(6) && d.int64Into(&p.NumStages)
		case "iteration":
			return f.take(7) && d.int64Into(&p.Iteration)
		case "prompt_tokens":
			return f.take(8) && d.int64Into(&p.PromptTokens)
		case "completion_tokens":
			return f.take(9) && d.int64Into(&p.CompletionTokens)
		case "workdir":
			return f.take(10) && d.strInto(&p.Workdir)
		case "started_at":
			return f.take(11) && d.int64Into(&p.StartedAt)
		case "updated_at":
			return f.take(12) && d.int64Into(&p.UpdatedAt)
		case "last_progress_at":
			return f.take(13) && d.int64Ptr(&p.LastProgressAt)
		case "error":
			return f.take(14) && d.strPtr(&p.Error)
		case "parent_run_id":
			return f.take(15) && d.strPtr(&p.ParentRunID)
		case "children":
			return f.take(16) && d.strs(&p.Children, depth+1)
		case "depth":
			return f.take(17) && d.intInto(&p.Depth)
		case "waiting_on":
			return f.take(18) && d.rawInto(&p.WaitingOn, depth+1)
		}
		return d.other(k, f.names, depth+1)
	})
}

var snapshotNames = []string{"stage_name", "total_tokens", "max_tokens", "regions"}

func (d *fdec) snapshot(p *contextSnapshot, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: snapshotNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "stage_name":
			return f.take(0) && d.strInto(&p.StageName)
		case "total_tokens":
			return f.take(1) && d.int64Into(&p.TotalTokens)
		case "max_tokens":
			return f.take(2) && d.int64Into(&p.MaxTokens)
		case "regions":
			return f.take(3) && slice(d, &p.Regions, depth+1, func(r *regionSnapshot) bool { return d.region(r, depth+2) })
		}
		return d.other(k, f.names, depth+1)
	})
}

var regionNames = []string{"name", "kind", "current_tokens", "max_tokens", "entries"}

func (d *fdec) region(p *regionSnapshot, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: regionNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "name":
			return f.take(0) && d.strInto(&p.Name)
		case "kind":
			return f.take(1) && d.strInto(&p.Kind)
		case "current_tokens":
			return f.take(2) && d.int64Into(&p.CurrentTokens)
		case "max_tokens":
			return f.take(3) && d.int64Into(&p.MaxTokens)
		case "entries":
			return f.take(4) && d.entries(&p.Entries, depth+1)
		}
		return d.other(k, f.names, depth+1)
	})
}

func (d *fdec) entries(p *[]entrySnapshot, depth int) bool {
	return slice(d, p, depth, func(e *entrySnapshot) bool { return d.entry(e, depth+1) })
}

var entryNames = []string{"content", "kind", "key"}

func (d *fdec) entry(p *entrySnapshot, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: entryNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "content":
			return f.take(0) && d.textInto(&p.Content)
		case "kind":
			return f.take(1) && d.entryKind(&p.Kind, depth+1)
		case "key":
			return f.take(2) && d.strPtr(&p.Key)
		}
		return d.other(k, f.names, depth+1)
	})
}

var entryKindNames = []string{"type", "tool_calls", "tool_call_id", "tool_name", "is_error"}

func (d *fdec) entryKind(p *entryKind, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: entryKindNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "type":
			return f.take(0) && d.strInto(&p.Type)
		case "tool_calls":
			return f.take(1) && slice(d, &p.ToolCalls, depth+1, func(c *entryToolCall) bool { return d.entryCall(c, depth+2) })
		case "tool_call_id":
			return f.take(2) && d.strInto(&p.ToolCallID)
		case "tool_name":
			return f.take(3) && d.strInto(&p.ToolName)
		case "is_error":
			return f.take(4) && d.boolInto(&p.IsError)
		}
		return d.other(k, f.names, depth+1)
	})
}

var callNames = []string{"id", "name", "arguments"}

func (d *fdec) entryCall(p *entryToolCall, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: callNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "id":
			return f.take(0) && d.strInto(&p.ID)
		case "name":
			return f.take(1) && d.strInto(&p.Name)
		case "arguments":
			return f.take(2) && d.rawInto(&p.Arguments, depth+1)
		}
		return d.other(k, f.names, depth+1)
	})
}

var toolCallNames = []string{"id", "name", "result"}

func (d *fdec) toolCall(p *toolCallRecord, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: toolCallNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "id":
			return f.take(0) && d.strInto(&p.ID)
		case "name":
			return f.take(1) && d.strInto(&p.Name)
		case "result":
			return f.take(2) && d.rawInto(&p.Result, depth+1)
		}
		return d.other(k, f.names, depth+1)
	})
}

var deltaNames = []string{"stage_name", "total_tokens", "max_tokens", "regions"}

func (d *fdec) delta(p *contextDelta, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: deltaNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "stage_name":
			return f.take(0) && d.strInto(&p.StageName)
		case "total_tokens":
			return f.take(1) && d.int64Into(&p.TotalTokens)
		case "max_tokens":
			return f.take(2) && d.int64Into(&p.MaxTokens)
		case "regions":
			return f.take(3) && slice(d, &p.Regions, depth+1, func(r *regionDelta) bool { return d.regionDelta(r, depth+2) })
		}
		return d.other(k, f.names, depth+1)
	})
}

var regionDeltaNames = []string{"Set", "Append", "Clear", "Remove"}

func (d *fdec) regionDelta(p *regionDelta, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: regionDeltaNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "Set":
			if !f.take(0) {
				return false
			}
			s, ok := alloc(d, &p.Set)
			return ok && (s == nil || d.region(s, depth+1))
		case "Append":
			if !f.take(1) {
				return false
			}
			a, ok := alloc(d, &p.Append)
			if a == nil {
				return ok
			}
			af := fields{names: []string{"name", "entries", "current_tokens"}}
			return d.obj(depth+1, func(k string) bool {
				switch k {
				case "name":
					return af.take(0) && d.strInto(&a.Name)
				case "entries":
					return af.take(1) && d.entries(&a.Entries, depth+2)
				case "current_tokens":
					return af.take(2) && d.int64Into(&a.CurrentTokens)
				}
				return d.other(k, af.names, depth+2)
			})
		case "Clear":
			if !f.take(2) {
				return false
			}
			c, ok := alloc(d, &p.Clear)
			return ok && (c == nil || d.regionName(c, depth+1))
		case "Remove":
			if !f.take(3) {
				return false
			}
			c, ok := alloc(d, &p.Remove)
			return ok && (c == nil || d.regionName(c, depth+1))
		}
		return d.other(k, f.names, depth+1)
	})
}

func (d *fdec) regionName(p *regionName, depth int) bool {
	f := fields{names: []string{"name"}}
	return d.obj(depth, func(k string) bool {
		if k == "name" {
			return f.take(0) && d.strInto(&p.Name)
		}
		return d.other(k, f.names, depth+1)
	})
}

var messageNames = []string{"role", "content"}

func (d *fdec) message(p *messageRecord, depth int) bool {
	if d.structNull() {
		return true
	}
	f := fields{names: messageNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "role":
			return f.take(0) && d.strInto(&p.Role)
		case "content":
			return f.take(1) && d.textInto(&p.Content)
		}
		return d.other(k, f.names, depth+1)
	})
}

var usageNames = []string{"kind", "stage", "iteration", "provider", "model", "prompt_tokens", "completion_tokens",
	"cached_tokens", "cache_write_tokens", "at"}

func (d *fdec) usage(p *usageRecord, depth int) bool {
	f := fields{names: usageNames}
	return d.obj(depth, func(k string) bool {
		switch k {
		case "kind":
			return f.take(0) && d.strInto(&p.Kind)
		case "stage":
			return f.take(1) && d.strInto(&p.Stage)
		case "iteration":
			return f.take(2) && d.int64Into(&p.Iteration)
		case "provider":
			return f.take(3) && d.strInto(&p.Provider)
		case "model":
			return f.take(4) && d.strInto(&p.Model)
		case "prompt_tokens":
			return f.take(5) && d.int64Into(&p.PromptTokens)
		case "completion_tokens":
			return f.take(6) && d.int64Into(&p.CompletionTokens)
		case "cached_tokens":
			return f.take(7) && d.int64Into(&p.CachedTokens)
		case "cache_write_tokens":
			return f.take(8) && d.int64Into(&p.CacheWriteTokens)
		case "at":
			return f.take(9) && d.int64Into(&p.At)
		}
		return d.other(k, f.names, depth+1)
	})
}
