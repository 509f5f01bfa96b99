-- The session whose pane created this one (`muster new` run inside a pane),
-- '' when a user created it. A process inside a pane may drive its own
-- session and the sessions descended from it, nothing else.
ALTER TABLE sessions ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
