-- Which sessions lack a current analysis (internal/history staleDetail) is
-- asked on every `muster stats`: scanning the table for detail_version,
-- which sits after the analysis in each row and so often in its overflow
-- pages, read the whole analysis of every session (11% of a warm stats).
-- This covering index answers from a few small pages. detail_version is 0
-- whenever detail is NULL.
CREATE INDEX history_sessions_detail ON history_sessions(detail_version, path, provider);
