// Command dryfire tests LLM agents offline, deterministically and fast.
// See docs/ for the suite format and the commands.
package main

import (
	"os"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
