package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
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
	// Subagent is the native id of the sub-agent whose transcript matched,
	// "" when the conversation's own did.
	Subagent string
	// Tier says where the session holds every word of the query
	// (TierMeta, TierSaid, TierTools); lower is better.
	Tier int
}

// Snippet markers: control characters, which the stored text never holds
// (ftsClean).
const (
	markOpen  = "\x02"
	markClose = "\x03"
)

// MatchExpr turns user input into an FTS5 query that cannot be a syntax
// error: every word is split into its tokens as the index's tokenizer
// splits text, each quoted (the index keeps no positions, so FTS5 finds a
// word such as "foo.bar" in every session holding foo and bar, and Search
// then keeps those holding it literally, see literalWords); words without a
// letter or digit (which match nothing) are dropped. The last token of a
// word of at least prefixMin characters, or of one that ends in *, is
// matched as a prefix, so that "deploy" finds "deployment" and the start
// of an id finds the id; a shorter word is a whole word, because a prefix
// of one or two letters expands to thousands of terms (in an index of
// 10,000 sessions, "w3"* took over a second where "w3" takes one
// millisecond). It returns "" when nothing is left.
func MatchExpr(text string) string {
	return matchExpr(queryWords(text), isTokenRune)
}

func matchExpr(words []queryWord, tokenRune func(rune) bool) string {
	var parts []string
	for _, w := range words {
		toks := strings.FieldsFunc(w.text, func(r rune) bool { return !tokenRune(r) })
		for i, t := range toks {
			p := `"` + t + `"`
			if w.prefix && i == len(toks)-1 {
				p += "*"
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// asciiToken is the fallback tokenization of a query that the index's
// tokenizer split further than isTokenRune (its Unicode tables are older
// than Go's): only ASCII letters and digits, which it never splits.
func asciiToken(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// prefixMin is the length from which a word is matched as a prefix.
const prefixMin = 4

// maxQueryWords bounds a query: each word is a term to intersect.
const maxQueryWords = 32

type queryWord struct {
	text   string
	prefix bool
}

func queryWords(text string) []queryWord {
	// NUL would end the query string early in SQLite; other control
	// characters and invalid UTF-8 only separate words.
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, " "))
	var out []queryWord
	for _, w := range strings.Fields(text) {
		star := strings.HasSuffix(w, "*")
		w = strings.TrimRight(w, "*")
		if strings.IndexFunc(w, isTokenRune) < 0 {
			continue
		}
		n := 0
		for _, r := range w {
			if isTokenRune(r) {
				n++
			}
		}
		out = append(out, queryWord{w, star || n >= prefixMin})
		if len(out) == maxQueryWords {
			break
		}
	}
	return out
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

// Match tiers, best first: where a session holds every word of a query.
const (
	TierMeta  = 0 // its title, first prompt, directory, id or model
	TierSaid  = 1 // what was said (with the above)
	TierTools = 2 // only with its tool calls
)

// tierExprs are the FTS5 queries of each tier for a match expression e:
// each tier leaves out the sessions of the tiers before it.
func tierExprs(e string) [3]string {
	meta := "{meta} : (" + e + ")"
	said := "{meta said} : (" + e + ")"
	return [3]string{
		meta,
		"(" + said + ") NOT (" + meta + ")",
		"(" + e + ") NOT (" + said + ")",
	}
}

// Search runs a full-text query. Sessions are ranked by where they hold
// every word (Tier: the title, first prompt, directory or id first, then
// what was said, then tool calls), newest first within a tier. It does not
// rank by bm25: bm25 scores every matching session, and a common word
// matches nearly all of them (bm25 over 10,000 sessions took 100 ms to
// 2 s a query, against 1 to 35 ms for the tiers); recency is what people
// look for in their own history. Snippets are cut from the kept sessions
// only. An empty query finds nothing.
func (x *Index) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	words := queryWords(q.Text)
	hits, err := x.search(ctx, q, words, matchExpr(words, isTokenRune))
	if err != nil && strings.Contains(err.Error(), "phrase queries are not supported") {
		hits, err = x.search(ctx, q, words, matchExpr(words, asciiToken))
	}
	return hits, err
}

func (x *Index) search(ctx context.Context, q SearchQuery, words []queryWord, expr string) ([]Hit, error) {
	if expr == "" {
		return nil, nil
	}
	where, args := q.filters()
	var found []found
	seen := map[int64]bool{}
	parents := map[[2]string]int64{}
	literal := literalWords(words)
	for tier, te := range tierExprs(expr) {
		// No LIMIT: sub-agent rows fold into their parent, so how many
		// rows make Limit conversations is unknown; reading stops there.
		sqlq := `SELECT s.rowid, s.provider, s.parent_id FROM history_sessions s
			WHERE s.rowid IN (SELECT rowid FROM history_fts WHERE history_fts MATCH ?)` + where +
			` ORDER BY s.last_ms DESC, s.rowid DESC`
		done, err := x.collect(ctx, sqlq, append([]any{te}, args...), tier, q.Limit, &found, seen, parents, literal)
		if err != nil {
			return nil, fmt.Errorf("search history: %w", err)
		}
		if done {
			break
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	return x.hits(ctx, found, words)
}

// found is a conversation a search kept: show is its row, text the row
// (its own or a sub-agent's) whose text matched.
type found struct {
	show, text int64
	tier       int
}

// collect appends the conversations of a tier query's rows to out, a
// sub-agent's as its parent's (itself when its parent is not indexed),
// each once; it reports whether limit is reached.
func (x *Index) collect(ctx context.Context, sqlq string, args []any, tier, limit int, out *[]found, seen map[int64]bool, parents map[[2]string]int64, literal []*regexp.Regexp) (bool, error) {
	rows, err := x.st.R.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var prov, parent string
		if err := rows.Scan(&id, &prov, &parent); err != nil {
			return false, err
		}
		if len(literal) > 0 {
			ok, err := x.holdsLiterally(ctx, id, literal)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
		}
		show := id
		if parent != "" {
			k := [2]string{prov, parent}
			p, ok := parents[k]
			if !ok {
				err := x.st.R.QueryRowContext(ctx, `SELECT rowid FROM history_sessions WHERE native_id = ? AND provider = ? AND parent_id = ''
					ORDER BY last_ms DESC LIMIT 1`, parent, prov).Scan(&p)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return false, err
				}
				parents[k] = p
			}
			if p != 0 {
				show = p
			}
		}
		if seen[show] {
			continue
		}
		seen[show] = true
		*out = append(*out, found{show, id, tier})
		if limit > 0 && len(*out) >= limit {
			return true, nil
		}
	}
	return false, rows.Err()
}

// literalWords returns, for each query word the tokenizer splits into
// several tokens ("fake-created", "foo.bar"), a pattern matching those
// tokens in order with only separators between them. The index keeps no
// positions (detail=column), so FTS5 alone finds every session that holds
// the tokens anywhere; a person who typed a hyphenated name means that
// name.
func literalWords(words []queryWord) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, w := range words {
		toks := strings.FieldsFunc(w.text, func(r rune) bool { return !isTokenRune(r) })
		if len(toks) < 2 {
			continue
		}
		for i, t := range toks {
			toks[i] = regexp.QuoteMeta(t)
		}
		pat := `(?i)` + strings.Join(toks, `[^\pL\pN\p{Co}]+`)
		if w.prefix {
			out = append(out, regexp.MustCompile(pat))
		} else {
			out = append(out, regexp.MustCompile(pat+`(?:[^\pL\pN\p{Co}]|$)`))
		}
	}
	return out
}

// holdsLiterally reports whether the indexed text of row id matches every
// literal pattern.
func (x *Index) holdsLiterally(ctx context.Context, id int64, literal []*regexp.Regexp) (bool, error) {
	var cols [3]sql.NullString
	err := x.st.R.QueryRowContext(ctx, `SELECT meta, said, tools FROM history_fts WHERE rowid = ?`, id).
		Scan(&cols[0], &cols[1], &cols[2])
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, re := range literal {
		if !re.MatchString(cols[0].String) && !re.MatchString(cols[1].String) && !re.MatchString(cols[2].String) {
			return false, nil
		}
	}
	return true, nil
}

// hits reads the summaries of the kept conversations and the text that
// matched, and cuts their snippets, in the order found.
func (x *Index) hits(ctx context.Context, fs []found, words []queryWord) ([]Hit, error) {
	out := make([]Hit, len(fs))
	var ids []any
	for _, f := range fs {
		ids = append(ids, f.show, f.text)
	}
	summaries := map[int64][]byte{}
	texts := map[int64][3]string{}
	rows, err := x.st.R.QueryContext(ctx, `SELECT s.rowid, s.summary, f.meta, f.said, f.tools
		FROM history_sessions s LEFT JOIN history_fts f ON f.rowid = s.rowid
		WHERE s.rowid IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return nil, fmt.Errorf("search history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var raw []byte
		var cols [3]sql.NullString
		if err := rows.Scan(&id, &raw, &cols[0], &cols[1], &cols[2]); err != nil {
			return nil, fmt.Errorf("search history: %w", err)
		}
		summaries[id] = raw
		texts[id] = [3]string{cols[0].String, cols[1].String, cols[2].String}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search history: %w", err)
	}
	terms := snippetTerms(words)
	for i, f := range fs {
		h := &out[i]
		if err := json.Unmarshal(summaries[f.show], &h.Session); err != nil {
			return nil, fmt.Errorf("decode history summary: %w", err)
		}
		h.Tier = f.tier
		h.Snippet, h.Highlights = markedSnippet(cutSnippet(texts[f.text], f.tier, terms))
		if f.text != f.show {
			var sub transcript.Session
			if json.Unmarshal(summaries[f.text], &sub) == nil {
				h.Subagent = sub.ID
			}
		}
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
