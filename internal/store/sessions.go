package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNameTaken is returned when a session name is already in use; pick
// another name.
var ErrNameTaken = errors.New("session name already in use")

// ErrNotFound is returned when no row matches.
var ErrNotFound = errors.New("not found")

// Session is a durable session record.
type Session struct {
	ID              string
	Name            string
	Provider        string
	CWD             string
	Argv            []string
	Args            []string // the user's extra arguments, kept for resume
	ShellCommand    string
	ResumeTemplate  string
	Env             map[string]string
	NativeID        string
	NativeConfirmed bool
	RestoreReason   string
	RestoreAttempts int
	// ParentID is the session whose pane created this one, "" when a user
	// did.
	ParentID string
	// Control marks the user's own pane (muster new --control): its
	// processes may drive every session, as the user may.
	Control   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Surface is one launch of a session in a pane.
type Surface struct {
	ID          string
	SessionID   string
	PID         int
	Argv        []string
	State       string // running | exited
	ExitCode    *int
	FinalScreen string
	// EndReason says who ended the process: "exited" (by itself or a
	// kill), "daemon-stopped" or "daemon-died"; the last two are resumable.
	EndReason string
	StartedAt time.Time
	EndedAt   *time.Time
}

// TimeFormat is how times are stored: RFC 3339 UTC with nanoseconds, so
// that text order is time order.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// InsertSession stores a new session.
func (s *Store) InsertSession(ctx context.Context, se Session) error {
	argv, _ := json.Marshal(se.Argv)
	args, _ := json.Marshal(se.Args)
	env, _ := json.Marshal(se.Env)
	_, err := s.W.ExecContext(ctx, `INSERT INTO sessions
		(id, name, provider, cwd, argv, args, shell_command, resume_template, env, native_id, native_confirmed, parent_id, control, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		se.ID, se.Name, se.Provider, se.CWD, string(argv), string(args), se.ShellCommand, se.ResumeTemplate, string(env),
		se.NativeID, se.NativeConfirmed, se.ParentID, se.Control, fmtTime(se.CreatedAt), fmtTime(se.CreatedAt))
	if isUnique(err) {
		return ErrNameTaken
	}
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

const sessionCols = `id, name, provider, cwd, argv, args, shell_command, resume_template, env, native_id, native_confirmed, restore_reason, restore_attempts, parent_id, control, created_at, updated_at`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var se Session
	var argv, args, env, created, updated string
	err := row.Scan(&se.ID, &se.Name, &se.Provider, &se.CWD, &argv, &args, &se.ShellCommand, &se.ResumeTemplate, &env,
		&se.NativeID, &se.NativeConfirmed, &se.RestoreReason, &se.RestoreAttempts, &se.ParentID, &se.Control, &created, &updated)
	if err != nil {
		return se, err
	}
	json.Unmarshal([]byte(argv), &se.Argv)
	json.Unmarshal([]byte(args), &se.Args)
	json.Unmarshal([]byte(env), &se.Env)
	se.CreatedAt, se.UpdatedAt = parseTime(created), parseTime(updated)
	return se, nil
}

// Sessions lists every session, oldest first.
func (s *Store) Sessions(ctx context.Context) ([]Session, error) {
	rows, err := s.W.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		se, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, se)
	}
	return out, rows.Err()
}

// SessionByID returns one session.
func (s *Store) SessionByID(ctx context.Context, id string) (Session, error) {
	se, err := scanSession(s.W.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return se, ErrNotFound
	}
	return se, err
}

// RenameSession changes a session's display name.
func (s *Store) RenameSession(ctx context.Context, id, name string) error {
	_, err := s.W.ExecContext(ctx, `UPDATE sessions SET name = ?, updated_at = ? WHERE id = ?`, name, fmtTime(time.Now()), id)
	if isUnique(err) {
		return ErrNameTaken
	}
	return err
}

// SetNative records the provider's native session id.
func (s *Store) SetNative(ctx context.Context, id, nativeID string, confirmed bool) error {
	_, err := s.W.ExecContext(ctx, `UPDATE sessions SET native_id = ?, native_confirmed = ?, updated_at = ? WHERE id = ?`,
		nativeID, confirmed, fmtTime(time.Now()), id)
	return err
}

// SetRestore records why a session needs (or failed) restoring.
func (s *Store) SetRestore(ctx context.Context, id, reason string, attempts int) error {
	_, err := s.W.ExecContext(ctx, `UPDATE sessions SET restore_reason = ?, restore_attempts = ?, updated_at = ? WHERE id = ?`,
		reason, attempts, fmtTime(time.Now()), id)
	return err
}

// DeleteSession removes a session and its surfaces.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.W.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}

// InsertSurface records a new launch.
func (s *Store) InsertSurface(ctx context.Context, su Surface) error {
	argv, _ := json.Marshal(su.Argv)
	_, err := s.W.ExecContext(ctx, `INSERT INTO surfaces (id, session_id, pid, argv, state, started_at) VALUES (?,?,?,?,?,?)`,
		su.ID, su.SessionID, su.PID, string(argv), su.State, fmtTime(su.StartedAt))
	if err != nil {
		return fmt.Errorf("insert surface: %w", err)
	}
	return nil
}

// ExitSurface records that a surface's process ended. A nil exit code means
// the outcome is unknown (the daemon died with it).
func (s *Store) ExitSurface(ctx context.Context, id string, code *int, finalScreen, reason string, at time.Time) error {
	_, err := s.W.ExecContext(ctx, `UPDATE surfaces SET state = 'exited', exit_code = ?, final_screen = ?, end_reason = ?, ended_at = ? WHERE id = ?`,
		code, finalScreen, reason, fmtTime(at), id)
	return err
}

// SetProvider records the provider a shell session turned out to run.
func (s *Store) SetProvider(ctx context.Context, id, provider string) error {
	_, err := s.W.ExecContext(ctx, `UPDATE sessions SET provider = ?, updated_at = ? WHERE id = ?`, provider, fmtTime(time.Now()), id)
	return err
}

// ExitOrphans marks surfaces a previous daemon left running as exited with
// an unknown exit code, and returns their session ids.
func (s *Store) ExitOrphans(ctx context.Context, at time.Time, keep ...string) ([]string, error) {
	q := `UPDATE surfaces SET state = 'exited', end_reason = 'daemon-died', ended_at = ? WHERE state = 'running'`
	args := []any{fmtTime(at)}
	if len(keep) > 0 {
		q += ` AND id NOT IN (?` + strings.Repeat(`,?`, len(keep)-1) + `)`
		for _, k := range keep {
			args = append(args, k)
		}
	}
	rows, err := s.W.QueryContext(ctx, q+` RETURNING session_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("mark orphaned surfaces: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// SurfaceSession returns the id of the session a surface (of any launch,
// live or not) belonged to; ErrNotFound when the surface or its session is
// gone.
func (s *Store) SurfaceSession(ctx context.Context, surfaceID string) (string, error) {
	var id string
	err := s.W.QueryRowContext(ctx, `SELECT session_id FROM surfaces WHERE id = ?`, surfaceID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return id, err
}

// LatestSurface returns the most recent surface of a session.
func (s *Store) LatestSurface(ctx context.Context, sessionID string) (Surface, error) {
	var su Surface
	var argv, started string
	var ended sql.NullString
	var code sql.NullInt64
	err := s.W.QueryRowContext(ctx, `SELECT id, session_id, pid, argv, state, exit_code, final_screen, end_reason, started_at, ended_at
		FROM surfaces WHERE session_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1`, sessionID).
		Scan(&su.ID, &su.SessionID, &su.PID, &argv, &su.State, &code, &su.FinalScreen, &su.EndReason, &started, &ended)
	if errors.Is(err, sql.ErrNoRows) {
		return su, ErrNotFound
	}
	if err != nil {
		return su, err
	}
	json.Unmarshal([]byte(argv), &su.Argv)
	su.StartedAt = parseTime(started)
	if code.Valid {
		c := int(code.Int64)
		su.ExitCode = &c
	}
	if ended.Valid {
		t := parseTime(ended.String)
		su.EndedAt = &t
	}
	return su, nil
}
