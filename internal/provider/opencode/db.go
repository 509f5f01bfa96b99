package opencode

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// parseDB reads every session of an opencode.db. Messages are loaded first
// (small), parts are streamed in (message_id, id) order and converted as
// they come, then each session's messages are added in (time_created, id)
// order.
func parseDB(ctx context.Context, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	db, closeDB, err := transcript.OpenSQLite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read opencode database: %w", err)
	}
	defer closeDB()
	// One file, several sessions: their items go to Transcript.Items.
	opts.Item = nil
	r := &dbReader{ctx: ctx, db: db, path: path, opts: opts}
	out, err := r.read()
	if err != nil {
		return nil, fmt.Errorf("read opencode database %s: %w", path, err)
	}
	return out, nil
}

type dbReader struct {
	ctx  context.Context
	db   *sql.DB
	path string
	opts transcript.ParseOptions
}

type dbSession struct {
	b         *builder
	projectID string
	msgs      []*message
}

// col selects name when the table has it, else a neutral value.
func col(cols map[string]bool, name, missing string) string {
	if cols[name] {
		return name
	}
	return missing
}

// orderBy lists the columns the table has, for an ORDER BY clause.
func orderBy(cols map[string]bool, names ...string) string {
	var have []string
	for _, n := range names {
		if cols[n] {
			have = append(have, n)
		}
	}
	return strings.Join(have, ", ")
}

func (r *dbReader) read() ([]*transcript.Transcript, error) {
	scols, err := transcript.SQLiteColumns(r.ctx, r.db, "session")
	if err != nil {
		return nil, err
	}
	if !scols["id"] {
		return nil, nil // not (yet) an OpenCode database with sessions
	}
	worktrees, err := r.worktrees()
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf("SELECT id, %s, %s, %s, %s, %s, %s, %s FROM session ORDER BY %s",
		col(scols, "project_id", "''"), col(scols, "parent_id", "''"), col(scols, "directory", "''"),
		col(scols, "title", "''"), col(scols, "model", "''"), col(scols, "time_created", "0"),
		col(scols, "time_updated", "0"), orderBy(scols, "time_created", "id"))
	rows, err := r.db.QueryContext(r.ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	var order []*dbSession
	byID := map[string]*dbSession{}
	for rows.Next() {
		var id, project, parent, dir, title, model sql.NullString
		var created, updated sql.NullInt64
		if err := rows.Scan(&id, &project, &parent, &dir, &title, &model, &created, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read sessions: %w", err)
		}
		in := info{id: id.String, parentID: parent.String, directory: dir.String, title: title.String,
			created: created.Int64, updated: updated.Int64}
		if model.String != "" {
			in.modelID = transcript.Parse(model.String).Get("id").String()
		}
		s := &dbSession{b: newBuilder(r.path, in, r.opts), projectID: project.String}
		byID[in.id] = s
		order = append(order, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}

	msgs, err := r.messages(byID)
	if err != nil {
		return nil, err
	}
	if err := r.parts(byID, msgs); err != nil {
		return nil, err
	}
	out := make([]*transcript.Transcript, 0, len(order))
	for _, s := range order {
		for _, m := range s.msgs {
			s.b.add(m)
		}
		t := s.b.finish()
		if t.CWD == "" {
			t.CWD = worktrees[s.projectID]
		}
		out = append(out, t)
	}
	return out, nil
}

func (r *dbReader) worktrees() (map[string]string, error) {
	pcols, err := transcript.SQLiteColumns(r.ctx, r.db, "project")
	if err != nil || !pcols["id"] || !pcols["worktree"] {
		return nil, err
	}
	rows, err := r.db.QueryContext(r.ctx, "SELECT id, worktree FROM project")
	if err != nil {
		return nil, fmt.Errorf("read projects: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, wt sql.NullString
		if err := rows.Scan(&id, &wt); err != nil {
			return nil, fmt.Errorf("read projects: %w", err)
		}
		out[id.String] = wt.String
	}
	return out, rows.Err()
}

// messages loads every message of a known session, in session order.
func (r *dbReader) messages(byID map[string]*dbSession) (map[string]*message, error) {
	mcols, err := transcript.SQLiteColumns(r.ctx, r.db, "message")
	if err != nil {
		return nil, err
	}
	if !mcols["id"] || !mcols["session_id"] || !mcols["data"] {
		return nil, nil
	}
	rows, err := r.db.QueryContext(r.ctx, "SELECT id, session_id, data FROM message ORDER BY "+orderBy(mcols, "session_id", "time_created", "id"))
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	out := map[string]*message{}
	for rows.Next() {
		var id, sid, data sql.NullString
		if err := rows.Scan(&id, &sid, &data); err != nil {
			return nil, fmt.Errorf("read messages: %w", err)
		}
		s := byID[sid.String]
		if s == nil {
			continue
		}
		doc := strings.TrimSpace(data.String)
		if !transcript.ValidJSONString(doc) || !transcript.Parse(doc).IsObject() {
			s.b.warnf("message %s: malformed JSON", id.String)
			continue
		}
		m := newMessage(id.String, transcript.Parse(doc))
		m.id = id.String
		m.session = sid.String
		out[m.id] = m
		s.msgs = append(s.msgs, m)
	}
	return out, rows.Err()
}

// parts streams every part and converts it into its message.
func (r *dbReader) parts(byID map[string]*dbSession, msgs map[string]*message) error {
	pcols, err := transcript.SQLiteColumns(r.ctx, r.db, "part")
	if err != nil {
		return err
	}
	if !pcols["id"] || !pcols["message_id"] || !pcols["data"] {
		return nil
	}
	rows, err := r.db.QueryContext(r.ctx, "SELECT message_id, id, data FROM part ORDER BY message_id, id")
	if err != nil {
		return fmt.Errorf("read parts: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var mid, id, data sql.NullString
		if err := rows.Scan(&mid, &id, &data); err != nil {
			return fmt.Errorf("read parts: %w", err)
		}
		if n++; n%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		m := msgs[mid.String]
		if m == nil {
			continue
		}
		b := byID[m.session].b
		doc := strings.TrimSpace(data.String)
		if !transcript.ValidJSONString(doc) || !transcript.Parse(doc).IsObject() {
			b.warnf("part %s: malformed JSON", id.String)
			continue
		}
		b.part(m, id.String, transcript.Parse(doc))
	}
	return rows.Err()
}
