-- The history index moves to a database of its own (history.db, schema in
-- index_migrations/): writing one large session's full-text row held the
-- only write connection of this database for milliseconds, and every
-- agent event waited behind it to be acked. The index is derived from the
-- transcripts on disk, so it is not copied: the next refresh (the daemon's
-- watcher, or `muster history`) rebuilds it there from the transcripts.
-- Store.migrate compacts the file when this leaves most of it free.
DROP TRIGGER IF EXISTS history_sessions_fts_delete;
DROP TRIGGER IF EXISTS history_sessions_analysis_delete;
DROP TABLE history_fts;
DROP TABLE history_analyses_full;
DROP TABLE history_analyses;
DROP TABLE history_sessions;
DROP TABLE history_files;
DROP TABLE history_digests;
