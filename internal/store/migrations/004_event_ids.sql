-- Idempotency by a unique index instead of in-memory fingerprints, and
-- event ids scoped to the surface the event was recorded for: a pane can
-- no longer claim (and so suppress) an id another pane will send. The
-- fingerprints go with it.
--
-- The event engine now persists attention items with the runs snapshot
-- instead of with every event, and replays items as well as runs from the
-- events after the snapshot. A database written by the previous engine
-- already holds the items of those events, so its snapshot is declared
-- current: replaying them again would open each item twice.
DROP TABLE agent_event_fps;
ALTER TABLE agent_events DROP COLUMN fp;
CREATE UNIQUE INDEX agent_events_surface_id ON agent_events(surface_id, id);
INSERT INTO agent_state(key, value) VALUES ('snapshot_seq', (SELECT coalesce(max(seq), 0) FROM agent_events))
	ON CONFLICT(key) DO UPDATE SET value = excluded.value;
