// Package hookroute finds the pane a hook event belongs to for the
// providers whose hooks may run in another pane's process (the
// provider.SessionRouter capability; seed 004 calls it "Codex routing",
// after the one provider that needs it today): one Router per such
// provider, whose hints (which processes are the agent, which file a
// session holds open and what it says, which launch resumes a session)
// come from the provider's package. It names no provider: the rules below
// speak of Codex because Codex is why they exist.
//
// Codex runs hooks from a process that may have been started by
// another pane, so a Codex event's capability and surface id prove nothing;
// the pane is worked out from the event's session id alone, by five ordered
// rules:
//
//  1. a pane whose own Codex process has that session's rollout file open
//     (the pane's own process: see below for the daemon, which does not
//     count);
//  2. the pane the session was bound to by an earlier event;
//  3. a pane started with `codex resume <session-id>`;
//  4. the only Codex pane without a binding whose working directory equals
//     the `cwd` of the rollout's session_meta, for interactive sessions only
//     (provider.SessionInfo.Interactive: not `codex exec`, sub-agents or
//     desktop-app threads);
//  5. on SessionStart or UserPromptSubmit only: the only Codex pane in that
//     directory, when it is held by a binding that may be out of date (after
//     /new or a resume inside the Codex screen). Interactive sessions only,
//     as in rule 4, so that a sub-agent cannot steal its parent's pane.
//
// When a rule matches more than one pane the event is refused (ErrAmbiguous)
// and later rules are not tried; when none matches it is refused (ErrNoPane).
// Nothing is ever guessed.
//
// A "Codex pane" is a pane whose process, or one of its descendants, is a
// running Codex process (provider.SessionRouter.IsAgentProcess) of its own:
// a shared process (SharedProcess: Codex's app-server daemon) and its
// children are nobody's. Codex 0.169 typed as `codex` (without --no-daemon)
// starts the daemon as a child of the first TUI that needs it; the daemon
// then holds every session's rollout open and runs every pane's hooks,
// while the TUIs hold no rollout. Counting it as the first pane's agent
// routed a second pane's session to the first. Now two such panes in one
// directory are refused until one of them can be told apart (a binding, a
// resume launch, or the other pane being the only unbound one).
// A binding ends when its pane closes, when the pane's Codex process is
// replaced (its pid changes), or when rule 5 moves the pane to another
// session. Bindings live in memory only: panes do not survive the daemon.
//
// The rollout of a session (found by the codex package, the one lookup of a
// rollout by id) is written when the first prompt is submitted, so events
// before that (the SessionStart of a fresh session) can match only rules 2
// and 3.
package hookroute
