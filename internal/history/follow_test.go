package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// claudeTurn is one prompt, a tool call with its result, and a reply, as
// Claude Code appends them.
func claudeTurn(id string, n int, word string) string {
	ts := time.Date(2026, 3, 1, 10, 0, n, 0, time.UTC).Format(time.RFC3339)
	var out string
	for _, v := range []map[string]any{
		{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("prompt %d about %s", n, word)}},
		{"type": "assistant", "requestId": fmt.Sprintf("req%d", n), "message": map[string]any{"id": fmt.Sprintf("msg%d", n), "role": "assistant", "model": "claude-sonnet-4",
			"content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("tu%d", n), "name": "Bash", "input": map[string]any{"command": "echo " + word}}},
			"usage":   map[string]any{"input_tokens": 10, "output_tokens": 5}}},
		{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("tu%d", n), "content": word + " done"}}}},
		{"type": "assistant", "requestId": fmt.Sprintf("req%db", n), "message": map[string]any{"id": fmt.Sprintf("msg%db", n), "role": "assistant", "model": "claude-sonnet-4",
			"content": []any{map[string]any{"type": "text", "text": "reply about " + word}}, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}},
	} {
		v["sessionId"], v["cwd"], v["timestamp"] = id, "/src/app", ts
		v["uuid"] = fmt.Sprintf("%s-%d-%v", id[:8], n, v["type"])
		b, _ := json.Marshal(v)
		out += string(b) + "\n"
	}
	return out
}

// TestWatchFollowsAppends: with the watcher's follow cache, a refresh
// after an append reads only the appended bytes and indexes the same
// summary and text a full parse does; a truncated, replaced or rewritten
// file is read again from its start.
func TestWatchFollowsAppends(t *testing.T) {
	const id = "aaaaaaaa-0000-4000-8000-000000000001"
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "projects", "-src-app", id+".jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	sources := []transcript.Source{all.Source("claude")}
	x := openIndex(t, "v1")
	x.follows = newFollowCache()
	full := openIndex(t, "v1") // parses whole files, for comparison

	body := claudeTurn(id, 1, "alpha") + claudeTurn(id, 2, "bravo")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendText := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	check := func(step string, wantRead int64, words ...string) {
		t.Helper()
		st, err := x.Refresh(t.Context(), sources, env, RefreshOptions{})
		if err != nil || st.Parsed != 1 {
			t.Fatalf("%s: refresh %+v %v", step, st, err)
		}
		if st.Read != wantRead {
			t.Errorf("%s: read %d bytes, want %d", step, st.Read, wantRead)
		}
		if _, err := full.Refresh(t.Context(), sources, env, RefreshOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _ := x.List(t.Context(), Query{})
		want, _ := full.List(t.Context(), Query{})
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("%s: listed %d and %d sessions", step, len(got), len(want))
		}
		if step == "half a line" {
			// A full parse calls the unfinished line malformed; a follow
			// waits for its end.
			if len(got[0].Warnings) != 0 {
				t.Errorf("%s: warnings %q", step, got[0].Warnings)
			}
			want[0].Warnings = nil
		}
		g, _ := json.Marshal(got[0])
		w, _ := json.Marshal(want[0])
		if string(g) != string(w) {
			t.Errorf("%s: followed summary\n%s\nfull parse\n%s", step, g, w)
		}
		for _, word := range words {
			if hits := refs(search(t, x, SearchQuery{Text: word})); !slices.Equal(hits, []string{"claude:" + id}) {
				t.Errorf("%s: search %q: %v", step, word, hits)
			}
		}
	}

	write(body)
	check("first", int64(len(body)), "alpha", "bravo")
	more := claudeTurn(id, 3, "charlie")
	// Half a line first: an agent's write can stop mid-line.
	appendText(more[:len(more)/2])
	check("half a line", int64(len(more)/2)-int64(len(more)/2-len(firstLines(more[:len(more)/2]))))
	appendText(more[len(more)/2:])
	check("append", int64(len(more)-len(firstLines(more[:len(more)/2]))), "charlie")

	short := claudeTurn(id, 1, "delta")
	write(short) // truncated: read from the start
	check("truncated", int64(len(short)), "delta")

	os.Remove(path) // replaced by a new file, larger than the old
	repl := claudeTurn(id, 1, "echo") + claudeTurn(id, 2, "foxtrot") + claudeTurn(id, 3, "golf")
	write(repl)
	check("replaced", int64(len(repl)), "echo", "golf")

	// Rewritten in place through the same inode, no shorter.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	rew := claudeTurn(id, 1, "hotel") + claudeTurn(id, 2, "india") + claudeTurn(id, 3, "juliet") + claudeTurn(id, 4, "kilo")
	f.WriteAt([]byte(rew), 0)
	f.Close()
	check("rewritten", int64(len(rew)), "hotel", "kilo")
}

