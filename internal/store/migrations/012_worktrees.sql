-- The git worktrees `muster new --worktree` made: which session owns each
-- (so no other session recycles it), its branch and the commit it started
-- from (what "ahead" counts from). A row outlives its session: the tree
-- and its work stay until `muster worktree rm` finds them safe to remove.
CREATE TABLE worktrees (
	path           TEXT PRIMARY KEY,
	session_id     TEXT NOT NULL,
	repo           TEXT NOT NULL,
	branch         TEXT NOT NULL,
	base_commit    TEXT NOT NULL,
	created_branch INTEGER NOT NULL DEFAULT 0,
	created_at     TEXT NOT NULL
);
CREATE INDEX worktrees_session ON worktrees (session_id);

-- A repository's setup files (.muster/worktree-setup, .worktreeinclude)
-- run for a new worktree only once the user consented to that exact
-- content: the SHA-256 of the files, not the repository, is what is
-- trusted.
CREATE TABLE worktree_setup_consents (
	repo         TEXT NOT NULL,
	sha256       TEXT NOT NULL,
	consented_at TEXT NOT NULL,
	PRIMARY KEY (repo, sha256)
);
