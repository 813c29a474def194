package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// tomlSection is a run of a TOML file's lines from one table header to
// the next: [start, end), its header's key (nil before the first header),
// and whether the header is an array of tables ([[…]]).
type tomlSection struct {
	start, end int
	key        []string
	array      bool
}

// tomlSections splits a TOML file's lines at its table headers. A header
// is a line that starts with "[" outside any string and outside a value
// that spans lines (a multi-line string or array), which is all the
// scanner tracks; the file has already been decoded, so it is valid TOML.
func tomlSections(lines []string) ([]tomlSection, error) {
	secs := []tomlSection{{start: 0}}
	var sc tomlScanner
	for i, l := range lines {
		if sc.atTop() && strings.HasPrefix(strings.TrimLeft(l, " \t"), "[") {
			key, array, err := tomlHeader(l)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", i+1, err)
			}
			secs[len(secs)-1].end = i
			secs = append(secs, tomlSection{start: i, key: key, array: array})
			continue
		}
		sc.line(l)
	}
	secs[len(secs)-1].end = len(lines)
	return secs, nil
}

// tomlScanner follows what spans lines in TOML values: a multi-line
// string and the brackets of arrays (and inline tables).
type tomlScanner struct {
	in    string // `"""` or `'''` inside a multi-line string
	depth int
}

func (s *tomlScanner) atTop() bool { return s.in == "" && s.depth == 0 }

func (s *tomlScanner) line(l string) {
	for i := 0; i < len(l); {
		if s.in != "" {
			switch {
			case s.in == `"""` && l[i] == '\\':
				i += 2
			case strings.HasPrefix(l[i:], s.in):
				i += 3
				for k := 0; k < 2 && i < len(l) && l[i] == s.in[0]; k++ { // """"" ends with quotes in the string
					i++
				}
				s.in = ""
			default:
				i++
			}
			continue
		}
		switch c := l[i]; {
		case c == '#':
			return
		case strings.HasPrefix(l[i:], `"""`), strings.HasPrefix(l[i:], `'''`):
			s.in = l[i : i+3]
			i += 3
		case c == '"':
			for i++; i < len(l) && l[i] != '"'; i++ {
				if l[i] == '\\' {
					i++
				}
			}
			i++
		case c == '\'':
			for i++; i < len(l) && l[i] != '\''; i++ {
			}
			i++
		case c == '[' || c == '{':
			s.depth++
			i++
		case c == ']' || c == '}':
			s.depth--
			i++
		default:
			i++
		}
	}
}

// tomlHeader reads a table header line: its key's parts (bare, "basic"
// or 'literal') and whether it is [[an array of tables]].
func tomlHeader(l string) (key []string, array bool, err error) {
	s := strings.TrimLeft(l, " \t")
	open, close := "[", "]"
	if strings.HasPrefix(s, "[[") {
		open, close, array = "[[", "]]", true
	}
	s = s[len(open):]
	for {
		s = strings.TrimLeft(s, " \t")
		var part string
		switch {
		case strings.HasPrefix(s, `"`):
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, false, fmt.Errorf("unterminated key in %q", strings.TrimSpace(l))
			}
			if part, err = strconv.Unquote(s[:end+1]); err != nil {
				part = s[1:end] // an escape Go reads otherwise: the raw text still names it
			}
			s = s[end+1:]
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, false, fmt.Errorf("unterminated key in %q", strings.TrimSpace(l))
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := strings.IndexFunc(s, func(r rune) bool {
				return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			})
			if end <= 0 {
				return nil, false, fmt.Errorf("a table header vigil cannot read: %q", strings.TrimSpace(l))
			}
			part, s = s[:end], s[end:]
		}
		key = append(key, part)
		s = strings.TrimLeft(s, " \t")
		switch {
		case strings.HasPrefix(s, "."):
			s = s[1:]
		case strings.HasPrefix(s, close):
			return key, array, nil
		default:
			return nil, false, fmt.Errorf("a table header vigil cannot read: %q", strings.TrimSpace(l))
		}
	}
}
