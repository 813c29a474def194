// Command gen rewrites the PNGs in screenshots/: the whole screen at
// 120×32 and 200×60, each pane, and the help, drawn from the demo a
// newcomer gets (vigil demo's own seed, demo.DefaultSeed, played until it
// waits on an approval, a question and a plan at once).
//
//	go run ./screenshots/gen
//
// Frames are rendered by vigil's own model (no terminal involved) on the
// demo's own clock and label, turned into SVG by freeze
// (github.com/charmbracelet/freeze) and into PNG by resvg with JetBrains
// Mono and, for the glyphs it lacks (⇄), DejaVu Sans Mono (tools.go). Each
// PNG carries the SHA-256 of the frame it was drawn from (stamp.go):
// TestScreenshotsAreCurrent fails when a frame the code draws now is not
// the one a PNG shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-run/vigil/demo"
	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/store/ioharness"
	"github.com/vigil-run/vigil/tui"
)

const background = "#0D1117" // the dark palette's page colour

var base = time.Date(2026, 11, 29, 9, 30, 0, 0, time.UTC)

type shot struct {
	name string
	w, h int
	draw func(m *tui.Model) string
}

func main() {
	out := flag.String("out", "screenshots", "directory for the PNGs")
	keep := flag.Bool("keep", false, "keep the .ansi frames next to the PNGs")
	flag.Parse()
	if err := run(*out, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(out string, keep bool) error {
	tmp, err := os.MkdirTemp("", "vigil-shots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	frames, err := drawFrames(tmp)
	if err != nil {
		return err
	}
	tools, err := buildTools(tmp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, f := range frames {
		ansi := filepath.Join(tmp, f.name+".ansi")
		if err := os.WriteFile(ansi, []byte(f.text+"\n"), 0o644); err != nil {
			return err
		}
		svg := filepath.Join(tmp, f.name+".svg")
		cmd := exec.Command(tools.freeze, ansi, "--language", "ansi", "--output", svg, "--window=false",
			"--background", background, "--padding", "16", "--margin", "0", "--border.radius", "0",
			"--font.size", "14", "--line-height", "1.2")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("freeze %s: %v\n%s", f.name, err, b)
		}
		png := filepath.Join(out, f.name+".png")
		if b, err := exec.Command(tools.svg2png, svg, png).CombinedOutput(); err != nil {
			return fmt.Errorf("svg2png %s: %v\n%s", f.name, err, b)
		}
		if err := stampPNG(png, f.sum()); err != nil {
			return err
		}
		if keep {
			os.WriteFile(filepath.Join(out, f.name+".ansi"), []byte(f.text), 0o644)
		}
		fmt.Println("wrote", png)
	}
	return nil
}

// frame is one screenshot's frame as the model drew it.
type frame struct{ name, text string }

// drawFrames plays the demo (demo.Snapshot at demo.DefaultSeed) and draws
// each screenshot's frame with vigil's own model, on the demo's clock: the
// store is named as vigil demo names it and read at its last write, so
// the screenshots show what the demo shows.
func drawFrames(tmp string) ([]frame, error) {
	path := filepath.Join(tmp, "runs.sqlite3")
	if err := demo.Snapshot(context.Background(), path, demo.DefaultSeed, base); err != nil {
		return nil, fmt.Errorf("demo store: %w", err)
	}
	raw, err := ioharness.Open(path)
	if err != nil {
		return nil, err
	}
	src := store.Complete(raw)
	defer src.Close()
	now, err := src.LastWrite(context.Background())
	if err != nil {
		return nil, err
	}
	m := tui.New(tui.Options{Source: src, NoWatch: true, NoTick: true, StoreLabel: demo.TemporaryLabel,
		Now: func() time.Time { return now }})
	defer m.Close()
	const wait = 2 * time.Second
	m.Settle(tea.WindowSizeMsg{Width: 160, Height: 46}, wait)
	m.RunCmd(m.Init(), wait)
	m.Settle(tea.BackgroundColorMsg{Color: lipgloss.Color(background)}, wait)
	now = now.Add(2 * time.Second) // past the approval queue's misfire guard

	shots := []shot{
		{"overview-120x32", 120, 32, func(m *tui.Model) string { return m.Render() }},
		{"overview-200x60", 200, 60, func(m *tui.Model) string { return m.Render() }},
		{"runs", 110, 12, func(m *tui.Model) string { return m.RenderPane(0, 110, 12) }},
		{"tree", 90, 12, func(m *tui.Model) string { return m.RenderPane(1, 90, 12) }},
		{"timeline", 110, 18, func(m *tui.Model) string { return m.RenderPane(2, 110, 18) }},
		{"step", 100, 30, func(m *tui.Model) string { return m.RenderPane(3, 100, 30) }},
		{"drift", 110, 20, func(m *tui.Model) string { return m.RenderPane(4, 110, 20) }},
		{"approvals", 100, 30, func(m *tui.Model) string { return m.RenderPane(5, 100, 30) }},
		{"help", 120, 40, func(m *tui.Model) string {
			m.Settle(key("?"), wait)
			defer m.Settle(key("?"), wait)
			return m.Render()
		}},
	}
	var frames []frame
	for _, s := range shots {
		if s.name == "approvals" {
			// The queue on a write (the text it would put on disk), after
			// the misfire guard has let go so the footer shows the keys.
			m.Settle(key("6"), wait)
			for i := 0; i < 4 && !strings.Contains(m.RenderPane(5, 100, 30), "content to be written"); i++ {
				m.Settle(key("j"), wait)
			}
			now = now.Add(2 * time.Second) // a new request in view arms the guard again
		}
		m.Settle(tea.WindowSizeMsg{Width: s.w, Height: s.h}, wait) // panes drawn alone are sized by RenderPane
		frames = append(frames, frame{s.name, s.draw(m)})
	}
	return frames, nil
}

func key(k string) tea.KeyPressMsg {
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}
