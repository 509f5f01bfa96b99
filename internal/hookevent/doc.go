// Package hookevent is `muster hook event PROVIDER`, the hook helper of the
// agent event protocol (seed 004, DESIGN §4): it reads one native hook
// payload of Claude Code, Codex, Gemini CLI, Cursor CLI or OpenCode on
// stdin, maps it to an event kind (or ignores it), and sends the event to
// the events socket of the pane it runs in. It owns the mapping, the run and
// event ids and a tiny per-session memory; it does not own the wire types
// (package proto) nor the socket's server (the daemon).
//
// The helper runs once per hook, so its import graph is kept small (no
// cobra, no SQLite, no TUI): it is the whole of cmd/muster-hook, whose test
// fails when that graph grows. `muster hook event` runs the same code from
// the muster binary, as a fallback for installations without muster-hook.
//
// # Contract with the provider
//
// Exit status 0 on every path (an exit of 2 would block Claude Code, Codex
// and Gemini); nothing on stdout except `{}` for Cursor and Gemini, which
// parse it as JSON; silence when the daemon is down or when the pane
// environment (MUSTER_EVENT_SOCKET, MUSTER_SURFACE_ID,
// MUSTER_EVENT_CAPABILITY) is absent, because globally installed hooks also
// fire outside Muster; one warning line on stderr for a payload it cannot
// read (not JSON, not an object, no hook name, over 32 MiB). A payload over
// 1 MiB (a tool's output of megabytes) keeps its event: its long strings
// are cut until it fits. Codex events are sent even without the pane
// variables: the daemon routes them by session id and falls back to the
// default socket of internal/paths.
// MUSTER_AGENT_SESSION_ID is not part of the envelope: the daemon knows
// which session a surface hosts. MUSTER_HOOK_DEBUG=1 prints what was sent or
// why not on stderr.
//
// # Transport
//
// One connection per event, the JSON envelope plus a newline, one JSON line
// back; every attempt bounded by a 1 s timeout, one retry after 50 ms on a
// connect error with the same envelope.
//
// # Run ids
//
// A run is one prompt turn. Its id is a UUIDv5 (TurnRunID) of the provider's
// own turn identifier, so that a retried hook and the daemon's native turn
// estimator land on the same run:
//
//	Claude Code  prompt_id (on every hook of the turn since 2.1)
//	Codex        turn_id
//	Cursor       conversation_id + "/" + generation_id
//	OpenCode     sessionID + "/" + the user message id
//	Gemini CLI   none: session + BeforeAgent's timestamp + prompt
//
// Hooks that carry no turn identifier (every Gemini hook after BeforeAgent,
// OpenCode's session.status/idle/error, SessionEnd everywhere) take the run
// from the session's state; with no state at all they fall back to the
// session and the prompt, or to the session alone.
//
// # Event ids
//
// A UUIDv5 of the run, the hook name, the kind and the SHA-256 of the raw
// payload: stable across the helper's own retry and across a provider
// re-running a hook with the same payload.
//
// # Session state
//
// One JSON file per (provider, session) in StateDir (the runtime dir,
// mode 0700), locked with flock while an invocation reads it, sends the
// events and rewrites it, deleted at SessionEnd. It records only what the
// daemon was told: when the daemon refuses an event (forbidden, over
// quota, malformed) the file is left as it was. It remembers the current run, whether it is open,
// the last kind sent and whether an approval was reported. That lets the
// helper
//   - give Gemini and OpenCode hooks their turn's run;
//   - close a turn that ended without a terminal hook (Esc, a denied
//     permission: Claude Code and Codex send no Stop then) as `interrupted`
//     when the next prompt starts a new turn;
//   - send `started` first when a hook names a turn it never saw start
//     (hooks installed mid-turn), so that started precedes every waiting
//     or terminal event of a run, and drop late hooks of earlier turns;
//   - drop Claude Code's Notification(permission_prompt), which arrives about
//     6 s after the PermissionRequest of the same approval (or after it was
//     answered), when that PermissionRequest was already reported; without
//     state it is sent on the same run, and the daemon keeps one attention
//     item per (run, reason);
//   - send `running` only when it changes something (after an approval or
//     input request), not on every tool call;
//   - send nothing more for a run already ended (Gemini's second SessionEnd,
//     OpenCode's repeated session.idle and late user-message updates);
//   - ignore OpenCode sub-agent sessions (session.created with a parentID).
//
// Without a usable state directory the helper still sends every mapped
// event; only these refinements are lost.
//
// # Mappings
//
// What a payload means (an intent: the hook, the session, the turn key and
// an action such as turn start, running, approval or success) is the
// provider's: internal/provider/<name>/<name>hook, registered in
// internal/provider/all/hooks, whose doc comments hold the per-provider
// tables. This package applies the state rules above to intents, the same
// for every provider. SessionStart is ignored everywhere: a session
// starting is not a run (Codex even fires it only with the first prompt),
// and a `started` there would leave a run "running" until the first
// prompt.
package hookevent
