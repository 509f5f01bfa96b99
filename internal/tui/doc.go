// Package tui is the dashboard that `muster` with no command opens: the
// session list with run states, the attention drawer, the sessions that
// can be restored after the daemon restarted, each with its reason, and a
// live preview of the selected pane. The sessions and the drawer are what
// op "watch" pushes as they change (watch.go), and the preview is what the
// daemon's emulator holds, pushed by op "preview" when the screen changes
// (preview.go): the dashboard asks the daemon for neither again and never
// reads a pane itself. When the watch breaks (the daemon stopped or was
// killed) it says so and dials again until a daemon answers, whose first
// push replaces everything shown. Beside the panes it lists the agents the
// CLIs' own supervisors run (ExternalSource, external.go: Claude Code's
// `claude --bg`), asked for off the UI loop every few seconds; the
// actions that work on a pane by name refuse them, and enter joins one
// in a pane with the CLI's own attach.
//
// One top-level Model owns all state and the message switch; the sections
// are plain structs with a Render(width int) string method. Update does no
// I/O: every daemon call runs in a tea.Cmd through a Backend, and the result
// comes back as a message. The package knows nothing of sockets or of the
// command tree; internal/cli supplies the Backend over control.sock and
// runs the attach when the dashboard hands a session back (Run returns its
// name), then opens the dashboard again.
//
// Styling uses charmbracelet/x/ansi directly rather than lipgloss: lipgloss's
// package initialisation probes the terminal (terminfo, and `tmux info` as a
// subprocess inside tmux) for every muster command, dashboard or not.
package tui
