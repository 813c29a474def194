// Command agentclis installs the agent CLIs vigil's tests drive (Claude
// Code, Codex, Gemini CLI, opencode), at their pinned versions, from npm
// into the cache the tests read ($VIGIL_AGENT_CLIS or the user's cache
// directory). Installed ones are kept; the installs run side by side.
//
//	go run ./tools/agentclis          # install what is missing
//	go run ./tools/agentclis -list    # say where each is, installed or not
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"

	"github.com/vigil-run/vigil/internal/agentclis"
)

func main() {
	list := flag.Bool("list", false, "list the pinned CLIs and where they are installed; install nothing")
	flag.Parse()
	cache, err := agentclis.CacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentclis:", err)
		os.Exit(1)
	}
	if *list {
		for _, c := range agentclis.Pinned {
			state := "not installed"
			if c.Installed(cache) {
				state = "installed"
			}
			fmt.Printf("%-12s %-30s %s: %s\n", c.Name, c.Spec(), state, c.Path(cache))
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, len(agentclis.Pinned))
	logs := make([]bytes.Buffer, len(agentclis.Pinned))
	for i, c := range agentclis.Pinned {
		wg.Go(func() { errs[i] = c.Install(ctx, cache, &logs[i]) })
	}
	wg.Wait()
	failed := false
	for i, c := range agentclis.Pinned {
		if errs[i] != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "agentclis: %v\n%s", errs[i], logs[i].String())
			continue
		}
		fmt.Printf("%s %s: %s\n", c.Name, c.Version, c.Path(cache))
	}
	if failed {
		os.Exit(1)
	}
}
