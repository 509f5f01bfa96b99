// Command muster is a terminal workspace for coding agents.
package main

import (
	"context"
	"os"

	"github.com/musterhq/muster/internal/cli"
	"github.com/musterhq/muster/internal/hookevent"
)

func main() {
	// `muster hook event` is the fallback hook helper when muster-hook is
	// not installed beside this binary; skip building the command tree.
	if hookevent.FastPath(os.Args[1:], os.Getenv) {
		os.Exit(hookevent.Main(os.Args[3:]))
	}
	os.Exit(cli.Main(context.Background(), os.Args[1:]))
}
