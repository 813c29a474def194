// Command gen rewrites the PNGs in screenshots/: the whole screen at
// 120×32 and 200×60, each pane, and the help, drawn from the demo a
// newcomer gets (vigil demo's own seed, demo.DefaultSeed, played until it
// waits on an approval, a question and a plan at once).
//
//	go run ./screenshots/gen
//
// Frames are rendered by vigil's own model (no terminal involved) and
// turned into PNGs by freeze (github.com/charmbracelet/freeze), run through
// `go run` in a scratch module so it stays out of vigil's go.mod. freeze
// v0.2.2 pins a wazero that crashes on Go 1.26; the scratch module lifts it
// to v1.12.0.
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

const (
	freezeVersion = "v0.2.2"
	wazeroVersion = "v1.12.0"
	background    = "#0D1117" // the dark palette's page colour
)

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
	path := filepath.Join(tmp, "runs.sqlite3")
	if err := demo.Snapshot(context.Background(), path, demo.DefaultSeed, base); err != nil {
		return fmt.Errorf("demo store: %w", err)
	}
	src, err := ioharness.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	now := base.Add(25 * time.Minute)
	m := tui.New(tui.Options{Source: store.Complete(src), NoWatch: true, NoTick: true, StoreLabel: "~/shop/runs.sqlite3",
		Now: func() time.Time { return now }})
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
		{"help", 120, 32, func(m *tui.Model) string {
			m.Settle(key("?"), wait)
			defer m.Settle(key("?"), wait)
			return m.Render()
		}},
	}
	freeze, err := buildFreeze(tmp)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
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
		frame := s.draw(m)
		ansi := filepath.Join(tmp, s.name+".ansi")
		if err := os.WriteFile(ansi, []byte(frame+"\n"), 0o644); err != nil {
			return err
		}
		png := filepath.Join(out, s.name+".png")
		cmd := exec.Command(freeze, ansi, "--language", "ansi", "--output", png, "--window=false",
			"--background", background, "--padding", "16", "--margin", "0", "--border.radius", "0",
			"--font.size", "14", "--line-height", "1.2")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("freeze %s: %v\n%s", s.name, err, b)
		}
		if keep {
			os.WriteFile(filepath.Join(out, s.name+".ansi"), []byte(frame), 0o644)
		}
		fmt.Println("wrote", png)
	}
	return nil
}

// buildFreeze builds freeze in a scratch module (go build with the module
// proxy, like go run) and returns the binary's path.
func buildFreeze(dir string) (string, error) {
	mod := filepath.Join(dir, "freeze-mod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return "", err
	}
	gomod := "module freezebuild\n\ngo 1.26\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "freeze")
	for _, args := range [][]string{
		{"get", "github.com/charmbracelet/freeze@" + freezeVersion, "github.com/tetratelabs/wazero@" + wazeroVersion},
		{"build", "-o", bin, "github.com/charmbracelet/freeze"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", args[0], err, b)
		}
	}
	return bin, nil
}

func key(k string) tea.KeyPressMsg {
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}
