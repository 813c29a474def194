package views

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigil-run/vigil/internal/sanitize"
	"github.com/vigil-run/vigil/internal/textfmt"
	"github.com/vigil-run/vigil/store"
)

// Doing is what one agent is doing now, read from the newest events of its
// live stream: the work inside a step that has not committed yet.
type Doing struct {
	RunID string
	Kind  store.LiveKind
	Text  string    // in words: "model streaming 1.2 KB", "running read_file notes.txt"
	Since time.Time // when it began
	Until time.Time // a retry: when the next attempt is due
}

// NowDoing reads an agent's newest stream events (oldest first) and says
// what it is doing: the last event, with a run of streamed chunks taken
// together. ok is false when the stream says nothing is under way (the run
// finished) or holds nothing.
func NowDoing(evs []store.RunEvent) (Doing, bool) {
	if len(evs) == 0 {
		return Doing{}, false
	}
	last := evs[len(evs)-1]
	d := Doing{RunID: last.RunID, Kind: last.Kind, Since: last.At}
	switch last.Kind {
	case store.LiveFinished:
		return Doing{}, false
	case store.LiveModel:
		size, text := 0, ""
		i := len(evs) - 1
		for ; i >= 0 && evs[i].Kind == store.LiveModel; i-- {
			size += evs[i].Size
			if evs[i].Text != "" && text == "" {
				text = evs[i].Text
			}
		}
		d.Since = evs[i+1].At
		d.Text = "model streaming"
		if text == "thinking" {
			d.Text = "model thinking"
		} else if text != "" {
			d.Text = "model: " + text
		}
		if size > 0 {
			d.Text += " " + bytesText(size)
		}
	case store.LiveTool:
		d.Text = "running " + last.Text
	case store.LiveRetry:
		d.Text = "retrying after " + last.Text
		if last.Wait > 0 {
			d.Until = last.At.Add(last.Wait)
		}
	case store.LiveWaiting:
		d.Text = "waiting on " + last.Text
	case store.LiveDecided:
		d.Text = "decided: " + last.Text
	case store.LiveStep:
		d.Text = fmt.Sprintf("committed step %d", last.Step)
	case store.LiveStarted:
		d.Text = "started"
		if last.Text != "" {
			d.Text += " on " + last.Text
		}
	case store.LiveSpawned:
		d.Text = "spawned " + last.Text
	case store.LiveProcess:
		d.Text = "process " + last.Text
	case store.LiveGate:
		d.Text = "gate: " + last.Text
	default:
		d.Text = strings.TrimSpace(last.Name + " " + last.Text)
	}
	return d, true
}

// glyph marks what an agent is doing in the strip.
func (d Doing) glyph() string {
	switch d.Kind {
	case store.LiveModel:
		return "✎"
	case store.LiveTool, store.LiveProcess:
		return "⚙"
	case store.LiveRetry:
		return "↩"
	case store.LiveWaiting:
		return "◆"
	case store.LiveStep:
		return "✓"
	}
	return "▸"
}

// line is the agent's part of the strip: "#5 ✎ model streaming 1.2 KB 4s".
func (d Doing) line(now time.Time) string {
	s := sanitize.Line("#"+store.DisplayID(d.RunID)) + " " + d.glyph() + " " + sanitize.Line(d.Text)
	switch {
	case !d.Until.IsZero() && d.Until.After(now):
		s += " in " + textfmt.Duration(d.Until.Sub(now).Round(100*time.Millisecond))
	case !d.Since.IsZero() && now.Sub(d.Since) >= time.Second:
		s += " · " + textfmt.Duration(now.Sub(d.Since).Truncate(time.Second))
	}
	return s
}

func bytesText(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}
