// Command muster-hook is the hook helper agents run on every hook event:
// `muster-hook event PROVIDER` reads one native hook payload on stdin and
// reports it to the pane's events socket (package hookevent). It is a
// binary of its own so that a hook pays only for what it uses: the muster
// binary links SQLite, the terminal emulator and the command tree, whose
// package initialization alone costs several times a hook's real work.
// `muster hooks setup` installs it when it sits beside the muster binary
// (`go install ./cmd/...` puts it there) and falls back to
// `muster hook event` otherwise.
//
// Like `muster hook event`, it always exits 0: a hook that fails or exits 2
// would disturb or even block the agent.
package main

import (
	"fmt"
	"os"

	"github.com/musterhq/muster/internal/hookevent"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "event" {
		fmt.Fprintln(os.Stderr, "usage: muster-hook event PROVIDER")
		os.Exit(0)
	}
	os.Exit(hookevent.Main(args[1:]))
}
