// Command vigil is a terminal explorer for durable AI-agent runs.
package main

import (
	"os"

	"github.com/vigil-run/vigil/cli"
)

func main() {
	os.Exit(cli.Execute())
}
