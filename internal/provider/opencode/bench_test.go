//go:build unix

package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/transcript"
)

// bigDB writes a database of sessions×turns turns in the 1.18.33 shape: a
// user message with a text part, an assistant message with step-start,
// reasoning, text, an edit and a bash tool part (with output), step-finish.
func bigDB(tb testing.TB, sessions, turns int) string {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "opencode.db")
	db := openRW(tb, path)
	b, err := os.ReadFile("testdata/opencode.sql")
	if err != nil {
		tb.Fatal(err)
	}
	schema, _, _ := strings.Cut(string(b), "INSERT INTO")
	if _, err := db.Exec(schema); err != nil {
		tb.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	out := strings.Repeat(`ok  \tgithub.com/x/y/pkg\t0.012s\n`, 40)
	msg, _ := tx.Prepare("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)")
	part, _ := tx.Prepare("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)")
	for s := range sessions {
		sid := fmt.Sprintf("ses_%06d", s)
		t0 := int64(1796000000000 + s*1000000)
		if _, err := tx.Exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'p', 's', '/work/x', ?, '1.18.33', ?, ?)", sid, fmt.Sprintf("Session %d", s), t0, t0); err != nil {
			tb.Fatal(err)
		}
		for i := range turns {
			ts := t0 + int64(i*1000)
			u, a := fmt.Sprintf("msg_%06d_%05d_u", s, i), fmt.Sprintf("msg_%06d_%05d_a", s, i)
			msg.Exec(u, sid, ts, ts, fmt.Sprintf(`{"role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-6"}}`, ts))
			part.Exec(u+"_1", u, sid, ts, ts, fmt.Sprintf(`{"type":"text","text":"Please change function number %d so that it handles the empty input case and add a test for it."}`, i))
			msg.Exec(a, sid, ts+1, ts+900, fmt.Sprintf(`{"parentID":"%s","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/x","root":"/work/x"},"cost":0.0123,"tokens":{"total":6400,"input":1200,"output":300,"reasoning":100,"cache":{"read":4000,"write":800}},"modelID":"claude-sonnet-4-6","providerID":"anthropic","time":{"created":%d,"completed":%d},"finish":"stop"}`, u, ts+1, ts+900))
			part.Exec(a+"_1", a, sid, ts+2, ts+2, `{"type":"step-start","snapshot":"b5529542bc4188e20a5472588f2fea0d91537a01"}`)
			part.Exec(a+"_2", a, sid, ts+3, ts+3, `{"type":"reasoning","text":"Read, edit, test.","time":{"start":1,"end":2}}`)
			part.Exec(a+"_3", a, sid, ts+4, ts+4, `{"type":"text","text":"I'll edit the function and run the tests.","time":{"start":1,"end":2}}`)
			part.Exec(a+"_4", a, sid, ts+5, ts+5, fmt.Sprintf(`{"type":"tool","tool":"edit","callID":"toolu_%d_%d_e","state":{"status":"completed","input":{"filePath":"/work/x/f%d.go","oldString":"if x == nil {\n\treturn nil\n}","newString":"if x == nil || len(x) == 0 {\n\treturn nil\n}"},"output":"Edit applied successfully.","metadata":{},"title":"f.go","time":{"start":1,"end":2}}}`, s, i, i))
			part.Exec(a+"_5", a, sid, ts+6, ts+6, fmt.Sprintf(`{"type":"tool","tool":"bash","callID":"toolu_%d_%d_b","state":{"status":"completed","input":{"command":"go test ./...","description":"Run the tests"},"output":"%s","metadata":{"exit":0},"title":"go test","time":{"start":1,"end":2}}}`, s, i, out))
			part.Exec(a+"_6", a, sid, ts+7, ts+7, `{"type":"step-finish","reason":"stop","snapshot":"b5529542bc4188e20a5472588f2fea0d91537a01","tokens":{"total":6400,"input":1200,"output":300,"reasoning":100,"cache":{"read":4000,"write":800}},"cost":0.0123}`)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

func benchParse(b *testing.B, opts transcript.ParseOptions) {
	providertest.BenchParse(b, New(), transcript.Env{}, bigDB(b, 20, 200), opts, func(ts []*transcript.Transcript) bool {
		return len(ts) == 20 && ts[0].PromptCount == 200 && ts[0].ToolCallCount == 400
	})
}

func BenchmarkSummaryScan(b *testing.B) { benchParse(b, transcript.ParseOptions{SummaryOnly: true}) }
func BenchmarkFullParse(b *testing.B)   { benchParse(b, transcript.ParseOptions{}) }
