package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Worktree is a git worktree a session was started in.
type Worktree struct {
	Path       string
	SessionID  string
	Repo       string
	Branch     string
	BaseCommit string
	// CreatedBranch: Muster made the branch, so removing the tree may
	// delete it once nothing on it is unpushed.
	CreatedBranch bool
	CreatedAt     time.Time
}

// ErrWorktreeTaken is returned when a worktree path is already recorded.
var ErrWorktreeTaken = errors.New("worktree already recorded")

// InsertWorktree records a new worktree.
func (s *Store) InsertWorktree(ctx context.Context, w Worktree) error {
	_, err := s.W.ExecContext(ctx, `INSERT INTO worktrees
		(path, session_id, repo, branch, base_commit, created_branch, created_at) VALUES (?,?,?,?,?,?,?)`,
		w.Path, w.SessionID, w.Repo, w.Branch, w.BaseCommit, w.CreatedBranch, fmtTime(w.CreatedAt))
	if isUnique(err) {
		return ErrWorktreeTaken
	}
	if err != nil {
		return fmt.Errorf("insert worktree: %w", err)
	}
	return nil
}

const worktreeCols = `path, session_id, repo, branch, base_commit, created_branch, created_at`

func scanWorktree(row interface{ Scan(...any) error }) (Worktree, error) {
	var w Worktree
	var created string
	err := row.Scan(&w.Path, &w.SessionID, &w.Repo, &w.Branch, &w.BaseCommit, &w.CreatedBranch, &created)
	w.CreatedAt = parseTime(created)
	return w, err
}

// Worktrees lists every recorded worktree, oldest first.
func (s *Store) Worktrees(ctx context.Context) ([]Worktree, error) {
	rows, err := s.W.QueryContext(ctx, `SELECT `+worktreeCols+` FROM worktrees ORDER BY created_at, path`)
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	defer rows.Close()
	var out []Worktree
	for rows.Next() {
		w, err := scanWorktree(rows)
		if err != nil {
			return nil, fmt.Errorf("list worktrees: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// WorktreeByPath returns the worktree recorded at path.
func (s *Store) WorktreeByPath(ctx context.Context, path string) (Worktree, error) {
	w, err := scanWorktree(s.W.QueryRowContext(ctx, `SELECT `+worktreeCols+` FROM worktrees WHERE path = ?`, path))
	if errors.Is(err, sql.ErrNoRows) {
		return w, ErrNotFound
	}
	return w, err
}

// DeleteWorktree forgets a worktree.
func (s *Store) DeleteWorktree(ctx context.Context, path string) error {
	_, err := s.W.ExecContext(ctx, `DELETE FROM worktrees WHERE path = ?`, path)
	return err
}

// AddSetupConsent records that the user consented to running a
// repository's setup files whose content hashes to sha256.
func (s *Store) AddSetupConsent(ctx context.Context, repo, sha256 string, at time.Time) error {
	_, err := s.W.ExecContext(ctx, `INSERT OR IGNORE INTO worktree_setup_consents (repo, sha256, consented_at) VALUES (?,?,?)`,
		repo, sha256, fmtTime(at))
	return err
}

// HasSetupConsent reports whether the user consented to this content of
// the repository's setup files.
func (s *Store) HasSetupConsent(ctx context.Context, repo, sha256 string) (bool, error) {
	var n int
	err := s.W.QueryRowContext(ctx, `SELECT count(*) FROM worktree_setup_consents WHERE repo = ? AND sha256 = ?`, repo, sha256).Scan(&n)
	return n > 0, err
}
