package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// Query selects sessions from the index, newest first.
type Query struct {
	Provider string
	// Search matches, case-insensitively, a substring of the provider, id,
	// title, first prompt, cwd or model.
	Search string
	// Since keeps sessions whose last activity is at or after it.
	Since time.Time
	// Until keeps sessions that started before it.
	Until time.Time
	// Dir keeps sessions whose directory is Dir or below it.
	Dir string
	// Limit caps the result; 0 means no cap.
	Limit int
	// IncludeEmpty keeps sessions with neither prompts nor tool calls,
	// which List otherwise leaves out (seed 002: a session is discoverable
	// when it has prompts or tool calls).
	IncludeEmpty bool
	// IncludeSubagents keeps sub-agent sessions (Session.ParentID set),
	// which belong to their parent's conversation and are otherwise left
	// out; see Subagents.
	IncludeSubagents bool
}

func (q Query) where() (string, []any) {
	var conds []string
	var args []any
	if q.Provider != "" {
		conds = append(conds, "provider = ?")
		args = append(args, q.Provider)
	}
	if q.Search != "" {
		conds = append(conds, "instr(search, ?) > 0")
		args = append(args, strings.ToLower(q.Search))
	}
	if !q.Since.IsZero() {
		conds = append(conds, "last_ms >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		conds = append(conds, untilCond)
		args = append(args, q.Until.UnixMilli())
	}
	if q.Dir != "" {
		conds = append(conds, dirCond)
		args = append(args, dirArgs(q.Dir)...)
	}
	if !q.IncludeEmpty {
		conds = append(conds, "(prompt_count > 0 OR tool_call_count > 0)")
	}
	if !q.IncludeSubagents {
		conds = append(conds, "parent_id = ''")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// List returns the summaries q selects.
func (x *Index) List(ctx context.Context, q Query) ([]transcript.Session, error) {
	where, args := q.where()
	sqlq := `SELECT summary FROM history_sessions` + where + ` ORDER BY last_ms DESC, path, ord`
	if q.Limit > 0 {
		sqlq += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	return x.listRaw(ctx, sqlq, args)
}

// listRaw runs a query of summaries and decodes them on every core: for
// thousands of sessions decoding is most of the work.
func (x *Index) listRaw(ctx context.Context, sqlq string, args []any) ([]transcript.Session, error) {
	conn, err := x.mapped(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	defer rows.Close()
	var raws [][]byte
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("query history: %w", err)
		}
		raws = append(raws, raw)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	out := make([]transcript.Session, len(raws))
	workers := min(runtime.GOMAXPROCS(0), len(raws)/256+1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(raws); i += workers {
				if err := json.Unmarshal(raws[i], &out[i]); err != nil {
					errs[w] = fmt.Errorf("decode history summary: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Analyzed is a session with the brief of its stored analysis (see
// Analyzer). Session holds what the index keeps in columns (provider, id,
// parent id, path, directory, model, start, last activity as EndedAt,
// prompt and tool call counts); a session without a current analysis
// carries its whole summary instead, for reports to fall back on.
type Analyzed struct {
	Session transcript.Session
	Brief   []byte // the Analyzer's Brief; nil when never analysed
	// Full is the Analyzer's Full once LoadFull has read it.
	Full []byte

	x  *Index
	id int64 // history_sessions rowid
}

// ListAnalyzed returns the sessions q selects, in no particular order
// (reading the tables in order of storage is cheapest) unless q has a
// Limit (then newest first), with their analyses' briefs; run Refresh with the same Analyzer first so that every
// analysis is present and current.
func (x *Index) ListAnalyzed(ctx context.Context, q Query, version int) ([]Analyzed, error) {
	where, args := q.where()
	sqlq := `SELECT s.rowid, s.path, s.provider, s.native_id, s.parent_id, s.cwd, s.model, s.started_ms, s.last_ms,
		s.prompt_count, s.tool_call_count, a.brief, CASE WHEN a.brief IS NULL THEN s.summary END
		FROM history_sessions s LEFT JOIN history_analyses a ON a.session = s.rowid AND a.version = ?` + where
	if q.Limit > 0 {
		sqlq += fmt.Sprintf(" ORDER BY s.last_ms DESC, s.path, s.ord LIMIT %d", q.Limit)
	}
	conn, err := x.mapped(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, sqlq, append([]any{version}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	defer rows.Close()
	var out []Analyzed
	for rows.Next() {
		a := Analyzed{x: x}
		s := &a.Session
		var started, last int64
		var summary []byte
		if err := rows.Scan(&a.id, &s.Path, &s.Provider, &s.ID, &s.ParentID, &s.CWD, &s.Model, &started, &last,
			&s.PromptCount, &s.ToolCallCount, &a.Brief, &summary); err != nil {
			return nil, fmt.Errorf("query history: %w", err)
		}
		if summary != nil {
			if err := json.Unmarshal(summary, s); err != nil {
				return nil, fmt.Errorf("decode history summary: %w", err)
			}
		} else {
			s.StartedAt, s.EndedAt = msTime(started), msTime(last)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	return out, nil
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// LoadFull reads the full analyses of as (from ListAnalyzed) into their
// Full, in one query per index; those that have one already, or none, are
// left as they are.
func LoadFull(ctx context.Context, as []*Analyzed) error {
	byIndex := map[*Index][]*Analyzed{}
	for _, a := range as {
		if a.x != nil && a.Full == nil && a.Brief != nil {
			byIndex[a.x] = append(byIndex[a.x], a)
		}
	}
	for x, as := range byIndex {
		if err := x.loadFull(ctx, as); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) loadFull(ctx context.Context, as []*Analyzed) error {
	want := make(map[int64]*Analyzed, len(as))
	ids := make([]any, 0, len(as))
	for _, a := range as {
		want[a.id] = a
		ids = append(ids, a.id)
	}
	conn, err := x.mapped(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// SQLite bounds the parameters of one statement (32766): ask in chunks.
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 30000)]
		ids = ids[len(chunk):]
		rows, err := conn.QueryContext(ctx, `SELECT session, full FROM history_analyses_full WHERE session IN (`+placeholders(len(chunk))+`)`, chunk...)
		if err != nil {
			return fmt.Errorf("query history: %w", err)
		}
		for rows.Next() {
			var id int64
			var full []byte
			if err := rows.Scan(&id, &full); err != nil {
				rows.Close()
				return fmt.Errorf("query history: %w", err)
			}
			if a := want[id]; a != nil {
				a.Full = full
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("query history: %w", err)
		}
	}
	return nil
}

// mapped is a read connection that maps the database rather than read it
// page by page: a listing of thousands of sessions touches megabytes, and
// reading them through SQLite's page cache (a pread and an allocation a
// page) was a third of a warm `muster stats`.
func (x *Index) mapped(ctx context.Context) (*sql.Conn, error) {
	conn, err := x.st.R.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 268435456`); err != nil {
		conn.Close()
		return nil, fmt.Errorf("query history: %w", err)
	}
	return conn, nil
}

// Count returns how many sessions q selects, ignoring its Limit.
func (x *Index) Count(ctx context.Context, q Query) (int, error) {
	where, args := q.where()
	var n int
	err := x.st.R.QueryRowContext(ctx, `SELECT count(*) FROM history_sessions`+where, args...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("query history: %w", err)
	}
	return n, nil
}

// byID returns the sessions whose native id is id, or starts with it when
// prefix is set, limited to provider when it is not empty.
func (x *Index) byID(ctx context.Context, provider, id string, prefix bool) ([]transcript.Session, error) {
	q := `SELECT summary FROM history_sessions WHERE `
	var args []any
	if prefix {
		q += `substr(native_id, 1, ?) = ?`
		args = append(args, len([]rune(id)), id)
	} else {
		q += `native_id = ?`
		args = append(args, id)
	}
	if provider != "" {
		q += ` AND provider = ?`
		args = append(args, provider)
	}
	// Files that hold something said come first: Gemini CLI 0.61 writes
	// an empty chat file of the same id when a chat is resumed (see
	// internal/provider/gemini), newer than the conversation when nothing
	// was said after the resume.
	q += ` ORDER BY (prompt_count > 0 OR tool_call_count > 0) DESC, last_ms DESC, path, ord LIMIT 200`
	return x.query(ctx, q, args...)
}

func (x *Index) byPath(ctx context.Context, path string) ([]transcript.Session, error) {
	return x.query(ctx, `SELECT summary FROM history_sessions WHERE path = ? ORDER BY ord`, path)
}

func (x *Index) query(ctx context.Context, q string, args ...any) ([]transcript.Session, error) {
	rows, err := x.st.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	defer rows.Close()
	var out []transcript.Session
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("query history: %w", err)
		}
		var s transcript.Session
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode history summary: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// IDs returns the native id of every indexed session, sorted: what a
// shortest unique prefix must be unique among.
func (x *Index) IDs(ctx context.Context) ([]string, error) {
	rows, err := x.st.R.QueryContext(ctx, `SELECT native_id FROM history_sessions ORDER BY native_id`)
	if err != nil {
		return nil, fmt.Errorf("query history: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("query history: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Subagents returns the sub-agent sessions of a conversation (same
// provider, ParentID = its native id), oldest first; Session.ParentCallID
// names the parent's tool call that started each, where the format records
// it. Load each with Load to nest it under that call.
func (x *Index) Subagents(ctx context.Context, parent Resolved) ([]Resolved, error) {
	if parent.Session.ID == "" {
		return nil, nil
	}
	ss, err := x.query(ctx, `SELECT summary FROM history_sessions WHERE parent_id = ? AND provider = ?
		ORDER BY started_ms, path, ord`, parent.Session.ID, parent.Session.Provider)
	if err != nil {
		return nil, err
	}
	out := make([]Resolved, len(ss))
	for i, s := range ss {
		out[i] = Resolved{Session: s, Source: parent.Source}
	}
	return out, nil
}
