package cursor

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/transcript"
)

// storeMeta is the JSON in a chat store's meta row "0".
type storeMeta struct {
	AgentID       string `json:"agentId"`
	Name          string `json:"name"`
	Mode          string `json:"mode"`
	CreatedAt     int64  `json:"createdAt"`
	LastUsedModel string `json:"lastUsedModel"`
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// readMeta opens a store.db read-only and reads its meta.
func readMeta(ctx context.Context, path string) (storeMeta, error) {
	db, closeDB, err := transcript.OpenSQLite(ctx, path)
	if err != nil {
		return storeMeta{}, err
	}
	defer closeDB()
	return metaOf(ctx, db)
}

func metaOf(ctx context.Context, db *sql.DB) (storeMeta, error) {
	var value sql.NullString
	err := db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = '0'").Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return storeMeta{}, nil
	}
	if err != nil {
		return storeMeta{}, fmt.Errorf("read meta: %w", err)
	}
	raw := []byte(strings.TrimSpace(value.String))
	if dec, err := hex.DecodeString(string(raw)); err == nil {
		raw = dec
	}
	var m storeMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return storeMeta{}, fmt.Errorf("read meta: %w", err)
	}
	return m, nil
}

// maxBlob bounds the blobs scanned for messages.
const maxBlob = 16 << 20

// parseStore reads a chat that only has its store.db.
func parseStore(ctx context.Context, path string, opts transcript.ParseOptions) (*transcript.Transcript, error) {
	db, closeDB, err := transcript.OpenSQLite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read cursor chat store: %w", err)
	}
	defer closeDB()
	b := newBuilder(path, filepath.Base(filepath.Dir(path)), opts)
	m, err := metaOf(ctx, db)
	if err != nil {
		b.warnf("%v", err)
	}
	if m.AgentID != "" {
		b.t.ID = m.AgentID
	}
	b.meta(m)
	rows, err := db.QueryContext(ctx, "SELECT id, data FROM blobs ORDER BY rowid")
	if err != nil {
		b.warnf("read blobs: %v", err)
		return b.finish(), nil
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var id sql.NullString
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			b.warnf("read blobs: %v", err)
			break
		}
		if len(data) > maxBlob {
			b.warnf("blob %s: %d bytes, skipped", id.String, len(data))
			continue
		}
		for _, msg := range embeddedMessages(data) {
			if seen[msg.Raw] {
				continue
			}
			seen[msg.Raw] = true
			b.storeMessage(msg)
		}
	}
	if err := rows.Err(); err != nil {
		b.warnf("read blobs: %v", err)
	}
	cursorDir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path)))) // chats/<md5>/<id>/store.db
	if filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))) == "chats" {
		b.t.CWD = findByHash(filepath.Join(cursorDir, "projects"), filepath.Base(filepath.Dir(filepath.Dir(path))))
	}
	return b.finish(), nil
}

// embeddedMessages finds the JSON objects with a "role" inside a blob: the
// whole blob when it is JSON, else every balanced object in the binary
// wrapper.
func embeddedMessages(data []byte) []transcript.Value {
	s := string(data)
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && transcript.ValidJSONString(t) {
		if v := transcript.Parse(t); v.Get("role").IsString() {
			return []transcript.Value{v}
		}
		return nil
	}
	var out []transcript.Value
	// Each failed attempt may scan to the end of the blob; bound the total
	// so a hostile blob costs at most a few passes.
	budget := 8 * len(s)
	for i := 0; i < len(s) && budget > 0; {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		if k := strings.TrimLeft(s[start+1:min(len(s), start+64)], " \t\r\n"); !strings.HasPrefix(k, `"`) {
			i = start + 1
			continue
		}
		end := objectEnd(s, start)
		if end < 0 {
			budget -= len(s) - start
		} else {
			budget -= end - start
		}
		if end < 0 {
			i = start + 1
			continue
		}
		obj := s[start:end]
		if transcript.ValidJSONString(obj) {
			if v := transcript.Parse(obj); v.Get("role").IsString() {
				out = append(out, v)
				i = end
				continue
			}
		}
		i = start + 1
	}
	return out
}

// objectEnd returns the index just past the object that opens at s[start],
// honouring strings, or -1. The scan stops at a byte JSON never contains
// outside strings below 0x20 other than white space, which bounds the work
// spent on binary data.
func objectEnd(s string, start int) int {
	depth, inStr, esc := 0, false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			case c < 0x20:
				return -1
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return -1
		}
	}
	return -1
}

// storeMessage converts one {role, content, providerOptions} message.
func (b *builder) storeMessage(v transcript.Value) {
	model := v.Get("providerOptions.cursor.modelName").Str()
	content := v.Get("content")
	switch v.Get("role").Str() {
	case "user":
		if content.IsString() {
			b.prompt(userQuery(content.Str()), nil, false)
			return
		}
		var text []string
		content.ForEach(func(_ string, p transcript.Value) bool {
			if p.Get("type").Str() == "text" {
				text = append(text, p.Get("text").Str())
			}
			return true
		})
		if len(text) > 0 {
			b.prompt(userQuery(strings.Join(text, "\n")), nil, false)
		}
	case "assistant":
		if content.IsString() {
			b.say(transcript.AssistantText, content.Str(), model)
			return
		}
		content.ForEach(func(_ string, p transcript.Value) bool {
			m := p.Get("providerOptions.cursor.modelName").Str()
			if m == "" {
				m = model
			}
			switch p.Get("type").Str() {
			case "text":
				b.say(transcript.AssistantText, p.Get("text").Str(), m)
			case "reasoning":
				b.say(transcript.Thinking, p.Get("text").Str(), m)
			case "tool-call":
				var args string
				if a := p.Get("args"); a.IsObject() {
					args = a.Raw
				}
				id := p.Get("toolCallId").String()
				b.toolUse(id, id == "", p.Get("toolName").Str(), args, m)
			}
			if m != "" {
				b.t.Model = m
			}
			return true
		})
	case "tool":
		content.ForEach(func(_ string, p transcript.Value) bool {
			if p.Get("type").Str() == "tool-result" {
				r := p.Get("result")
				text := r.Str()
				if !r.IsString() {
					text = r.Raw
				}
				b.toolResult(p.Get("toolCallId").String(), text, p.Get("isError").IsTrue())
			}
			return true
		})
	}
}
