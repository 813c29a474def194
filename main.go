// Command vigil is a terminal explorer for durable AI-agent runs.
package main

import (
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-run/vigil/store"
	"github.com/vigil-run/vigil/tui"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: vigil STORE")
		os.Exit(2)
	}
	path := os.Args[1]
	src, err := store.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vigil:", err)
		os.Exit(1)
	}
	m := tui.New(tui.Options{Source: src, NoColor: os.Getenv("NO_COLOR") != "",
		Reopen: func() (store.Source, error) { return store.Open(path) }})
	if _, err := tea.NewProgram(m).Run(); err != nil {
		fmt.Fprintln(os.Stderr, "vigil:", err)
		os.Exit(1)
	}
	m.Close()
}