// firstLines is the complete lines of s.
func firstLines(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[:i+1]
		}
	}
	return ""
}

// TestFollowMatchesParse: for every source that follows files, feeding a
// recorded transcript in pieces cut mid-line gives, after each piece, what
// a whole parse of the bytes so far gives (the unfinished line aside), and
// at the end exactly what Parse gives.
func TestFollowMatchesParse(t *testing.T) {
	for _, src := range all.Sources() {
		fw, ok := src.(transcript.Follower)
		if !ok {
			continue
		}
		dir := filepath.Join("..", "provider", src.Provider(), "testdata")
		var files []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
				files = append(files, p)
			}
			return nil
		})
		if len(files) == 0 {
			// A follower of trees of files, not of JSONL logs, is checked
			// by its own package's tests (providertest).
			continue
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// The same place in the tree, so that paths say the same.
			tmp := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(filepath.Dir(file))), filepath.Base(filepath.Dir(file)), filepath.Base(file))
			os.MkdirAll(filepath.Dir(tmp), 0o755)
			os.WriteFile(tmp, nil, 0o644)
			env := transcript.Env{Home: t.TempDir()}
			f := fw.Follow(env, tmp, transcript.ParseOptions{})
			var off int64
			for _, cut := range []int{len(data) / 3, len(data) * 2 / 3, len(data)} {
				os.WriteFile(tmp, data[:cut], 0o644)
				fd, _ := os.Open(tmp)
				fd.Seek(off, 0)
				n, err := f.Feed(t.Context(), fd)
				fd.Close()
				if err != nil {
					t.Fatalf("%s: feed: %v", file, err)
				}
				off += n
				os.WriteFile(tmp, []byte(firstLines(string(data[:cut]))), 0o644)
				if cut == len(data) && data[len(data)-1] != '\n' {
					os.WriteFile(tmp, data, 0o644) // an unterminated last line stays unread
					continue
				}
				want, err := src.Parse(t.Context(), env, tmp, transcript.ParseOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(f.Transcripts())
				w, _ := json.Marshal(want)
				if string(got) != string(w) {
					t.Errorf("%s after %d of %d bytes:\nfollow %s\nparse  %s", file, cut, len(data), got, w)
				}
			}
		}
	}
}

// TestWatchParsesWhatCannotBeFollowed: a file its source does not follow
// (a Cursor .txt transcript, whose blocks grow in place) is parsed whole on
// each change, with the follow cache on.
func TestWatchParsesWhatCannotBeFollowed(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".cursor", "projects", "p", "agent-transcripts", "c1.txt")
	os.MkdirAll(filepath.Dir(path), 0o755)
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	sources := []transcript.Source{all.Source("cursor")}
	x := openIndex(t, "v1")
	x.follows = newFollowCache()
	body := "user:\n<user_query>first question</user_query>\n\nassistant:\nan answer\n"
	for i, text := range []string{body, body + "user:\n<user_query>second question</user_query>\n"} {
		os.WriteFile(path, []byte(text), 0o644)
		st, err := x.Refresh(t.Context(), sources, env, RefreshOptions{})
		if err != nil || st.Parsed != 1 || st.Read != int64(len(text)) {
			t.Fatalf("refresh %d: %+v %v", i, st, err)
		}
		list, _ := x.List(t.Context(), Query{})
		if len(list) != 1 || list[0].PromptCount != i+1 {
			t.Fatalf("refresh %d: %+v", i, list)
		}
	}
}

// TestFollowKeepsUnsettledItemsOutOfTheRow: items a Follow returns rather
// than streams (Gemini CLI's latest messages, which it may rewrite) are
// in each refresh's row once, never added to the row the next refresh
// starts from.
func TestFollowKeepsUnsettledItemsOutOfTheRow(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".gemini", "tmp", "proj", "chats", "session-2026-03-01T10-00-bbbbbbbb.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"sessionId":"bbbbbbbb-0000-4000-8000-00000000000b","projectHash":"h","kind":"main"}
{"id":"u1","type":"user","timestamp":"2026-03-01T10:00:01Z","content":[{"text":"prompt about zebras"}]}
`), 0o644)
	env := transcript.Env{Home: home, Getenv: func(string) string { return "" }}
	fw := all.Source("gemini").(transcript.Follower)
	c := newFollowCache()
	for i := range 3 {
		ts, doc, _, err := c.follow(t.Context(), fw, env, path)
		if err != nil || len(ts) != 1 {
			t.Fatalf("follow %d: %v %v", i, ts, err)
		}
		for _, it := range ts[0].Items {
			doc.add(it)
		}
		if got := strings.Count(doc.doc(ts[0].Session).said, "zebras"); got != 1 {
			t.Fatalf("follow %d: the row says zebras %d times", i, got)
		}
	}
}
