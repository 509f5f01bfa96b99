// Package events is the agent event engine of seed 004 that the daemon
// embeds: the events.sock server, per-surface capabilities, Codex routing,
// the writer that commits events to the store, the run-state reducer
// (internal/runstate), attention items with their notification command,
// the startup sweep, and the control ops attention, ack, wait and explain.
//
// # Protocol decisions (DESIGN §4 fixes the wire; these fill its gaps)
//
//   - One request per connection: UTF-8 JSON terminated by '\n', at most
//     64 KiB newline included (larger: too_large), decoded and validated by
//     proto.DecodeEnvelope, the counterpart of the helper's encoder. A
//     request that ends at EOF without a newline is accepted when it is
//     complete JSON. The whole request must arrive within
//     Config.ReadTimeout (500 ms, well under the hook helper's 1 s) of the
//     accept, however it is dribbled, or the answer is `timeout`. Anything after the newline is ignored. A peer of
//     another uid is answered `unauthorized`.
//   - Load: connections are accepted as fast as they come. At most
//     Config.MaxConns (1024) are open at once, and Config.MaxConnsPerPeer
//     (64) from one process (SO_PEERCRED pid). At a cap, the oldest
//     connection whose request has not arrived yet (of that process, or of
//     anyone) is closed without an answer to make room; when every one is
//     past that point, the new connection is closed instead. So thousands of
//     idle or slow clients cannot keep a real hook out: its connection is
//     the newest.
//   - Quota: each surface may record Config.Quota (DefaultQuota: 10 events
//     a second with bursts of 300, and 8 KiB of requests a second with
//     bursts of 512 KiB). A request beyond it is answered `rate_limited`
//     and records nothing; it is not charged. Duplicates are charged like
//     new events; events the daemon synthesizes are not. A Codex event
//     counts against the surface it is routed to. MUSTER_EVENT_QUOTA=off
//     turns the quota off (benchmarks).
//   - Sender: the capability proves what a process inside the pane knows,
//     but any process of the user can read it from /proc/PID/environ. So
//     an authorized event is also refused `forbidden` when
//     Config.Senders says its sender (the SO_PEERCRED pid) may not
//     record for that surface's session: the daemon allows a process
//     outside every pane (a user running a hook by hand) or inside that
//     session's own pane (internal/panepeer). Events of a provider with a
//     router (Codex) are not asked about: seed 004 says their hooks may run
//     in a process another pane started, and their pane is worked out from
//     the session id instead. A refused event records nothing and is not
//     charged to the quota.
//   - Codes: DESIGN §4's nine (invalid_json, too_large, unsupported_version,
//     invalid_event, unknown_kind, reserved_hook_name, unauthorized,
//     storage_failure, timeout), rate_limited and forbidden. They are
//     checked in the order invalid_json, unsupported_version,
//     invalid_event, unknown_kind, reserved_hook_name, unauthorized,
//     forbidden, rate_limited, storage_failure. A
//     missing or null schemaVersion is invalid_event; any value but the
//     number 1 is unsupported_version. A top-level value that is not an
//     object is invalid_json; a field of the wrong JSON type is
//     invalid_event.
//   - Dates: ISO 8601 with or without fractional seconds and offsets; no
//     offset means UTC. occurredAt more than Config.MaxFutureSkew (1 min)
//     ahead of the daemon's clock, or before 2000, is invalid_event. The
//     client's date is kept as the event's evidence, but the reducer orders
//     events by it only up to the moment the daemon received the event
//     (runstate.Event.At): a date in the future counts as the time of
//     receipt, so it cannot pin a run as current or make the next real
//     event late.
//   - Identifiers (id, runID, surfaceID, sessionID) are non-empty strings of
//     at most 256 bytes without control characters or surrounding spaces;
//     provider matches [a-z0-9][a-z0-9._-]{0,31}. sessionID may be null.
//     surfaceID may be absent or empty (the hook helper sends what the pane
//     environment has); that is unauthorized for every provider but Codex.
//   - hookName beginning with "muster." in any letter case is
//     reserved_hook_name.
//   - Idempotency is by event id within a surface: an id the surface
//     already recorded answers inserted:false and changes nothing, whatever
//     the rest of the event. The same id from another surface is another
//     event, so a pane cannot claim (and so suppress) an id another pane
//     will send. The store checks it (store.EventWriter): the ids of events
//     stored since the runs snapshot in memory, the older ones in a table
//     written with the snapshot, so that a commit writes no index page per
//     event. Events older than Config.EventRetention (30 days) are pruned
//     at Start, and their ids with them.
//   - "Durably committed before ok": the event is in an SQLite transaction
//     that has committed (WAL, synchronous=NORMAL: it survives a crash or
//     kill -9 of the daemon; the last transactions may be lost on power
//     failure, the store's documented trade-off). One writer goroutine,
//     fed by a bounded queue, commits whatever is queued in one
//     transaction, answers each request after the commit, and then applies
//     the events to the reducer's board: readers never see an event that
//     is not durable. Runs and attention items are derived state: they are
//     written as a snapshot every second while they change, with every
//     operation (ack, close, removal) and at shutdown, and Start applies
//     the events stored after the snapshot again. SQLite's automatic
//     checkpoint is replaced by a passive checkpoint every 500 ms from a
//     reader connection, so that no event waits on one.
//
// # Surfaces
//
// RegisterSurface grants the capability; CloseSurface revokes it at once,
// ends the surface's Codex binding, and records a synthesized `disconnected`
// event (hookName "muster.surfaceClosed", source "surface") for every run on
// the surface that had not ended, because the process that ran it is gone.
// Like any disconnect of the current run, that opens an attention item.
//
// # Startup sweep
//
// Start loads the runs and items of the previous daemon and, before it
// returns, records a `disconnected` event with hookName
// "muster.startupSweep" for every run left running, waitingInput or
// waitingApproval.
package events
