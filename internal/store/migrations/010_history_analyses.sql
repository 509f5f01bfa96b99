-- Analyses (internal/history Analyzer) move out of history_sessions into
-- tables of their own, in two parts: a brief every report reads
-- (history_analyses) and the full analysis read on demand
-- (history_analyses_full). In the session row the analysis sat after the
-- summary, so a warm `muster stats` read every row's overflow pages, and
-- most of its time went to SQLite copying them and to decoding the JSON
-- summaries it never needed. session is the history_sessions rowid;
-- version is the analyzer version that wrote the analysis.
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
ALTER TABLE history_sessions DROP COLUMN detail;
-- Every session is analysed again, into the new tables.
UPDATE history_sessions SET detail_version = 0;
