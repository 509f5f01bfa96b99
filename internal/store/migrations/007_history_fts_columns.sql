-- Full-text search (internal/history) without token positions: the index
-- records which columns of a session hold a word, not where (detail =
-- column). Search ranks by the column a query matched in and by recency,
-- cuts its snippets itself and matches words, not phrases, so positions
-- were a third of the database's size for nothing, and a column filter
-- over a common word had to decode all of them (a query cost 20 to 150 ms
-- of CPU over 10,000 sessions; 2 to 28 ms without).
DROP TRIGGER history_sessions_fts_delete;
DROP TABLE history_fts;
CREATE VIRTUAL TABLE history_fts USING fts5(
	meta,    -- title, first prompt, directory, id, model
	said,    -- prompts, replies, thinking
	tools,   -- tool names, inputs and outputs
	tokenize = 'unicode61 remove_diacritics 2',
	detail = column
);
CREATE TRIGGER history_sessions_fts_delete AFTER DELETE ON history_sessions BEGIN
	DELETE FROM history_fts WHERE rowid = old.rowid;
END;

-- The text went with the table: index every session again.
DELETE FROM history_sessions;
DELETE FROM history_files;
DELETE FROM history_digests;
