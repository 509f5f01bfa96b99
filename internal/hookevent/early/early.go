// Package early runs `muster hook event …` while the muster binary is still
// initializing its packages, and exits, so that a hook does not pay for the
// package initialization of everything else the binary links (SQLite, the
// terminal emulator, templates): agents run the helper on every hook.
//
// Go initializes packages in dependency order, choosing among the ready ones
// by import path (the language spec since Go 1.21), so this package, which
// only needs internal/hookevent and the standard library, runs before
// modernc.org/… and most of Muster's own packages. Only cmd/muster imports
// it, as a blank import.
package early

import (
	"os"

	"github.com/musterhq/muster/internal/hookevent"
)

func init() {
	if hookevent.FastPath(os.Args[1:], os.Getenv) {
		os.Exit(hookevent.Main(os.Args[3:]))
	}
}
