package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/views"
)

// Opening and copying what is selected. The open keys write the focused
// pane's selection to a private temporary file and run $PAGER (or $EDITOR)
// on it, the explorer suspended meanwhile (Bubble Tea's ExecProcess gives
// the terminal over and takes it back); the file is removed when the
// program exits. The copy keys put the selection on the clipboard with
// OSC 52, which a terminal (and tmux, and ssh) passes to the system's. The
// status bar confirms both. What is opened or copied is store text made
// safe the way the panes make it (no escape sequences or control
// characters reach the pager, the editor or the clipboard).

// noticeFor is how long a confirmation stays in the status bar.
const noticeFor = 5 * time.Second

// notice is a confirmation in the status bar.
func (m *Model) notice(format string, a ...any) {
	m.noticeText, m.noticeAt = fmt.Sprintf(format, a...), m.now()
}

// noticeShown is the confirmation to show now ("" when none).
func (m *Model) noticeShown() string {
	if m.noticeText == "" || m.now().Sub(m.noticeAt) > noticeFor {
		return ""
	}
	return m.noticeText
}

// openReadyMsg: the text to open is written to path.
type openReadyMsg struct {
	path, what string
	editor     bool
	err        error
}

// openDoneMsg: the pager or editor exited.
type openDoneMsg struct {
	path, what string
	err        error
}

// openKeys runs the open and copy keys; ok is false for any other key.
func (m *Model) openKeys(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.env.Keys
	switch {
	case key.Matches(msg, km.Page):
		return m.open(false, false), true
	case key.Matches(msg, km.Edit):
		return m.open(true, false), true
	case key.Matches(msg, km.PagePrompt):
		return m.open(false, true), true
	case key.Matches(msg, km.Copy):
		return m.copySelection(false), true
	case key.Matches(msg, km.CopyPrompt):
		return m.copySelection(true), true
	case key.Matches(msg, km.Open) && m.focus == paneApprovals && m.approvals.OpensWhole():
		return m.open(false, false), true // the request whole, as o opens it
	}
	return nil, false
}

// shownStep is the step the detail pane holds, if it is the one selected
// in the timeline (the detail follows the timeline's cursor).
func (m *Model) shownStep() (*store.StepDetail, string) {
	st, ok := m.timeline.Selected()
	if !ok {
		return nil, "no step is selected"
	}
	d := m.detail.Detail()
	if d == nil || d.RowID != st.RowID {
		return nil, fmt.Sprintf("step %d is still being read", st.Number)
	}
	return d, ""
}

// open writes the focused pane's selection (or the selected step's prompt)
// to a file in a command, then opens it.
func (m *Model) open(editor, prompt bool) tea.Cmd {
	what, text, runID, why := m.openTarget(prompt)
	if why != "" {
		m.notice("nothing to open: %s", why)
		return nil
	}
	src := m.src
	whole := m.wholeStep(prompt, runID)
	return func() tea.Msg {
		f, err := os.CreateTemp("", "vigil-*.txt") // 0600: store text stays private
		if err != nil {
			return openReadyMsg{err: err}
		}
		defer f.Close()
		switch {
		case runID != "":
			err = writeTrace(src, runID, f)
		case whole != nil:
			err = whole(f)
		default:
			_, err = io.WriteString(f, text)
		}
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			os.Remove(f.Name())
			return openReadyMsg{err: err}
		}
		return openReadyMsg{path: f.Name(), what: what, editor: editor}
	}
}

// openTarget is what the open keys open in the focused pane: its title,
// and either the text or the run whose trace to write; why says why there
// is nothing.
func (m *Model) openTarget(prompt bool) (what, text, runID, why string) {
	if prompt {
		d, why := m.shownStep()
		if d == nil {
			return "", "", "", why
		}
		if d.Prompt == "" {
			return "", "", "", fmt.Sprintf("step %d recorded no prompt", d.Number)
		}
		return fmt.Sprintf("step %d's prompt", d.Number), sanitize.Text(d.Prompt) + "\n", "", ""
	}
	switch m.focus {
	case paneRuns:
		if it, ok := m.runs.Selected(); ok {
			return "run #" + store.DisplayID(it.Run.ID), "", it.Run.ID, ""
		}
		return "", "", "", "no run is selected"
	case paneAgents:
		if id := m.tree.Selected(); id != "" {
			return "run #" + store.DisplayID(id), "", id, ""
		}
		return "", "", "", "no agent is selected"
	case paneTimeline, paneStep:
		d, why := m.shownStep()
		if d == nil {
			return "", "", "", why
		}
		return fmt.Sprintf("step %d", d.Number), views.StepText(d), "", ""
	case paneApprovals:
		if it, ok := m.approvals.Current(); ok {
			return sanitize.Line(it.Req.Key().String()), views.RequestText(it), "", ""
		}
		return "", "", "", "no request waits"
	}
	return "", "", "", "the drift pane has no text of its own to open (open a step from the timeline)"
}

// writeTrace writes a run's canonical trace (the format's own, or
// vigil's steps trace where it has none: store.Complete), made safe, a
// piece at a time where the store can.
func writeTrace(src source, runID string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	safe := sanitize.TextWriter(w)
	if err := src.WriteCanonicalTrace(ctx, runID, safe); err != nil {
		return err
	}
	return safe.Close()
}

