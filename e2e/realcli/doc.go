// Package realcli runs the real agent CLIs (Claude Code, Codex, Gemini CLI)
// offline against the fake model servers of internal/testing/fakemodel.
//
// It owns what end-to-end tests need before Muster is involved: installing
// the pinned npm releases into a cache outside the checkout (Install), and
// building a hermetic world for one run of one CLI (New): a temporary HOME
// and TMPDIR, the CLI's first-run state pre-seeded the way the CLI itself
// records it after the user answers its dialogs, auto-update switched off,
// and the CLI pointed at a fake model server that the test scripts.
//
// Its tests drive each CLI twice: in tmux with a hook logger, which proves
// the harness without Muster, and in a Muster pane through muster's own
// commands (the scenarios of issue 6). README.md records what they found
// about each CLI and where the real CLIs made Muster change.
//
// The suite runs with `go test ./...`. It needs npm and node; without them
// it fails and says so, even with a warm cache. MUSTER_SKIP_REALCLI=1 skips
// it, and MUSTER_REALCLI_CACHE moves the install cache (default
// $XDG_CACHE_HOME/muster-realcli, else ~/.cache/muster-realcli).
package realcli
