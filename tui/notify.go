package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/runmodel"
	"github.com/vigil-run/vigil/store"
)

// Telling a person a run needs them when they are not looking: the
// terminal bell and a desktop notification when a request arrives that
// this viewer can decide, and the window title while anything waits.
// Bell and notification are held back while the terminal says it has the
// focus (where it reports focus at all); the title is not, it is quiet.

// Desktop is the escape sequence a terminal shows desktop notifications for.
type Desktop string

const (
	DesktopNone   Desktop = ""       // none known: the bell alone
	DesktopOSC9   Desktop = "osc9"   // iTerm2, WezTerm, ghostty, Windows Terminal: ESC ] 9 ; text BEL
	DesktopOSC777 Desktop = "osc777" // VTE terminals (GNOME Terminal, Tilix), urxvt, foot: ESC ] 777 ; notify ; title ; body BEL
	DesktopOSC99  Desktop = "osc99"  // kitty: ESC ] 99 ; ; text ESC \
)

// Notify says which notices the explorer gives.
type Notify struct {
	NoBell    bool
	NoDesktop bool
	NoTitle   bool
	Desktop   Desktop // the terminal's protocol (DetectDesktop)
	// Tmux wraps the desktop sequence in tmux's passthrough (DCS tmux; …),
	// for a tmux whose allow-passthrough is on; inside a tmux that does not
	// allow it the sequence would be dropped, so Desktop is none there.
	Tmux bool
}

// DetectDesktop picks the notification sequence for the terminal from its
// environment. Inside tmux, TERM_PROGRAM names tmux, so the outer
// terminal is read from what it leaves in the environment (LC_TERMINAL,
// KITTY_WINDOW_ID, VTE_VERSION, WEZTERM_PANE, …); tmuxAllows says whether
// the tmux passes sequences through (allow-passthrough).
func DetectDesktop(getenv func(string) string, tmuxAllows bool) (Desktop, bool) {
	inTmux := getenv("TMUX") != ""
	if inTmux && !tmuxAllows {
		return DesktopNone, false
	}
	d := DesktopNone
	prog := strings.ToLower(getenv("TERM_PROGRAM"))
	term := getenv("TERM")
	switch {
	case getenv("KITTY_WINDOW_ID") != "" || term == "xterm-kitty":
		d = DesktopOSC99
	case prog == "iterm.app" || getenv("LC_TERMINAL") == "iTerm2" || prog == "wezterm" || getenv("WEZTERM_PANE") != "" ||
		prog == "ghostty" || term == "xterm-ghostty" || getenv("WT_SESSION") != "":
		d = DesktopOSC9
	case getenv("VTE_VERSION") != "" || strings.HasPrefix(term, "rxvt") || strings.HasPrefix(term, "foot"):
		d = DesktopOSC777
	}
	return d, inTmux && d != DesktopNone
}

// desktopSeq is the notification as the terminal takes it. Title and body
// are vigil's own words with store text made safe: no control character
// can end the sequence early.
func desktopSeq(n Notify, title, body string) string {
	title, body = sanitize.Line(title), sanitize.Line(body)
	var s string
	switch n.Desktop {
	case DesktopOSC9:
		s = "\x1b]9;" + title + ": " + body + "\a"
	case DesktopOSC777:
		s = "\x1b]777;notify;" + strings.ReplaceAll(title, ";", ",") + ";" + body + "\a"
	case DesktopOSC99:
		s = "\x1b]99;;" + title + ": " + body + "\x1b\\"
	default:
		return ""
	}
	if n.Tmux {
		// tmux's passthrough: DCS tmux; with every ESC inside doubled.
		s = "\x1bPtmux;" + strings.ReplaceAll(s, "\x1b", "\x1b\x1b") + "\x1b\\"
	}
	return s
}

// alerts is what the model remembers between refreshes to tell a new
// request from one already announced.
type alerts struct {
	seen    map[store.RequestKey]bool // decidable requests already announced (or there at start)
	primed  bool                      // the first load is in: what waits then is not news
	focused bool                      // the terminal said it has the focus (FocusMsg)
	sent    []string                  // what was sent, oldest first (tests read it)
}

// onFocus notes the terminal's focus reports.
func (m *Model) onFocus(msg tea.Msg) bool {
	switch msg.(type) {
	case tea.FocusMsg:
		m.alert.focused = true
	case tea.BlurMsg:
		m.alert.focused = false
	default:
		return false
	}
	return true
}

// announce rings for requests this viewer can decide that it has not seen
// before: a bell and a desktop notification naming the first of them.
func (m *Model) announce() tea.Cmd {
	a := &m.alert
	if a.seen == nil {
		a.seen = map[store.RequestKey]bool{}
	}
	var fresh []store.Request
	now := m.now()
	ro, _ := m.src.ReadOnly()
	var first runmodel.Request
	m.st.model.EachRequest(func(r runmodel.Request) {
		if !r.Waits() || a.seen[r.Key()] {
			return
		}
		if d, _ := m.st.model.Delivery(m.src, r.Request, now); !d.Writable() || ro {
			return // nobody here can decide it: not this viewer's to be told about
		}
		a.seen[r.Key()] = true
		fresh = append(fresh, r.Request)
		if len(fresh) == 1 || r.FirstSeen.Before(first.FirstSeen) {
			first = r // the notification names the oldest
		}
	})
	if !m.loaded {
		return nil
	}
	if !a.primed {
		a.primed = true // what already waited at start is on screen, not news
		return nil
	}
	if len(fresh) == 0 || a.focused {
		return nil
	}
	n := m.opt.Notify
	var out strings.Builder
	if !n.NoBell {
		out.WriteString("\a")
	}
	if !n.NoDesktop {
		title := "vigil: a run waits on you"
		if len(fresh) > 1 {
			title = fmt.Sprintf("vigil: %d requests wait on you", len(fresh))
		}
		out.WriteString(desktopSeq(n, title, requestLine(first.Request, m.asker(first.RunID))))
	}
	if out.Len() == 0 {
		return nil
	}
	seq := out.String()
	a.sent = append(a.sent, seq)
	return tea.Raw(seq)
}

// requestLine names a request in a notification.
func requestLine(r store.Request, asker string) string {
	switch r.Kind {
	case store.Approval:
		return fmt.Sprintf("%s %s %s (%s)", r.Key(), r.Act, r.Target, asker)
	case store.Question:
		return fmt.Sprintf("%s: %s (%s)", r.Key(), r.Question, asker)
	}
	return fmt.Sprintf("%s: %d steps (%s)", r.Key(), len(r.PlanSteps), asker)
}

// windowTitle is "◆ N waiting · vigil" while anything waits; the store's
// name otherwise.
func (m *Model) windowTitle(plain string) string {
	if n := m.st.model.Pending(); n > 0 && !m.opt.Notify.NoTitle {
		return fmt.Sprintf("◆ %d waiting · vigil", n)
	}
	return plain
}
