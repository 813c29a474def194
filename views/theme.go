// Package views draws vigil's panes. Each pane is a small struct holding
// only view state (cursor, scroll, filter text) and speaks the Pane
// protocol (pane.go): the root sizes it, hands it keys, clicks and the
// wheel, and asks it to draw; its View is a pure function of that state,
// the data the root hands it, its size and the shared Env. No view does IO,
// and every string from a store is sanitized before it is drawn. Numbers
// and cell widths are written by internal/textfmt, as the command line
// writes them; every count a pane shows says its scope (scope.go).
package views

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/store"
)

// Palette is vigil's small set of named colours, one value per role.
type Palette struct {
	Text, Muted, Faint, Border, Accent, SelectBg, SelectBlurBg     color.Color
	Running, Waiting, Paused, Stale, Good, Bad, Estimate, Reported color.Color
	MatchText                                                      color.Color // a search match's text, on Stale
}

// palette picks each role's colour for a light or a dark background. Every
// background is a hex colour: screenshot tools ignore reverse video and the
// 16 basic background colours.
func palette(dark bool) Palette {
	ld := lipgloss.LightDark(dark)
	c := lipgloss.Color
	return Palette{
		Text:         ld(c("#1F2328"), c("#E6EDF3")),
		Muted:        ld(c("#57606A"), c("#8B949E")),
		Faint:        ld(c("#8C959F"), c("#6E7681")),
		Border:       ld(c("#D0D7DE"), c("#30363D")),
		Accent:       ld(c("#8250DF"), c("#A371F7")),
		SelectBg:     ld(c("#DDF4FF"), c("#1F3A5F")),
		SelectBlurBg: ld(c("#EAEEF2"), c("#262C36")),
		Running:      ld(c("#0969DA"), c("#58A6FF")),
		Waiting:      ld(c("#BC4C00"), c("#F0883E")),
		Paused:       ld(c("#8250DF"), c("#D2A8FF")),
		Stale:        ld(c("#9A6700"), c("#D29922")),
		Good:         ld(c("#1A7F37"), c("#3FB950")),
		Bad:          ld(c("#CF222E"), c("#F85149")),
		Estimate:     ld(c("#6E7781"), c("#8B949E")),
		Reported:     ld(c("#0969DA"), c("#58A6FF")),
		MatchText:    ld(c("#FFFFFF"), c("#0D1117")),
	}
}

// Theme is every style the panes use, built once from the palette. With
// NoColor it uses no colour at all: selection is reverse video and every
// state has its own glyph, so nothing is told by colour alone.
type Theme struct {
	NoColor bool
	Dark    bool

	Text, Muted, Faint, Bold    Style
	Border, BorderFocus         Style
	Title, TitleFocus           Style
	Selected, SelectedBlur      Style
	Running, Waiting, Paused    Style
	Stale, Good, Bad            Style
	Estimate, Reported, Warning Style
	Key, StatusBar              Style
	Match                       Style // a search match (search.go)
}

// NewTheme builds the theme for a background and colour choice.
func NewTheme(dark, noColor bool) *Theme {
	s := lipgloss.NewStyle
	if noColor {
		plain := s()
		return &Theme{NoColor: true, Dark: dark,
			Text: plain, Muted: plain, Faint: plain, Bold: s().Bold(true),
			Border: plain, BorderFocus: s().Bold(true),
			Title: plain, TitleFocus: s().Bold(true).Underline(true),
			Selected: s().Reverse(true).Bold(true), SelectedBlur: s().Underline(true),
			Running: plain, Waiting: s().Bold(true), Paused: plain, Stale: plain,
			Good: plain, Bad: s().Bold(true), Estimate: plain, Reported: plain, Warning: s().Bold(true),
			Key: s().Bold(true), StatusBar: s().Reverse(true),
			Match: s().Reverse(true).Underline(true),
		}
	}
	return themeOf(palette(dark), dark)
}

// themeOf styles every role from a palette.
func themeOf(p Palette, dark bool) *Theme {
	s := lipgloss.NewStyle
	fg := func(c color.Color) lipgloss.Style { return s().Foreground(c) }
	return &Theme{Dark: dark,
		Text: fg(p.Text), Muted: fg(p.Muted), Faint: fg(p.Faint), Bold: fg(p.Text).Bold(true),
		Border: fg(p.Border), BorderFocus: fg(p.Accent),
		Title: fg(p.Muted), TitleFocus: fg(p.Accent).Bold(true),
		Selected: s().Background(p.SelectBg).Foreground(p.Text).Bold(true), SelectedBlur: s().Background(p.SelectBlurBg).Foreground(p.Text),
		Running: fg(p.Running), Waiting: fg(p.Waiting).Bold(true), Paused: fg(p.Paused), Stale: fg(p.Stale),
		Good: fg(p.Good), Bad: fg(p.Bad), Estimate: fg(p.Estimate), Reported: fg(p.Reported), Warning: fg(p.Waiting).Bold(true),
		Key: fg(p.Accent).Bold(true), StatusBar: s().Background(p.SelectBlurBg).Foreground(p.Text),
		Match: s().Background(p.Stale).Foreground(p.MatchText).Bold(true),
	}
}

// StateGlyph is a state's symbol: it says the state without colour.
func StateGlyph(st store.State, outcome store.Outcome) string {
	switch st {
	case store.StateRunning:
		return "●"
	case store.StateWaiting:
		return "◆"
	case store.StatePaused:
		return "‖"
	case store.StateStale:
		return "◌"
	case store.StateCrashed:
		return "✗"
	case store.StateUnknown:
		return "○"
	case store.StateRecovery:
		return "◇"
	}
	if outcome.Succeeded() {
		return "✓"
	}
	return "■"
}

// StateLabel is the word a run's state shows as: the outcome once finished.
func StateLabel(st store.State, outcome store.Outcome) string {
	if st == store.StateFinished {
		if outcome == "" {
			return store.StateFinished.String()
		}
		return sanitize.Line(string(outcome)) // an outcome a format does not map is the store's own word
	}
	return st.String()
}

// StateStyle colours a state.
func (t *Theme) StateStyle(st store.State, outcome store.Outcome) Style {
	switch st {
	case store.StateRunning, store.StateUnknown:
		return t.Running
	case store.StateWaiting, store.StateRecovery:
		return t.Waiting
	case store.StatePaused:
		return t.Paused
	case store.StateStale:
		return t.Stale
	case store.StateCrashed:
		return t.Bad
	}
	switch {
	case outcome.Succeeded():
		return t.Good
	case outcome.Stopped():
		return t.Stale
	}
	return t.Bad
}

// PlainTheme styles nothing at all: every escape sequence in a frame drawn
// with it would have come from data, which is what the terminal-safety
// tests look for.
func PlainTheme() *Theme {
	p := lipgloss.NewStyle()
	return &Theme{NoColor: true, Text: p, Muted: p, Faint: p, Bold: p, Border: p, BorderFocus: p, Title: p, TitleFocus: p,
		Selected: p, SelectedBlur: p, Running: p, Waiting: p, Paused: p, Stale: p, Good: p, Bad: p, Estimate: p,
		Reported: p, Warning: p, Key: p, StatusBar: p, Match: p}
}
