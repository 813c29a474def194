package harness

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// io-harness writes its JSON columns with serde_json (step_turns.calls,
// pending_questions.choices, plans.steps), and a tool call's arguments
// reach it as a serde_json::Value parsed from the provider's response. A Go
// writer that wants io-harness to read back what io-harness itself would
// have written has to produce the same bytes, so this file is serde_json
// 1.0.151's Value round trip (the version io-harness's Cargo.lock pins, with
// its default features: no preserve_order, no arbitrary_precision, no
// float_roundtrip), ported from its source:
//
//   - parsing (src/de.rs): objects into a BTreeMap (keys in byte order, a
//     repeated key's last value wins); an integer that fits is a u64, or an
//     i64 when negative ("-0" is the float -0.0); any other number is an
//     f64 built the default way (f64_from_parts: the digits that fit a u64,
//     times or divided by a power of ten), an f64 out of range is an error;
//     strings must be valid UTF-8 with no raw control characters and no lone
//     surrogates; nesting deeper than 128 is an error;
//   - writing (src/ser.rs, compact): integers in decimal, floats through zmij
//     1.0.23's format_finite (shortest round-trip digits; plain notation for
//     decimal exponents -5 to 15, else d.ddde±x — so 1.0, -0.0, 1e+21);
//     strings with only ", \ and control characters escaped (\b \t \n \f \r,
//     the rest \u00xx in lower-case hex): no HTML escaping, and U+2028 and
//     U+2029 written as they are.
//
// Go's encoding/json differs on every one of these points where it matters
// (1.0 → 1, -0.0 → -0, u64 above 2^53 rounded, & → \u0026, U+2028 escaped).

// serdeValue parses raw JSON as serde_json::Value does and writes it back
// as serde_json::to_string does.
func serdeValue(raw []byte) ([]byte, error) {
	p := &serdeParser{s: raw}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("trailing characters")
	}
	var b strings.Builder
	v.write(&b)
	return []byte(b.String()), nil
}

// serdeString writes a string as serde_json does.
func serdeString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var esc string
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\b':
			esc = `\b`
		case c == '\t':
			esc = `\t`
		case c == '\n':
			esc = `\n`
		case c == '\f':
			esc = `\f`
		case c == '\r':
			esc = `\r`
		case c < 0x20:
			esc = `\u00` + string(hex[c>>4]) + string(hex[c&0xf])
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// serdeStrings writes a Vec<String> as serde_json::to_string does.
func serdeStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		serdeString(&b, s)
	}
	b.WriteByte(']')
	return b.String()
}

type jsonKind int

const (
	jNull jsonKind = iota
	jBool
	jU64
	jI64
	jF64
	jString
	jArray
	jObject
)

type jsonValue struct {
	kind jsonKind
	b    bool
	u    uint64
	i    int64
	f    float64
	s    string
	arr  []jsonValue
	obj  map[string]jsonValue
}

func (v jsonValue) write(b *strings.Builder) {
	switch v.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		b.WriteString(strconv.FormatBool(v.b))
	case jU64:
		b.WriteString(strconv.FormatUint(v.u, 10))
	case jI64:
		b.WriteString(strconv.FormatInt(v.i, 10))
	case jF64:
		b.WriteString(zmijFormat(v.f))
	case jString:
		serdeString(b, v.s)
	case jArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case jObject:
		keys := make([]string, 0, len(v.obj))
		for k := range v.obj {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a BTreeMap<String, _>: byte order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			serdeString(b, k)
			b.WriteByte(':')
			v.obj[k].write(b)
		}
		b.WriteByte('}')
	}
}

// zmijFormat is zmij::Buffer::format_finite for an f64 (serde_json's
// write_f64): the shortest digits that read back as f, in plain notation
// when the decimal exponent is within -5..=15 (1234e7 → 12340000000.0,
// 1234e-2 → 12.34, 1234e-6 → 0.001234), else d.ddd followed by e+x or e-x
// with no padding of the exponent (1e+21, 1.5e-7).
func zmijFormat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "null" // serde_json writes a non-finite float as null; a parsed one never is
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±xx, shortest round trip
	neg := strings.HasPrefix(e, "-")
	e = strings.TrimPrefix(e, "-")
	mant, exps, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(exps)
	var out string
	switch {
	case exp >= -5 && exp <= 15 && len(digits)-1 <= exp:
		out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	case exp >= 0 && exp <= 15:
		out = digits[:exp+1] + "." + digits[exp+1:]
	case exp >= -5 && exp < 0:
		out = "0." + strings.Repeat("0", -exp-1) + digits
	default:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		if exp >= 0 {
			out += "e+" + strconv.Itoa(exp)
		} else {
			out += "e-" + strconv.Itoa(-exp)
		}
	}
	if neg {
		out = "-" + out
	}
	return out
}

type serdeParser struct {
	s []byte
	i int
}

