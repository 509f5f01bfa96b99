-- A control pane is the user's own (`muster new --control`): the processes
-- in it may drive every session as the user may. Only a process outside
-- every pane can set it, so no pane can grant itself more.
ALTER TABLE sessions ADD COLUMN control INTEGER NOT NULL DEFAULT 0;
