package gemini

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// TestFollowMatchesParse: following a recorded chat log as it grows in
// random pieces gives, after each piece, what a whole parse of the same
// bytes gives (items and usage log included), whatever the number of
// messages kept open or built while a Feed reads: rewrites, rewinds and "$set"s of settled messages
// are read again from the start.
func TestFollowMatchesParse(t *testing.T) {
	roots := []string{"testdata", filepath.Join(providertest.Shared, "research", "real-cli", "gemini")}
	n := 0
	for _, root := range roots {
		var files []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
		for _, file := range files {
			rel, _ := filepath.Rel(root, file)
			for _, tail := range []int{0, 1, 4} {
				t.Run(fmt.Sprintf("%s/%s/open%d", filepath.Base(root), rel, tail), func(t *testing.T) {
					defer func(tail, batch int) { openTail, settleBatch = tail, batch }(openTail, settleBatch)
					openTail, settleBatch = tail, tail // settling mid-Feed too
					tmp := t.TempDir()
					providertest.CopyTree(t, root, tmp)
					providertest.GrowLines(t, New(), transcript.Env{Home: t.TempDir()}, filepath.Join(tmp, rel), 3)
				})
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("followed only %d recorded chats", n)
	}
}

// chatTurn is one turn as Gemini CLI 0.61.0 logs it: the prompt, the reply
// with its tool call pending, then the same reply again once the call
// finished (a rewrite in place of the latest message).
func chatTurn(n int) string {
	ts := fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", n/60%60, n%60)
	out := strings.Repeat("ok  example.com/pkg 0.01s\\n", 40)
	return fmt.Sprintf(`{"id":"u%[1]d","type":"user","timestamp":%[2]q,"content":[{"text":"prompt %[1]d"}]}
{"id":"g%[1]d","type":"gemini","timestamp":%[2]q,"model":"gemini-2.5-pro","content":"reply %[1]d","toolCalls":[{"id":"c%[1]d","name":"run_shell_command","args":{"command":"go test"},"status":"executing"}]}
{"id":"g%[1]d","type":"gemini","timestamp":%[2]q,"model":"gemini-2.5-pro","content":"reply %[1]d","toolCalls":[{"id":"c%[1]d","name":"run_shell_command","args":{"command":"go test"},"status":"success","resultDisplay":"%[3]s"}],"tokens":{"input":100,"output":20,"cached":0,"thoughts":0,"tool":0,"total":120}}
`, n, ts, out)
}

// TestFollowReadsOnlyAppends: appending turns that rewrite their latest
// message in place reads what was appended and no more, and never the
// file again from its start (issue 22: every append re-read the whole
// chat, 44 % of a core at 200 MB); a "$set" of the whole list (written at
// exit) does read it again, once, and still says what a parse says.
func TestFollowReadsOnlyAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".gemini", "tmp", "proj", "chats", "session-2026-03-01T10-00-bbbbbbbb.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	var b strings.Builder
	b.WriteString(`{"sessionId":"bbbbbbbb-0000-4000-8000-00000000000b","projectHash":"h","startTime":"2026-03-01T10:00:00Z","kind":"main"}` + "\n")
	for n := 1; n <= 200; n++ {
		b.WriteString(chatTurn(n))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	appendText := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	w := providertest.Follow(t, New(), transcript.Env{Home: t.TempDir()}, path)
	w.Step(t)
	for n := 201; n <= 210; n++ {
		more := chatTurn(n)
		appendText(more)
		before := w.Read
		got := w.Step(t)
		if read := w.Read - before; read > int64(len(more)) {
			t.Fatalf("append %d of %d bytes: read %d bytes", n, len(more), read)
		}
		w.SameAsParse(t, fmt.Sprintf("append %d", n), got)
	}
	if got := w.F.(*follow).rebuilds; got != 0 {
		t.Fatalf("read the chat again %d times", got)
	}
	appendText(`{"$set":{"messages":[{"id":"u1","type":"user","timestamp":"2026-03-01T10:00:01.000Z","content":[{"text":"only this"}]}]}}` + "\n")
	w.SameAsParse(t, "$set", w.Step(t))
	if got := w.F.(*follow).rebuilds; got != 1 {
		t.Fatalf("after a $set of the list: read the chat again %d times, want 1", got)
	}
}
