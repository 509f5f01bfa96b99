-- Sessions are durable (MUSTER_AGENT_SESSION_ID); surfaces are the live panes
-- that host them, one per launch.
CREATE TABLE sessions (
	id                TEXT PRIMARY KEY,
	name              TEXT NOT NULL UNIQUE,
	provider          TEXT NOT NULL,
	cwd               TEXT NOT NULL,
	command           TEXT NOT NULL,           -- JSON array argv, or a shell command for --cmd
	shell_command     INTEGER NOT NULL DEFAULT 0,
	resume_template   TEXT NOT NULL DEFAULT '',
	env               TEXT NOT NULL DEFAULT '{}', -- JSON object of extra env, secrets removed
	native_id         TEXT NOT NULL DEFAULT '',
	native_confirmed  INTEGER NOT NULL DEFAULT 0,
	created_at        TEXT NOT NULL,
	updated_at        TEXT NOT NULL
);

CREATE TABLE surfaces (
	id           TEXT PRIMARY KEY,
	session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	pid          INTEGER NOT NULL DEFAULT 0,
	state        TEXT NOT NULL,               -- running | exited
	exit_code    INTEGER,
	started_at   TEXT NOT NULL,
	ended_at     TEXT
);
CREATE INDEX surfaces_session ON surfaces(session_id);
