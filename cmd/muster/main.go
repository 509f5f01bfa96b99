// Command muster is a terminal workspace for coding agents.
package main

import (
	"context"
	"os"

	"github.com/musterhq/muster/internal/cli"
	"github.com/musterhq/muster/internal/hookevent"
)

func main() {
	if hookFastPath(os.Args[1:], os.Getenv) {
		os.Exit(hookevent.Main(os.Args[3:]))
	}
	os.Exit(cli.Main(context.Background(), os.Args[1:]))
}

// hookFastPath reports whether args are a `muster hook event …` invocation
// that can skip the command tree: agents run it on every hook, and building
// cobra's tree, the signal handler and the terminal probes of cli.Main is
// time the agent waits for. Help requests still go through cobra, and
// MUSTER_HOOK_FASTPATH=0 forces the slow path (for bench/hook.sh).
func hookFastPath(args []string, getenv func(string) string) bool {
	if len(args) < 2 || args[0] != "hook" || args[1] != "event" || getenv("MUSTER_HOOK_FASTPATH") == "0" {
		return false
	}
	for _, a := range args[2:] {
		if a == "-h" || a == "--help" || a == "help" {
			return false
		}
	}
	return true
}