// onOpenReady runs the pager or editor on the file, the explorer suspended.
func (m *Model) onOpenReady(msg openReadyMsg) tea.Cmd {
	if msg.err != nil {
		m.notice("could not open: %s", sanitize.Line(msg.err.Error()))
		return nil
	}
	c := viewerCommand(msg.editor, msg.path)
	path, what := msg.path, msg.what
	return tea.ExecProcess(c, func(err error) tea.Msg { return openDoneMsg{path: path, what: what, err: err} })
}

// onOpenDone removes the file and says how it went.
func (m *Model) onOpenDone(msg openDoneMsg) {
	os.Remove(msg.path)
	if msg.err != nil {
		m.notice("%s: the viewer failed: %s", msg.what, sanitize.Line(msg.err.Error()))
		return
	}
	m.notice("closed %s", msg.what)
}

// viewerCommand runs $PAGER (less by default) or $VISUAL / $EDITOR (vi)
// on a file, through the shell as git does, so a setting with arguments
// ("less -S", "code --wait") works.
func viewerCommand(editor bool, path string) *exec.Cmd {
	prog := os.Getenv("PAGER")
	if prog == "" {
		prog = "less"
	}
	if editor {
		prog = os.Getenv("VISUAL")
		if prog == "" {
			prog = os.Getenv("EDITOR")
		}
		if prog == "" {
			prog = "vi"
		}
	}
	return exec.Command("/bin/sh", "-c", prog+` "$1"`, "vigil-viewer", path)
}

// copySelection puts the focused pane's tool call, command or goal (or the
// selected step's prompt) on the clipboard.
func (m *Model) copySelection(prompt bool) tea.Cmd {
	what, text, why := m.clipTarget(prompt)
	if why != "" {
		m.notice("nothing to copy: %s", why)
		return nil
	}
	m.notice("copied %s (%s bytes, OSC 52)", what, textfmt.Thousands(int64(len(text))))
	return tea.SetClipboard(text)
}

// clipTarget is what the copy keys copy in the focused pane.
func (m *Model) clipTarget(prompt bool) (what, text, why string) {
	if prompt || m.focus == paneTimeline || m.focus == paneStep {
		d, why := m.shownStep()
		if d == nil {
			return "", "", why
		}
		if prompt {
			if d.Prompt == "" {
				return "", "", fmt.Sprintf("step %d recorded no prompt", d.Number)
			}
			return fmt.Sprintf("step %d's prompt", d.Number), sanitize.Text(d.Prompt), ""
		}
		call := d.ToolCallFull
		if call == "" {
			call = d.ToolCall
		}
		if call == "" {
			return "", "", fmt.Sprintf("step %d made no tool call", d.Number)
		}
		return fmt.Sprintf("step %d's tool call", d.Number), sanitize.Text(call), ""
	}
	switch m.focus {
	case paneRuns, paneAgents:
		id := m.tree.Selected()
		if m.focus == paneRuns {
			it, ok := m.runs.Selected()
			if !ok {
				return "", "", "no run is selected"
			}
			id = it.Run.ID
		}
		r, ok := m.st.model.Run(id)
		if !ok {
			return "", "", "no run is selected"
		}
		return "run #" + store.DisplayID(r.ID) + "'s goal", sanitize.Text(r.Goal), ""
	case paneApprovals:
		it, ok := m.approvals.Current()
		if !ok {
			return "", "", "no request waits"
		}
		what := sanitize.Line(it.Req.Key().String())
		if it.Req.Kind == store.Approval {
			what += "'s " + strings.ToLower(sanitize.Line(it.Req.Act))
		}
		return what, views.RequestClip(it), ""
	}
	return "", "", "the drift pane has nothing to copy"
}

// TookTerminal reports whether msg ends a time the explorer gave its
// terminal to another program (the open keys' pager or editor): a program
// that draws the explorer's frames itself (vigil serve) sets the
// terminal's modes again and draws the next frame whole.
func TookTerminal(msg tea.Msg) bool {
	_, ok := msg.(openDoneMsg)
	return ok
}

// wholeStep, when the step (or prompt) being opened has a field cut to its
// head that the store can write whole, is what writes it to the file: the
// step's text with each such field copied from the store a piece at a
// time, made safe, never held whole (a 200 MB result). Otherwise nil.
func (m *Model) wholeStep(prompt bool, runID string) func(io.Writer) error {
	if runID != "" || !(prompt || m.focus == paneTimeline || m.focus == paneStep) {
		return nil
	}
	d, _ := m.shownStep()
	fw := m.src.Source
	if d == nil || !fw.Capabilities().Has(store.CapFields) || len(d.FieldBytes) == 0 {
		return nil
	}
	if _, cut := d.FieldBytes["prompt"]; prompt && !cut {
		return nil
	}
	parts := []views.StepPart{{Field: "prompt"}, {Text: "\n"}}
	if !prompt {
		parts = views.StepParts(d)
	}
	runID, rowID := d.RunID, d.RowID
	return func(w io.Writer) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, p := range parts {
			if p.Field == "" {
				if _, err := io.WriteString(w, p.Text); err != nil {
					return err
				}
				continue
			}
			safe := sanitize.TextWriter(w)
			if err := fw.WriteStepField(ctx, runID, rowID, p.Field, safe); err != nil {
				return err
			}
			if err := safe.Close(); err != nil {
				return err
			}
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		return nil
	}
}
