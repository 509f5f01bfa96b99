package history

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

var realCLI = filepath.Join(providertest.Shared, "research", "real-cli")

func refs(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Session.Provider+":"+h.Session.ID)
	}
	return out
}

func search(t *testing.T, x *Index, q SearchQuery) []Hit {
	t.Helper()
	hits, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	return hits
}

// TestSearchRealTranscripts indexes the Claude and Codex transcripts the
// real CLIs wrote and finds words said mid-session and in tool outputs,
// then follows an append and a deletion.
func TestSearchRealTranscripts(t *testing.T) {
	for _, d := range []string{"claude/transcripts", "codex/transcripts"} {
		if _, err := os.Stat(filepath.Join(realCLI, d)); err != nil {
			t.Skipf("real-cli transcripts not found: %v", err)
		}
	}
	home := t.TempDir()
	providertest.CopyTree(t, filepath.Join(realCLI, "claude/transcripts"), home)
	providertest.CopyTree(t, filepath.Join(realCLI, "codex/transcripts"), home)
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	x := openIndex(t, "v1")
	srcs := all.Sources()
	refresh := func() RefreshStats {
		t.Helper()
		st, err := x.Refresh(t.Context(), srcs, env, RefreshOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	refresh()

	const claude2 = "claude:22222222-2222-4333-8444-555555555555"
	const codex = "codex:01a22c19-5448-7d02-89e7-73b160cc00ef"
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"rejected", []string{claude2}},                                        // only in the last tool output
		{"fake-created", []string{claude2}},                                    // only in tool inputs
		{"outside", []string{codex}},                                           // a prompt mid-session
		{"aborted", []string{codex}},                                           // only in a tool output
		{"ENOTFOUND", []string{"claude:d374eff7-6681-449d-ac7d-e8ad01a2744d"}}, // a reply
		{"REJECT*", []string{claude2}},                                         // a prefix, any case
		{"nosuchwordanywhere", nil},
	} {
		if got := refs(search(t, x, SearchQuery{Text: c.q})); !slices.Equal(got, c.want) {
			t.Errorf("search %q = %v, want %v", c.q, got, c.want)
		}
	}

	// Append a prompt to the Codex transcript: the new word is found, and
	// the session is not listed twice.
	var path string
	filepath.WalkDir(filepath.Join(home, ".codex/sessions"), func(p string, d fs.DirEntry, err error) error {
		if strings.Contains(p, "01a22c19") {
			path = p
		}
		return nil
	})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(data)) {
		// Codex 0.169 records a prompt as an item_completed UserMessage;
		// older versions as an event_msg user_message.
		if strings.Contains(l, "please write outside") && (strings.Contains(l, `"user_message"`) || strings.Contains(l, `"UserMessage"`)) {
			line = l
		}
	}
	if line == "" {
		t.Fatal("no user_message or UserMessage line with the prompt in the Codex transcript")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.ReplaceAll(line, "please write outside", "now the zebracorn"))
	f.Close()
	os.Chtimes(path, time.Now(), time.Now().Add(time.Minute))
	if st := refresh(); st.Parsed != 1 {
		t.Fatalf("append re-parsed %d files, want 1", st.Parsed)
	}
	if got := refs(search(t, x, SearchQuery{Text: "zebracorn"})); !slices.Equal(got, []string{codex}) {
		t.Errorf("appended word: %v", got)
	}
	if got := refs(search(t, x, SearchQuery{Text: "aborted"})); !slices.Equal(got, []string{codex}) {
		t.Errorf("old word after the append: %v", got)
	}
	var n int
	x.st.R.QueryRow(`SELECT count(*) FROM history_fts`).Scan(&n)
	var m int
	x.st.R.QueryRow(`SELECT count(*) FROM history_sessions`).Scan(&m)
	if n != m {
		t.Errorf("%d full-text rows for %d sessions", n, m)
	}

	// Delete it: its words are gone.
	os.Remove(path)
	refresh()
	for _, q := range []string{"zebracorn", "aborted"} {
		if got := search(t, x, SearchQuery{Text: q}); len(got) != 0 {
			t.Errorf("%q found after the file was deleted: %v", q, refs(got))
		}
	}
	x.st.R.QueryRow(`SELECT count(*) FROM history_fts`).Scan(&n)
	x.st.R.QueryRow(`SELECT count(*) FROM history_sessions`).Scan(&m)
	if n != m {
		t.Errorf("after delete: %d full-text rows for %d sessions", n, m)
	}
}

