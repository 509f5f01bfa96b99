-- The agent event protocol (seed 004): the append-only log of accepted
-- events, the reducer's state per run, and attention items. Times are Unix
-- nanoseconds (UTC). session_id is the durable Muster session id; the
-- provider's own id is native_session_id.
--
-- Idempotency is by event id, checked in memory against the fingerprints
-- (fp: the first 8 bytes of SHA-256(id)) of every stored event, loaded at
-- start. There is deliberately no index on id: event ids are random UUIDs,
-- and an index over them writes one random page per event.
CREATE TABLE agent_events (
	seq               INTEGER PRIMARY KEY,
	id                TEXT NOT NULL,              -- event.id.rawValue
	fp                INTEGER NOT NULL,           -- fingerprint of id
	session_id        TEXT NOT NULL,
	surface_id        TEXT NOT NULL,
	run_id            TEXT NOT NULL,
	native_session_id TEXT,
	provider          TEXT NOT NULL,
	kind              TEXT NOT NULL,
	hook_name         TEXT NOT NULL DEFAULT '',
	message           TEXT NOT NULL DEFAULT '',
	occurred_at       INTEGER NOT NULL,
	received_at       INTEGER NOT NULL,
	source            TEXT NOT NULL,              -- hook | sweep | surface | native
	effect            TEXT NOT NULL               -- applied | confirmed | late | final
);
-- No index on session_id: every index is one more page written per commit,
-- and the only reader (explain) scans back from the newest rows.

-- agent_runs is a snapshot of the reducer's runs, and agent_event_fps of
-- the fingerprints of stored event ids, both as of event seq
-- agent_state.snapshot_seq; at start the events after it are replayed and
-- their fingerprints read. Writing runs with every event would cost a page
-- per commit; reading fingerprints from agent_events would read the whole
-- table.
CREATE TABLE agent_event_fps (
	day  INTEGER NOT NULL,                        -- received_at / 86400 s
	data BLOB NOT NULL                            -- big-endian uint64 fingerprints
);

CREATE TABLE agent_state (
	key   TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);

CREATE TABLE agent_runs (
	session_id TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	state      TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	data       TEXT NOT NULL,                     -- JSON of the reducer's run
	PRIMARY KEY (session_id, run_id)
) WITHOUT ROWID;

CREATE TABLE attention_items (
	id          INTEGER PRIMARY KEY,
	session_id  TEXT NOT NULL,
	surface_id  TEXT NOT NULL,
	run_id      TEXT NOT NULL,
	provider    TEXT NOT NULL,
	reason      TEXT NOT NULL,                    -- approval-requested | input-requested | failed | disconnected | succeeded
	message     TEXT NOT NULL DEFAULT '',
	event_id    TEXT NOT NULL,
	opened_at   INTEGER NOT NULL,
	resolved_at INTEGER,
	resolution  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX attention_items_session ON attention_items(session_id);