func (p *serdeParser) errf(format string, args ...any) error {
	return fmt.Errorf("arguments are not JSON serde_json reads: %s at byte %d", fmt.Sprintf(format, args...), p.i)
}

func (p *serdeParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\n', '\t', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *serdeParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// serdeRecursionLimit is serde_json's default remaining_depth.
const serdeRecursionLimit = 128

func (p *serdeParser) value(depth int) (jsonValue, error) {
	if p.i >= len(p.s) {
		return jsonValue{}, p.errf("EOF while parsing a value")
	}
	switch c := p.s[p.i]; {
	case c == 'n':
		return jsonValue{kind: jNull}, p.word("null")
	case c == 't':
		return jsonValue{kind: jBool, b: true}, p.word("true")
	case c == 'f':
		return jsonValue{kind: jBool}, p.word("false")
	case c == '"':
		s, err := p.str()
		return jsonValue{kind: jString, s: s}, err
	case c == '-':
		p.i++
		return p.integer(false)
	case c >= '0' && c <= '9':
		return p.integer(true)
	case c == '[':
		if depth+1 > serdeRecursionLimit {
			return jsonValue{}, p.errf("recursion limit exceeded")
		}
		p.i++
		v := jsonValue{kind: jArray, arr: []jsonValue{}}
		p.ws()
		if p.peek() == ']' {
			p.i++
			return v, nil
		}
		for {
			p.ws()
			e, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.arr = append(v.arr, e)
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return v, nil
			default:
				return v, p.errf("expected , or ]")
			}
		}
	case c == '{':
		if depth+1 > serdeRecursionLimit {
			return jsonValue{}, p.errf("recursion limit exceeded")
		}
		p.i++
		v := jsonValue{kind: jObject, obj: map[string]jsonValue{}}
		p.ws()
		if p.peek() == '}' {
			p.i++
			return v, nil
		}
		for {
			p.ws()
			if p.peek() != '"' {
				return v, p.errf("key must be a string")
			}
			k, err := p.str()
			if err != nil {
				return v, err
			}
			p.ws()
			if p.peek() != ':' {
				return v, p.errf("expected :")
			}
			p.i++
			p.ws()
			e, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.obj[k] = e // BTreeMap::insert: the last value of a repeated key wins
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case '}':
				p.i++
				return v, nil
			default:
				return v, p.errf("expected , or }")
			}
		}
	}
	return jsonValue{}, p.errf("expected value")
}

func (p *serdeParser) word(w string) error {
	if len(p.s)-p.i < len(w) || string(p.s[p.i:p.i+len(w)]) != w {
		return p.errf("expected %s", w)
	}
	p.i += len(w)
	return nil
}

func (p *serdeParser) str() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errf("EOF while parsing a string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			p.i++
			if p.i >= len(p.s) {
				return "", p.errf("EOF while parsing a string")
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					return "", p.errf("lone trailing surrogate in hex escape")
				case r >= 0xD800 && r <= 0xDBFF:
					if p.i+2 > len(p.s) || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
						return "", p.errf("lone leading surrogate in hex escape")
					}
					p.i += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return "", p.errf("lone leading surrogate in hex escape")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				b.WriteRune(r)
			default:
				return "", p.errf("invalid escape")
			}
		case c < 0x20:
			return "", p.errf("control character (\\u%04x) found while parsing a string", c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", p.errf("invalid unicode code point")
			}
			b.Write(p.s[p.i : p.i+n])
			p.i += n
		}
	}
}

