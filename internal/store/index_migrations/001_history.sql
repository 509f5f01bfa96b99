-- The history index (internal/history) in a database file of its own
-- (history.db beside muster.db): it is derived from the transcripts on
-- disk, and a single full-text row can take milliseconds to write, so it
-- has its own write connection and never holds the one that commits agent
-- events. This is the schema migrations 003 and 006 to 010 of muster.db
-- had built, which 014 dropped there.

-- One row per transcript file a provider's Discover reported, with the
-- size and mtime it had when it was parsed: a later scan re-parses only
-- files whose size or mtime changed, and drops rows of files that vanished.
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
	detail_version   INTEGER NOT NULL DEFAULT 0, -- of the analysis; 0 none
	-- Sub-agent sessions belong to their parent conversation: the parent's
	-- native id, '' for a conversation of its own.
	parent_id        TEXT NOT NULL DEFAULT '',
	UNIQUE (path, ord)
);
CREATE INDEX history_sessions_native ON history_sessions(native_id);
CREATE INDEX history_sessions_last ON history_sessions(last_ms);
CREATE INDEX history_sessions_parent ON history_sessions(parent_id);
-- Which sessions lack a current analysis is asked on every `muster stats`;
-- this covering index answers it from a few small pages.
CREATE INDEX history_sessions_detail ON history_sessions(detail_version, path, provider);

-- A digest of each provider's file list (paths, sizes, mtimes and parser
-- version) as of its last complete refresh: a warm refresh whose listing
-- hashes the same skips the per-file comparison.
CREATE TABLE history_digests (
	provider  TEXT PRIMARY KEY,
	digest    TEXT NOT NULL
) WITHOUT ROWID;

-- Full-text search over what was said in each session: one row per
-- history_sessions row, same rowid. The text is stored as the transcript
-- has it (the transcripts on disk hold it in clear anyway) so that a
-- search matches it; whatever shows it (snippets, titles) redacts first.
-- Each item is capped before it is stored (see history.searchDoc). Without
-- token positions (detail = column): Search ranks by the column a query
-- matched in and by recency, cuts its snippets itself and matches words,
-- not phrases.
CREATE VIRTUAL TABLE history_fts USING fts5(
	meta,    -- title, first prompt, directory, id, model
	said,    -- prompts, replies, thinking
	tools,   -- tool names, inputs and outputs
	tokenize = 'unicode61 remove_diacritics 2',
	detail = column
);
-- A session row replaced (its file changed) or deleted (its file vanished,
-- by cascade from history_files) takes its text with it.
CREATE TRIGGER history_sessions_fts_delete AFTER DELETE ON history_sessions BEGIN
	DELETE FROM history_fts WHERE rowid = old.rowid;
END;

-- Analyses (internal/history Analyzer) in two parts: a brief every report
-- reads and the full analysis read on demand. session is the
-- history_sessions rowid; version is the analyzer version that wrote it.
CREATE TABLE history_analyses (
	session  INTEGER PRIMARY KEY,
	version  INTEGER NOT NULL,
	brief    BLOB NOT NULL
);
CREATE TABLE history_analyses_full (
	session  INTEGER PRIMARY KEY,
	full     BLOB NOT NULL
);
CREATE TRIGGER history_sessions_analysis_delete AFTER DELETE ON history_sessions BEGIN
	DELETE FROM history_analyses WHERE session = old.rowid;
	DELETE FROM history_analyses_full WHERE session = old.rowid;
END;
