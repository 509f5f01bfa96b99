package history

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Snippets are cut here rather than by FTS5's snippet(), which tokenizes
// and scores every fragment of every column of each row: for 50 hits of
// a few kilobytes each it cost about 60 ms, as much as the whole query
// budget. The scan below tokenizes as FTS5's unicode61 tokenizer does
// (runs of letters, digits and private-use characters, compared without
// case), which is enough to find and highlight the matches. It does not
// remove diacritics from precomposed letters as the index does: a match
// found through that folding is still listed, with a snippet from the
// start of its column and no highlight.

const (
	snippetTokens = 24        // words in a snippet, as snippet()'s last argument was
	snippetScan   = 256 << 10 // bytes of a column scanned for the best window
	snippetLead   = 8         // words kept before the first match
)

// snippetTerm is one token of a query word, folded.
type snippetTerm struct {
	text   string
	prefix bool
}

func snippetTerms(words []queryWord) []snippetTerm {
	var out []snippetTerm
	for _, w := range words {
		toks := tokens(w.text, len(w.text))
		for i, t := range toks {
			out = append(out, snippetTerm{fold(w.text[t[0]:t[1]]), w.prefix && i == len(toks)-1})
		}
	}
	return out
}

func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Co)
}

// tokens returns the [start, end) byte offsets of the tokens of s within
// its first limit bytes.
func tokens(s string, limit int) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		if i >= limit {
			break
		}
		if isTokenRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		end := len(s)
		if end > limit {
			end = limit
			for end > start && !utf8.RuneStart(s[end]) {
				end--
			}
			// The token goes on past the limit; keep it whole.
			for end < len(s) {
				r, n := utf8.DecodeRuneInString(s[end:])
				if !isTokenRune(r) {
					break
				}
				end += n
			}
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// matchTerm returns the index of the term tok matches, or -1.
func matchTerm(tok string, terms []snippetTerm) int {
	f := fold(tok)
	for i, t := range terms {
		if f == t.text || t.prefix && strings.HasPrefix(f, t.text) {
			return i
		}
	}
	return -1
}

// cutSnippet returns an excerpt of the column that best shows the terms,
// the matched words between markOpen and markClose. Columns are tried with
// the tier's own first; the window with the most distinct terms wins,
// the earliest on a tie.
func cutSnippet(cols [3]string, tier int, terms []snippetTerm) string {
	order := []int{tier}
	for c := range cols {
		if c != tier {
			order = append(order, c)
		}
	}
	bestCol, bestScore := -1, 0
	var bestToks [][2]int
	var bestMatch []int
	bestStart := 0
	for _, c := range order {
		toks := tokens(cols[c], snippetScan)
		match := make([]int, len(toks))
		for i, t := range toks {
			match[i] = matchTerm(cols[c][t[0]:t[1]], terms)
		}
		start, score := bestWindow(match, len(terms))
		if score > bestScore {
			bestCol, bestScore, bestToks, bestMatch, bestStart = c, score, toks, match, start
		}
		if score == len(terms) {
			break
		}
	}
	if bestCol < 0 {
		// Nothing to highlight (a match through diacritic folding): the
		// start of the tier's column.
		c := cols[tier]
		toks := tokens(c, 4<<10)
		if len(toks) == 0 {
			return ""
		}
		end := toks[min(len(toks), snippetTokens)-1][1]
		return trimText(c, 0, end)
	}
	col := cols[bestCol]
	lo := max(bestStart-snippetLead, 0)
	hi := min(lo+snippetTokens, len(bestToks))
	var b strings.Builder
	if lo > 0 {
		b.WriteString("…")
	}
	// Widen the cut to whitespace so that a secret is never cut in half
	// (a half would escape redaction).
	from := widenLeft(col, bestToks[lo][0])
	to := widenRight(col, bestToks[hi-1][1])
	at := from
	for i := lo; i < hi; i++ {
		if bestMatch[i] < 0 {
			continue
		}
		t := bestToks[i]
		b.WriteString(col[at:t[0]])
		b.WriteString(markOpen)
		b.WriteString(col[t[0]:t[1]])
		b.WriteString(markClose)
		at = t[1]
	}
	b.WriteString(col[at:to])
	if strings.TrimSpace(col[to:]) != "" {
		b.WriteString("…")
	}
	return b.String()
}

// bestWindow returns the start of the window of snippetTokens tokens
// holding the most distinct terms, and that count.
func bestWindow(match []int, nterms int) (start, score int) {
	count := make([]int, nterms)
	distinct := 0
	best, bestAt := 0, 0
	for i, m := range match {
		if m >= 0 {
			if count[m] == 0 {
				distinct++
			}
			count[m]++
		}
		if j := i - snippetTokens; j >= 0 && match[j] >= 0 {
			if count[match[j]]--; count[match[j]] == 0 {
				distinct--
			}
		}
		if distinct > best {
			best = distinct
			// The window's first match.
			bestAt = max(i-snippetTokens+1, 0)
			for bestAt < i && match[bestAt] < 0 {
				bestAt++
			}
			if best == nterms {
				break
			}
		}
	}
	return bestAt, best
}

// widenLeft and widenRight move a cut to the nearest white space within
// 200 bytes.
func widenLeft(s string, i int) int {
	for j := i; j > 0 && i-j < 200; j-- {
		if isSpace(s[j-1]) {
			return j
		}
	}
	if i <= 200 {
		return 0
	}
	return i
}

func widenRight(s string, i int) int {
	for j := i; j < len(s) && j-i < 200; j++ {
		if isSpace(s[j]) {
			return j
		}
	}
	if len(s)-i <= 200 {
		return len(s)
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func trimText(s string, from, to int) string {
	out := s[from:to]
	if strings.TrimSpace(s[to:]) != "" {
		out += "…"
	}
	return out
}
