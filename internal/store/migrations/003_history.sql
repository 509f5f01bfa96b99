-- The discovery index of transcripts on disk (internal/history). One row per
-- transcript file a provider's Discover reported, with the size and mtime it
-- had when it was parsed: a later scan re-parses only files whose size or
-- mtime changed, and drops rows of files that vanished.
CREATE TABLE history_files (
	path      TEXT PRIMARY KEY,
	provider  TEXT NOT NULL,
	size      INTEGER NOT NULL,
	mtime_ns  INTEGER NOT NULL,
	version   TEXT NOT NULL DEFAULT ''   -- muster version that parsed it
) WITHOUT ROWID;
CREATE INDEX history_files_provider ON history_files(provider);

-- Session summaries; a file holds one session, or several for databases.
-- A rowid table: rows carry kilobytes of JSON, which WITHOUT ROWID b-trees
-- handle poorly.
CREATE TABLE history_sessions (
	path             TEXT NOT NULL REFERENCES history_files(path) ON DELETE CASCADE,
	ord              INTEGER NOT NULL,        -- position within the file
	provider         TEXT NOT NULL,
	native_id        TEXT NOT NULL,
	title            TEXT NOT NULL DEFAULT '',
	cwd              TEXT NOT NULL DEFAULT '',
	model            TEXT NOT NULL DEFAULT '',
	started_ms       INTEGER NOT NULL DEFAULT 0,
	last_ms          INTEGER NOT NULL DEFAULT 0, -- ended, else started; 0 unknown
	prompt_count     INTEGER NOT NULL DEFAULT 0,
	tool_call_count  INTEGER NOT NULL DEFAULT 0,
	search           TEXT NOT NULL DEFAULT '',   -- lower-cased searchable text
	summary          TEXT NOT NULL,              -- transcript.Session JSON
	detail           TEXT,                       -- analysis JSON from a full parse, on demand
	detail_version   INTEGER NOT NULL DEFAULT 0,
	UNIQUE (path, ord)
);
CREATE INDEX history_sessions_native ON history_sessions(native_id);
CREATE INDEX history_sessions_last ON history_sessions(last_ms);

-- A digest of each provider's file list (paths, sizes, mtimes and parser
-- version) as of its last complete refresh: a warm refresh whose listing
-- hashes the same skips the per-file comparison.
CREATE TABLE history_digests (
	provider  TEXT PRIMARY KEY,
	digest    TEXT NOT NULL
) WITHOUT ROWID;
