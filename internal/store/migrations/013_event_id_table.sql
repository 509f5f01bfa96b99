-- Idempotency without a page written per event. The unique index on
-- agent_events(surface_id, id) wrote one random index page with every
-- commit (event ids are random UUIDs), a third of a one-event commit's
-- cost. The ids now go to agent_event_ids with the runs snapshot, as of
-- agent_state.snapshot_seq; the event writer (store.EventWriter) checks the
-- ids stored after it in memory, read back from agent_events at start.
-- seq is the event's, so that pruning the events prunes their ids.
DROP INDEX agent_events_surface_id;
CREATE TABLE agent_event_ids (
	surface_id TEXT NOT NULL,
	id         TEXT NOT NULL,
	seq        INTEGER NOT NULL,
	PRIMARY KEY (surface_id, id)
) WITHOUT ROWID;
CREATE INDEX agent_event_ids_seq ON agent_event_ids(seq);
INSERT INTO agent_event_ids(surface_id, id, seq)
	SELECT surface_id, id, seq FROM agent_events
	WHERE seq <= (SELECT coalesce(max(value), 0) FROM agent_state WHERE key = 'snapshot_seq');