func (p *serdeParser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.errf("EOF while parsing a string")
	}
	n, err := strconv.ParseUint(string(p.s[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, p.errf("invalid escape")
	}
	p.i += 4
	return rune(n), nil
}

func (p *serdeParser) digit() (uint64, bool) {
	if c := p.peek(); c >= '0' && c <= '9' {
		return uint64(c - '0'), true
	}
	return 0, false
}

// overflows is serde_json's overflow! check: a*10+b > u64::MAX.
func overflows(a, b uint64) bool {
	return a > math.MaxUint64/10 || a == math.MaxUint64/10 && b > math.MaxUint64%10
}

// integer is parse_integer: the sign has been read.
func (p *serdeParser) integer(positive bool) (jsonValue, error) {
	d, ok := p.digit()
	if !ok {
		if p.i >= len(p.s) {
			return jsonValue{}, p.errf("EOF while parsing a value")
		}
		return jsonValue{}, p.errf("invalid number")
	}
	p.i++
	if d == 0 {
		if _, more := p.digit(); more {
			return jsonValue{}, p.errf("invalid number") // only one leading 0
		}
		return p.number(positive, 0)
	}
	sig := d
	for {
		d, ok := p.digit()
		if !ok {
			return p.number(positive, sig)
		}
		if overflows(sig, d) {
			f, err := p.longInteger(positive, sig)
			return jsonValue{kind: jF64, f: f}, err
		}
		p.i++
		sig = sig*10 + d
	}
}

// number is parse_number.
func (p *serdeParser) number(positive bool, sig uint64) (jsonValue, error) {
	switch p.peek() {
	case '.':
		f, err := p.decimal(positive, sig, 0)
		return jsonValue{kind: jF64, f: f}, err
	case 'e', 'E':
		f, err := p.exponent(positive, sig, 0)
		return jsonValue{kind: jF64, f: f}, err
	}
	if positive {
		return jsonValue{kind: jU64, u: sig}, nil
	}
	neg := -int64(sig) // wrapping, as (significand as i64).wrapping_neg()
	if neg >= 0 {
		// Underflow, or -0: a float.
		return jsonValue{kind: jF64, f: -float64(sig)}, nil
	}
	return jsonValue{kind: jI64, i: neg}, nil
}

// decimal is parse_decimal: the '.' is next.
func (p *serdeParser) decimal(positive bool, sig uint64, expBefore int32) (float64, error) {
	p.i++
	var after int32
	for {
		d, ok := p.digit()
		if !ok {
			break
		}
		if overflows(sig, d) {
			// parse_decimal_overflow: the further digits are ignored.
			for {
				if _, ok := p.digit(); !ok {
					break
				}
				p.i++
			}
			if c := p.peek(); c == 'e' || c == 'E' {
				return p.exponent(positive, sig, expBefore+after)
			}
			return p.fromParts(positive, sig, expBefore+after)
		}
		p.i++
		sig = sig*10 + d
		after--
	}
	if after == 0 {
		if p.i >= len(p.s) {
			return 0, p.errf("EOF while parsing a value")
		}
		return 0, p.errf("invalid number")
	}
	exp := expBefore + after
	if c := p.peek(); c == 'e' || c == 'E' {
		return p.exponent(positive, sig, exp)
	}
	return p.fromParts(positive, sig, exp)
}

// exponent is parse_exponent: the 'e' is next.
func (p *serdeParser) exponent(positive bool, sig uint64, start int32) (float64, error) {
	p.i++
	posExp := true
	switch p.peek() {
	case '+':
		p.i++
	case '-':
		p.i++
		posExp = false
	}
	d, ok := p.digit()
	if !ok {
		if p.i >= len(p.s) {
			return 0, p.errf("EOF while parsing a value")
		}
		return 0, p.errf("invalid number")
	}
	p.i++
	exp := int32(d)
	for {
		d, ok := p.digit()
		if !ok {
			break
		}
		p.i++
		if exp > math.MaxInt32/10 || exp == math.MaxInt32/10 && int32(d) > math.MaxInt32%10 {
			// parse_exponent_overflow
			if sig != 0 && posExp {
				return 0, p.errf("number out of range")
			}
			for {
				if _, ok := p.digit(); !ok {
					break
				}
				p.i++
			}
			if positive {
				return 0, nil
			}
			return math.Copysign(0, -1), nil
		}
		exp = exp*10 + int32(d)
	}
	var final int32
	if posExp {
		final = saturatingAdd(start, exp)
	} else {
		final = saturatingAdd(start, -exp)
	}
	return p.fromParts(positive, sig, final)
}

func saturatingAdd(a, b int32) int32 {
	s := int64(a) + int64(b)
	switch {
	case s > math.MaxInt32:
		return math.MaxInt32
	case s < math.MinInt32:
		return math.MinInt32
	}
	return int32(s)
}

// longInteger is parse_long_integer (without float_roundtrip): the integer
// part overflowed a u64; its remaining digits only count in the exponent.
func (p *serdeParser) longInteger(positive bool, sig uint64) (float64, error) {
	var exp int32
	for {
		if _, ok := p.digit(); !ok {
			break
		}
		p.i++
		exp++
	}
	switch p.peek() {
	case '.':
		return p.decimal(positive, sig, exp)
	case 'e', 'E':
		return p.exponent(positive, sig, exp)
	}
	return p.fromParts(positive, sig, exp)
}

// pow10 is serde_json's POW10 table: 1e0 through 1e308.
var pow10 = func() [309]float64 {
	var t [309]float64
	for i := range t {
		t[i], _ = strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
	}
	return t
}()

var errOutOfRange = errors.New("number out of range")

// fromParts is f64_from_parts without float_roundtrip: the significand as
// an f64, then one multiply or divide by a power of ten (dividing by 1e308
// first while the exponent is beyond the table).
func (p *serdeParser) fromParts(positive bool, sig uint64, exp int32) (float64, error) {
	f := float64(sig)
	for {
		abs := int64(exp)
		if abs < 0 {
			abs = -abs
		}
		if abs < int64(len(pow10)) {
			if exp >= 0 {
				f *= pow10[abs]
				if math.IsInf(f, 0) {
					return 0, fmt.Errorf("%w at byte %d", errOutOfRange, p.i)
				}
			} else {
				f /= pow10[abs]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return 0, fmt.Errorf("%w at byte %d", errOutOfRange, p.i)
		}
		f /= 1e308
		exp += 308
	}
	if !positive {
		f = -f
	}
	return f, nil
}