func generatedIndex(t *testing.T) *Index {
	t.Helper()
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	other := &testSource{name: "other", roots: []string{t.TempDir()}}
	writeSession(t, filepath.Join(root, "title.sess"), testSession{ID: "s-title", Title: "widget factory", CWD: "/src/a", Prompts: 1, Started: t0,
		Replies: []string{"some unrelated reply about the weather and the sea"}})
	writeSession(t, filepath.Join(root, "said.sess"), testSession{ID: "s-said", Title: "fix the build", CWD: "/src/a/sub", Prompts: 1, Started: t0.Add(24 * time.Hour),
		Replies: []string{"the widget is broken; the widget needs a new widget spring", "done"}})
	writeSession(t, filepath.Join(root, "tool.sess"), testSession{ID: "s-tool", Title: "look around", CWD: "/src/b", Prompts: 1, Started: t0.Add(48 * time.Hour),
		Replies: []string{strings.Repeat("many other words here to dilute the column ", 20)},
		Tools:   []string{"Bash"}, Outputs: []string{"ls: widget.go main.go " + strings.Repeat("filler ", 200)}})
	writeSession(t, filepath.Join(root, "secret.sess"), testSession{ID: "s-secret", Title: "deploy", CWD: "/src/a%b", Prompts: 1, Started: t0.Add(72 * time.Hour),
		Replies: []string{"use ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefgh then deploy the gizmo now"}})
	writeSession(t, filepath.Join(other.roots[0], "o.sess"), testSession{ID: "o-1", Title: "other widget", CWD: "/src/a", Prompts: 1, Started: t0})
	x := openIndex(t, "v1")
	if _, err := x.Refresh(t.Context(), []transcript.Source{src, other}, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestSearchRankingAndFilters(t *testing.T) {
	x := generatedIndex(t)
	// The title outweighs replies, which outweigh one word in a tool output.
	got := refs(search(t, x, SearchQuery{Text: "widget", Provider: "fake"}))
	if want := []string{"fake:s-title", "fake:s-said", "fake:s-tool"}; !slices.Equal(got, want) {
		t.Errorf("ranking: %v, want %v", got, want)
	}
	for _, c := range []struct {
		name string
		q    SearchQuery
		want []string
	}{
		{"provider", SearchQuery{Text: "widget", Provider: "other"}, []string{"other:o-1"}},
		{"dir", SearchQuery{Text: "widget", Provider: "fake", Dir: "/src/a"}, []string{"fake:s-title", "fake:s-said"}},
		{"dir trailing slash", SearchQuery{Text: "widget", Provider: "fake", Dir: "/src/a/"}, []string{"fake:s-title", "fake:s-said"}},
		{"dir is not a string prefix", SearchQuery{Text: "widget", Dir: "/src/a/su"}, nil},
		{"dir with %", SearchQuery{Text: "gizmo", Dir: "/src/a%b"}, []string{"fake:s-secret"}},
		{"since", SearchQuery{Text: "widget", Provider: "fake", Since: t0.Add(24 * time.Hour)}, []string{"fake:s-said", "fake:s-tool"}},
		{"until", SearchQuery{Text: "widget", Provider: "fake", Until: t0.Add(24 * time.Hour)}, []string{"fake:s-title"}},
		{"both words", SearchQuery{Text: "widget spring"}, []string{"fake:s-said"}},
		{"a hyphenated word literally", SearchQuery{Text: "broken-spring"}, nil}, // s-said holds both words, apart
		{"a hyphenated word found", SearchQuery{Text: "widget-spring"}, []string{"fake:s-said"}},
		{"a dotted word literally", SearchQuery{Text: "widget.go"}, []string{"fake:s-tool"}},
		{"a dotted word, any case", SearchQuery{Text: "Widget.Go"}, []string{"fake:s-tool"}},
		{"limit", SearchQuery{Text: "widget", Provider: "fake", Limit: 1}, []string{"fake:s-title"}},
	} {
		if got := refs(search(t, x, c.q)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSearchSnippet(t *testing.T) {
	x := generatedIndex(t)
	hits := search(t, x, SearchQuery{Text: "spring"})
	if len(hits) != 1 {
		t.Fatalf("hits: %v", refs(hits))
	}
	h := hits[0]
	if len(h.Highlights) != 1 || h.Snippet[h.Highlights[0][0]:h.Highlights[0][1]] != "spring" {
		t.Errorf("snippet %q highlights %v", h.Snippet, h.Highlights)
	}
	// A secret next to the match is redacted; the highlight follows.
	hits = search(t, x, SearchQuery{Text: "gizmo"})
	if len(hits) != 1 {
		t.Fatalf("hits: %v", refs(hits))
	}
	h = hits[0]
	if strings.Contains(h.Snippet, "sk-ant-") || !strings.Contains(h.Snippet, "[REDACTED") {
		t.Errorf("secret in snippet: %q", h.Snippet)
	}
	if len(h.Highlights) != 1 || h.Snippet[h.Highlights[0][0]:h.Highlights[0][1]] != "gizmo" {
		t.Errorf("snippet %q highlights %v", h.Snippet, h.Highlights)
	}
	// Searching for the secret itself finds the session, never shows it.
	hits = search(t, x, SearchQuery{Text: "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefgh"})
	if len(hits) != 1 || strings.Contains(hits[0].Snippet, "AbCdEf") {
		t.Errorf("search for a secret: %v %+v", refs(hits), hits)
	}
}

var hostile = []string{
	`"`, `""`, `"widget`, `widget"`, `-`, `-widget`, `widget -spring`, `*`, `**`, `widget*`, `*widget`,
	`NEAR`, `NEAR(widget spring)`, `widget NEAR spring`, `AND`, `OR`, `NOT`, `widget OR`, `(`, `)`, `()`,
	`meta:widget`, `{meta said}: widget`, `^widget`, `+`, `:`, `'`, `';DROP TABLE history_fts;--`,
	"\x00", "wid\x00get", "\x02widget\x03", `\`, `%`, `_`, `é`, `日本語`, "   ", "",
	// Letters newer than SQLite's Unicode tables (Adlam, Unicode 9).
	"x\U0001E922y", "wid\U0001E922get",
	strings.Repeat("widget ", 100),
}

func TestSearchHostileQueries(t *testing.T) {
	x := generatedIndex(t)
	for _, q := range hostile {
		if _, err := x.Search(t.Context(), SearchQuery{Text: q}); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	// Syntax has no meaning: NEAR and - are words.
	if got := refs(search(t, x, SearchQuery{Text: "widget -spring"})); !slices.Equal(got, []string{"fake:s-said"}) {
		t.Errorf(`"widget -spring": %v`, got)
	}
}

func FuzzSearchQuery(f *testing.F) {
	for _, q := range hostile {
		f.Add(q)
	}
	st := openIndexFuzz(f)
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := st.Search(t.Context(), SearchQuery{Text: q}); err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
	})
}

func openIndexFuzz(f *testing.F) *Index {
	root := f.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	writeSession(f, filepath.Join(root, "a.sess"), testSession{ID: "a", Title: "widget factory", Prompts: 1, Started: t0,
		Replies: []string{"the widget needs a spring \"quoted\" NEAR - * (x)"}})
	x := openIndex(f, "v1")
	if _, err := x.Refresh(f.Context(), []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil {
		f.Fatal(err)
	}
	return x
}

func TestMatchExpr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"deploy", `"deploy"*`},
		{"go", `"go"`},
		{"go*", `"go"*`},
		{"foo.bar", `"foo" "bar"*`},
		{`say "hi"`, `"say" "hi"`},
		{"-- * !!", ""},
		{"café", `"café"*`},
	} {
		if got := MatchExpr(c.in); got != c.want {
			t.Errorf("MatchExpr(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestSearchWordsAndPrefixes: a word of four characters or more starts
// words; a shorter one is a whole word unless it ends in *.
func TestSearchWordsAndPrefixes(t *testing.T) {
	x := generatedIndex(t)
	for _, c := range []struct {
		q    string
		want int
	}{
		{"widg", 4}, {"wid", 0}, {"wid*", 4}, {"the", 4}, {"th", 0}, {"th*", 4},
	} {
		if got := search(t, x, SearchQuery{Text: c.q}); len(got) != c.want {
			t.Errorf("search %q: %v, want %d hits", c.q, refs(got), c.want)
		}
	}
}

// TestSearchRecency: within a tier, the newest session comes first.
func TestSearchRecency(t *testing.T) {
	root := t.TempDir()
	src := &testSource{name: "fake", roots: []string{root}}
	for i, name := range []string{"old", "new", "mid"} {
		writeSession(t, filepath.Join(root, name+".sess"), testSession{ID: name, Title: "t", Prompts: 1,
			Started: t0.Add(time.Duration([]int{0, 2, 1}[i]) * time.Hour), Replies: []string{"the frobnicator " + name}})
	}
	x := openIndex(t, "v1")
	if _, err := x.Refresh(t.Context(), []transcript.Source{src}, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := refs(search(t, x, SearchQuery{Text: "frobnicator"})); !slices.Equal(got, []string{"fake:new", "fake:mid", "fake:old"}) {
		t.Errorf("order: %v", got)
	}
	if got := search(t, x, SearchQuery{Text: "frobnicator"}); got[0].Tier != TierSaid {
		t.Errorf("tier %d, want %d", got[0].Tier, TierSaid)
	}
}

func TestCutSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor ", 200) + "the needle sits here beside a haystack " + strings.Repeat("sit amet ", 200)
	terms := snippetTerms(queryWords("needle haystack"))
	got, spans := markedSnippet(cutSnippet([3]string{"title", long, ""}, TierSaid, terms))
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len(spans) != 2 ||
		got[spans[0][0]:spans[0][1]] != "needle" || got[spans[1][0]:spans[1][1]] != "haystack" {
		t.Errorf("snippet %q spans %v", got, spans)
	}
	if n := len(strings.Fields(got)); n > snippetTokens+2 {
		t.Errorf("snippet of %d words: %q", n, got)
	}
	// Case and prefixes; the best column wins over the tier's own.
	terms = snippetTerms(queryWords("Deploy"))
	got, spans = markedSnippet(cutSnippet([3]string{"nothing here", "", "DEPLOYMENT failed"}, TierMeta, terms))
	if got != "DEPLOYMENT failed" || len(spans) != 1 || got[spans[0][0]:spans[0][1]] != "DEPLOYMENT" {
		t.Errorf("snippet %q spans %v", got, spans)
	}
	// No match to show: the start of the tier's column, no highlight.
	got, spans = markedSnippet(cutSnippet([3]string{"a title", "", ""}, TierMeta, snippetTerms(queryWords("zzz"))))
	if got != "a title" || spans != nil {
		t.Errorf("snippet %q spans %v", got, spans)
	}
}

// TestSearchTokenizerFallback: were the index's tokenizer to split a word
// that MatchExpr kept whole, FTS5 would see a phrase, which an index
// without positions refuses; the ASCII-only tokenization Search retries
// with never makes one.
func TestSearchTokenizerFallback(t *testing.T) {
	x := generatedIndex(t)
	words := queryWords("widget-spring")
	whole := func(r rune) bool { return r != ' ' }
	if _, err := x.search(t.Context(), SearchQuery{}, words, matchExpr(words, whole)); err == nil || !strings.Contains(err.Error(), "phrase queries are not supported") {
		t.Fatalf("a phrase: %v", err)
	}
	hits, err := x.search(t.Context(), SearchQuery{}, words, matchExpr(words, asciiToken))
	if err != nil || !slices.Equal(refs(hits), []string{"fake:s-said"}) {
		t.Errorf("fallback: %v %v", refs(hits), err)
	}
}
