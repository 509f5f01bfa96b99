// Package runstate is the pure reducer of seed 004: it turns agent events
// into run states per run, per surface and per session, and decides which
// attention items open and resolve. It does no I/O and reads no clock: every
// time comes from the events or from the caller's now, so tests drive it with
// a fake clock.
//
// Rules (DESIGN §4, seed 004):
//
//   - A run is keyed by (Muster session id, run id). Its first event starts
//     it; a waiting, running or terminal event for an unknown run implies the
//     start (ImpliedStart). `started` moves a new run to running and is
//     evidence only for a run that already exists.
//   - running, waitingInput and waitingApproval move freely among themselves
//     (running is how work resumes after input or approval). succeeded,
//     failed, interrupted and disconnected are final for their run: later
//     events are recorded but change nothing (EffectFinal).
//   - Events are ordered by their time (Event.At): the client's occurredAt,
//     capped at the moment the daemon received the event. A date in the
//     future therefore counts as "now" and cannot keep its run current or
//     make later events late; the evidence keeps the date the client sent.
//   - An event whose time is older than the newest event already
//     applied to its run is late: it never moves the run backwards
//     (EffectLate). A late terminal event still ends the run, because ending
//     is forward; a late event that predates the run's start moves StartedAt
//     earlier. Events with equal times apply in arrival order.
//   - The current run of a session (and of a surface) is the one whose newest
//     applied event is newest (arrival order breaks ties). When a new run
//     becomes current, the previous current run has moved on: its open
//     attention items resolve ("superseded").
//   - idle is derived, never stored: the session's current run is terminal
//     and nothing arrived for the session for Rules.IdleAfter (default two
//     minutes: long enough that a script waiting for `succeeded` sees it,
//     short enough that a finished session reads as idle on return) after
//     its end. Views keep the terminal state under it (View.Terminal).
//   - A new run that becomes current leaves an older unfinished run as it
//     is: only the hook helper (which synthesizes `interrupted` for a run a
//     new prompt replaced), the pane closing or the startup sweep end it.
//
// The board changes in place, one event at a time, after the event is
// durably recorded (the event writer in internal/events); Preview tells the
// writer what effect each queued event will have, to store with it, without
// changing the board. Changes lists what to persist in the next
// snapshot.
//
// Attention items open only for the current run and only for: approval
// requests, input requests, failures, disconnects, and successful runs that
// lasted at least Rules.LongRun (five minutes; a run of exactly five minutes
// qualifies). There is at most one open item per (run, reason): Claude's
// Notification(permission_prompt) that follows PermissionRequest for the same
// approval confirms the open item instead of opening a second one. An item
// resolves when its run moves to another state, when a newer run of its
// session becomes current, or when the user acknowledges it; a disconnected
// item also when the user resumes the session (Resumed). Resolved items
// stay listed for Rules.ResolvedTTL (24 hours) and are then pruned.
//
// Seed 000 adds one more kind, outside any run: a pane's terminal asking
// for attention (OSC 9, 777, 99 notifications, the bell) opens a
// `notification` item (Notify). A session has at most one open: a burst
// merges into it, newest text first; it is not opened while the session
// already has an open approval or input item (the same request seen twice),
// and it resolves when an approval or input item opens, when a new run
// becomes current, or on acknowledgement.
package runstate
