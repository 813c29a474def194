package tui

import (
	"os"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	_ "github.com/vigil-run/vigil/store/ioharness"
)

func TestZZProf(t *testing.T) {
	p := os.Getenv("ZZSTORE")
	if p == "" {
		t.Skip()
	}
	start := time.Now()
	src, err := store.Open(p, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Source: src, NoWatch: true, NoTick: true})
	m.Settle(tea.WindowSizeMsg{Width: 160, Height: 45}, time.Minute)
	m.RunCmd(m.Init(), time.Minute)
	s := m.Render()
	t.Logf("first frame after %v (%d bytes)", time.Since(start), len(s))
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		m.RunCmd(refresh(m.src, m.cursor), time.Minute)
		t.Logf("a refresh: %v", time.Since(t0))
	}
}
