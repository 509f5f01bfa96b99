-- Full-text search over what was said in each indexed session
-- (internal/history): one row per history_sessions row, same rowid. The text
-- is stored as the transcript has it (the transcripts on disk hold it in
-- clear anyway) so that a search matches it; whatever shows it (snippets,
-- titles) redacts first. Each item is capped before it is stored (see
-- history.searchDoc). bm25 weights the columns meta > said > tools.
CREATE VIRTUAL TABLE history_fts USING fts5(
	meta,    -- title, first prompt, directory, id, model
	said,    -- prompts, replies, thinking
	tools,   -- tool names, inputs and outputs
	tokenize = 'unicode61 remove_diacritics 2'
);

-- A session row replaced (its file changed) or deleted (its file vanished,
-- by cascade from history_files) takes its text with it.
CREATE TRIGGER history_sessions_fts_delete AFTER DELETE ON history_sessions BEGIN
	DELETE FROM history_fts WHERE rowid = old.rowid;
END;

-- Sessions indexed before this migration have no text: index them again.
DELETE FROM history_sessions;
DELETE FROM history_files;
DELETE FROM history_digests;
