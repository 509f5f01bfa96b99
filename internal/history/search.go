package history

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/redact"
	"github.com/musterhq/muster/internal/transcript"
)

// SearchQuery is a full-text search over everything said in the indexed
// sessions, with the filters of a listing.
type SearchQuery struct {
	// Text is what the user typed: words, all of which must start words
	// of a session (in any column, any order). Any input is a valid
	// query: FTS5 syntax (quotes, -, *, NEAR, AND, column filters) has no
	// meaning (see MatchExpr).
	Text     string
	Provider string
	// Dir keeps sessions whose directory is Dir or below it.
	Dir string
	// Since keeps sessions last active at or after it; Until those that
	// started before it. Zero means no bound.
	Since, Until time.Time
	// Limit caps the result; 0 means no cap.
	Limit int
}

// Hit is a session a search found, best first.
type Hit struct {
	Session transcript.Session
	// Snippet is an excerpt around the best match, redacted, on one line.
	Snippet string
	// Highlights are the [start, end) byte offsets of the matched words in
	// Snippet, in order.
	Highlights [][2]int
	// Rank is the bm25 score; lower is better.
	Rank float64
}

// Snippet markers: control characters, which the stored text never holds
// (ftsClean).
const (
	markOpen  = "\x02"
	markClose = "\x03"
)

// MatchExpr turns user input into an FTS5 query that cannot be a syntax
// error: every word becomes a quoted phrase of its tokens (quotes doubled)
// matched as a prefix, so that "deploy" finds "deployment" and the start of
// an id finds the id, as the substring search before it did; words without
// a letter or digit (which match nothing) are dropped, and so is a
// trailing *. It returns "" when nothing is left.
func MatchExpr(text string) string {
	var parts []string
	// NUL would end the query string early in SQLite; other control
	// characters and invalid UTF-8 only separate words.
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, " "))
	for _, w := range strings.Fields(text) {
		w = strings.TrimRight(w, "*")
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) < 0 {
			continue
		}
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"*`)
	}
	return strings.Join(parts, " ")
}

func (q SearchQuery) filters() (string, []any) {
	var conds []string
	var args []any
	if q.Provider != "" {
		conds = append(conds, "s.provider = ?")
		args = append(args, q.Provider)
	}
	if q.Dir != "" {
		conds = append(conds, dirCond)
		args = append(args, dirArgs(q.Dir)...)
	}
	if !q.Since.IsZero() {
		conds = append(conds, "s.last_ms >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		conds = append(conds, untilCond)
		args = append(args, q.Until.UnixMilli())
	}
	conds = append(conds, "(s.prompt_count > 0 OR s.tool_call_count > 0)")
	return " AND " + strings.Join(conds, " AND "), args
}

// dirCond keeps a directory and what is below it; substr, not LIKE: a
// directory may hold % or _. Columns are unqualified: history_fts has
// none of these names.
const dirCond = "(cwd IN (?, ?) OR substr(cwd, 1, ?) = ?)"

func dirArgs(dir string) []any {
	d := strings.TrimRight(dir, "/")
	prefix := d + "/"
	if d == "" {
		d = "/"
	}
	return []any{d, prefix, len(prefix), prefix}
}

// untilCond keeps sessions that started (else were last active) before ?.
const untilCond = "CASE WHEN started_ms > 0 THEN started_ms ELSE last_ms END < ?"

// Search runs a full-text query, best match first (bm25, with matches in
// the title, first prompt, directory or id weighing most, then prompts and
// replies, then tool calls). An empty query finds nothing.
func (x *Index) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	expr := MatchExpr(q.Text)
	if expr == "" {
		return nil, nil
	}
	where, args := q.filters()
	sqlq := `SELECT s.summary, snippet(history_fts, -1, '` + markOpen + `', '` + markClose + `', '…', 24), bm25(history_fts, 4.0, 2.0, 1.0) AS rank
		FROM history_fts JOIN history_sessions s ON s.rowid = history_fts.rowid
		WHERE history_fts MATCH ?` + where + ` ORDER BY rank, s.last_ms DESC`
	if q.Limit > 0 {
		sqlq += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := x.st.R.QueryContext(ctx, sqlq, append([]any{expr}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("search history: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var raw []byte
		var snip string
		var h Hit
		if err := rows.Scan(&raw, &snip, &h.Rank); err != nil {
			return nil, fmt.Errorf("search history: %w", err)
		}
		if err := json.Unmarshal(raw, &h.Session); err != nil {
			return nil, fmt.Errorf("decode history summary: %w", err)
		}
		h.Snippet, h.Highlights = markedSnippet(snip)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search history: %w", err)
	}
	return out, nil
}

// markedSnippet turns an FTS5 snippet with markers into one line of
// redacted text and the offsets of its highlights. When redaction changed
// the text, the matched words are found again in what is left (a match
// inside a secret is gone with it).
func markedSnippet(s string) (string, [][2]int) {
	s = oneLine(s)
	var plain strings.Builder
	var spans [][2]int
	var words []string
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], markClose)
		if j < 0 {
			break
		}
		plain.WriteString(s[:i])
		w := s[i+len(markOpen) : i+j]
		spans = append(spans, [2]int{plain.Len(), plain.Len() + len(w)})
		words = append(words, w)
		plain.WriteString(w)
		s = s[i+j+len(markClose):]
	}
	plain.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, markOpen, ""), markClose, ""))
	text := plain.String()
	red, n := redact.String(text)
	if n == 0 && red == text {
		return text, spans
	}
	return red, findWords(red, words)
}

// findWords returns the spans of whole-word occurrences of words in s.
func findWords(s string, words []string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		best := -1
		for k, w := range words {
			if w != "" && strings.HasPrefix(s[i:], w) && wordEdge(s, i, i+len(w)) && (best < 0 || len(w) > len(words[best])) {
				best = k
			}
		}
		if best >= 0 {
			spans = append(spans, [2]int{i, i + len(words[best])})
			i += len(words[best])
			continue
		}
		i++
	}
	return spans
}

func wordEdge(s string, lo, hi int) bool {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
	if lo > 0 {
		r := lastRune(s[:lo])
		if isWord(r) {
			return false
		}
	}
	if hi < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[hi:]); isWord(r) {
			return false
		}
	}
	return true
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// oneLine folds runs of white space (newlines included) into one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
