package views

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-run/vigil/internal/textfmt"
)

// Search is a pane's search: / opens it, what is typed is looked for in
// the pane's rows as it is typed (case-insensitively), enter keeps it,
// esc drops it; n and N move to the next and previous row that matches,
// wrapping around. Matches are highlighted where they are drawn, and the
// pane's title says which match is selected and how many there are. The
// runs pane filters instead (runs.go); every other list, and the step
// detail, search.
type Search struct {
	input  textinput.Model
	typing bool
	query  string // lower case; "" when no search is on
	hits   []int  // the rows that match, in order
	// scanning says the matches are still being found (a run not held
	// whole is searched through the store).
	scanning bool
}

func newSearch(env *Env) Search {
	return Search{input: newInput(env.Keys.Filter.Help().Key, "")}
}

// On reports whether a search is kept or being typed.
func (s *Search) On() bool { return s.typing || s.query != "" }

// Typing reports whether the search takes every key.
func (s *Search) Typing() bool { return s.typing }

// Query is the text searched for (lower case).
func (s *Search) Query() string { return s.query }

// searchResult says what a key did to the search.
type searchResult int

const (
	searchIgnored searchResult = iota // not a search key: the pane handles it
	searchChanged                     // the query changed: go to the first match from the cursor
	searchMoved                       // n / N: go to the match Target returns
	searchKept                        // redraw only
)

// Key handles the search's keys: while typing, every key; else /, n, N,
// and esc while a search is kept.
func (s *Search) Key(msg tea.KeyPressMsg, env *Env) searchResult {
	km := env.Keys
	if s.typing {
		switch {
		case key.Matches(msg, km.Dismiss):
			s.Clear()
			return searchKept
		case key.Matches(msg, km.Submit):
			s.typing = false
			s.input.Blur()
			if s.query == "" {
				s.Clear()
			}
			return searchKept
		}
		feed(&s.input, msg)
		s.query = strings.ToLower(s.input.Value())
		return searchChanged
	}
	switch {
	case key.Matches(msg, km.Filter):
		s.typing = true
		s.input.SetValue("")
		s.query = ""
		s.hits = nil
		s.input.Focus()
		return searchKept
	case s.query != "" && (key.Matches(msg, km.SearchNext) || key.Matches(msg, km.SearchPrev)):
		return searchMoved
	case s.query != "" && key.Matches(msg, km.Back):
		s.Clear()
		return searchKept
	}
	return searchIgnored
}

// Paste adds a bracketed paste to the query being typed; false when no
// query is being typed.
func (s *Search) Paste(text string) bool {
	if !s.typing {
		return false
	}
	feed(&s.input, tea.PasteMsg{Content: text})
	s.query = strings.ToLower(s.input.Value())
	return true
}

// Clear drops the search.
func (s *Search) Clear() {
	s.typing, s.query, s.hits, s.scanning = false, "", nil, false
	s.input.SetValue("")
	s.input.Blur()
}

// Index finds the rows of n that match: text(i) is row i's plain text.
func (s *Search) Index(n int, text func(i int) string) {
	s.hits = s.hits[:0]
	if s.query == "" {
		return
	}
	for i := 0; i < n; i++ {
		if containsFold(text(i), s.query) {
			s.hits = append(s.hits, i)
		}
	}
}

// containsFold reports whether s holds q (lower case), ignoring case; an
// ASCII query is looked for without lowering a copy of s (a search of
// 100 000 rows runs on every key typed).
func containsFold(s, q string) bool {
	for i := 0; i < len(q); i++ {
		if q[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), q)
		}
	}
	if len(q) == 0 {
		return true
	}
	first := q[0]
	upper := first
	if first >= 'a' && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	for i := 0; i+len(q) <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < len(q); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != q[j] {
				break
			}
		}
		if j == len(q) {
			return true
		}
	}
	return false
}

// Target is the matching row to go to from row cur: the first at or after
// it (dir 0, as the query changes), the next after it (1) or the one
// before it (-1), wrapping around. ok is false when nothing matches.
func (s *Search) Target(cur, dir int) (int, bool) {
	if len(s.hits) == 0 {
		return 0, false
	}
	// hits are ascending: found by halving, so n on a million matches is
	// as quick as on ten.
	switch dir {
	case 0, 1:
		i := sort.SearchInts(s.hits, cur)
		if dir == 1 && i < len(s.hits) && s.hits[i] == cur {
			i++
		}
		if i < len(s.hits) {
			return s.hits[i], true
		}
		return s.hits[0], true
	default:
		if i := sort.SearchInts(s.hits, cur); i > 0 {
			return s.hits[i-1], true
		}
		return s.hits[len(s.hits)-1], true
	}
}

// Dir is the direction n (1) or N (-1) moves in.
func (s *Search) Dir(msg tea.KeyPressMsg, env *Env) int {
	if key.Matches(msg, env.Keys.SearchPrev) {
		return -1
	}
	return 1
}

// Note is the search as the pane's title shows it: "/goal▏" while typing,
// then "/goal 2 of 5 · n/N" (cur is the row under the cursor).
func (s *Search) Note(env *Env, cur int) string {
	if !s.On() {
		return ""
	}
	t, km := env.Theme, env.Keys
	q := km.Filter.Help().Key + textfmt.Cut(sanitizeQuery(s.input.Value()), 24)
	if s.typing {
		q += "▏"
	}
	switch {
	case s.query == "":
		return t.Key.Render(q)
	case s.scanning:
		return t.Key.Render(q) + t.Warning.Render(" searching every step…")
	case len(s.hits) == 0:
		return t.Key.Render(q) + t.Warning.Render(" no match")
	}
	at := 0
	if i := sort.SearchInts(s.hits, cur); i < len(s.hits) && s.hits[i] == cur {
		at = i + 1
	}
	where := fmt.Sprintf(" %d match", len(s.hits))
	if len(s.hits) != 1 {
		where += "es"
	}
	if at > 0 {
		where = fmt.Sprintf(" %d of %d", at, len(s.hits))
	}
	return t.Key.Render(q) + t.Muted.Render(where+" · "+km.SearchNext.Help().Key+"/"+km.SearchPrev.Help().Key)
}

// sanitizeQuery keeps what was typed printable (it is drawn in a title).
func sanitizeQuery(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// Highlight marks every match of the query in a drawn line (styled or
// not), by cells: the text around a match keeps its styles.
func (s *Search) Highlight(t *Theme, line string) string {
	return highlight(t, line, s.query)
}

func highlight(t *Theme, line, query string) string {
	if query == "" {
		return line
	}
	plain := strings.ToLower(ansi.Strip(line))
	if !strings.Contains(plain, query) {
		return line
	}
	var b strings.Builder
	at := 0 // cells of line written
	for off := 0; ; {
		i := strings.Index(plain[off:], query)
		if i < 0 {
			break
		}
		from := textfmt.Width(plain[:off+i])
		to := from + textfmt.Width(plain[off+i:off+i+len(query)])
		b.WriteString(ansi.Cut(line, at, from))
		b.WriteString(t.Match.Render(ansi.Strip(ansi.Cut(line, from, to))))
		at = to
		off += i + len(query)
	}
	b.WriteString(ansi.Cut(line, at, ansi.StringWidth(line)))
	return b.String()
}
