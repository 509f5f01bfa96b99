-- Sub-agent sessions belong to their parent conversation (internal/history):
-- the parent's native id, '' for a conversation of its own. Listings leave
-- sub-agents out, searches report their parent, stats count them in it.
ALTER TABLE history_sessions ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
UPDATE history_sessions SET parent_id = coalesce(json_extract(summary, '$.parent_id'), '')
	WHERE json_valid(summary);
CREATE INDEX history_sessions_parent ON history_sessions(parent_id);
