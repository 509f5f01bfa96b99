-- Sessions are durable (MUSTER_AGENT_SESSION_ID); surfaces are the live panes
-- that host them, one per launch.
CREATE TABLE sessions (
	id                TEXT PRIMARY KEY,
	name              TEXT NOT NULL UNIQUE,
	provider          TEXT NOT NULL,
	cwd               TEXT NOT NULL,
	argv              TEXT NOT NULL,              -- JSON array: the new-session command
	args              TEXT NOT NULL DEFAULT '[]', -- JSON array: the user's extra arguments (after --)
	shell_command     TEXT NOT NULL DEFAULT '',   -- --cmd, run through the shell
	resume_template   TEXT NOT NULL DEFAULT '',
	env               TEXT NOT NULL DEFAULT '{}', -- JSON object; secrets never stored
	native_id         TEXT NOT NULL DEFAULT '',
	native_confirmed  INTEGER NOT NULL DEFAULT 0,
	restore_reason    TEXT NOT NULL DEFAULT '',
	restore_attempts  INTEGER NOT NULL DEFAULT 0,
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL
);

CREATE TABLE surfaces (
	id            TEXT PRIMARY KEY,
	session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	pid           INTEGER NOT NULL DEFAULT 0,
	argv          TEXT NOT NULL DEFAULT '[]',
	state         TEXT NOT NULL,               -- running | exited
	exit_code     INTEGER,
	final_screen  TEXT NOT NULL DEFAULT '',
	end_reason    TEXT NOT NULL DEFAULT '',    -- exited | daemon-stopped | daemon-died
	started_at    TEXT NOT NULL,
	ended_at      TEXT
);
CREATE INDEX surfaces_session ON surfaces(session_id, started_at);
