package native

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseFile runs a provider's line parser over a testdata transcript and
// renders its records one a line.
func parseFile(t *testing.T, provider, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := newParser(provider)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	var recs []turnRecord
	for sc.Scan() {
		recs = p.line(sc.Bytes(), recs)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return renderRecords(recs)
}

func renderRecords(recs []turnRecord) []string {
	var out []string
	for _, r := range recs {
		op := "start"
		if r.Op == opEnd {
			op = "end " + string(r.Kind)
		}
		out = append(out, fmt.Sprintf("%s %.8s %s %q", op, r.Key, r.At.Format("15:04:05.000"), r.Text))
	}
	return out
}

func TestParseTranscripts(t *testing.T) {
	tests := []struct {
		provider, file string
		want           []string
	}{
		{"claude", "claude-22222222.jsonl", []string{
			`start 98e2235e 10:50:10.946 "say hi"`,
			`end succeeded 98e2235e 10:50:11.978 "hi"`,
			`start f3e8eb71 10:50:29.907 "say hi again"`,
			`end succeeded f3e8eb71 10:50:30.366 "hi"`,
			`start 6cae53c4 10:50:41.520 "please write a file"`,
			`end succeeded 6cae53c4 10:50:59.915 "hi"`,
			`start af0b1a80 10:51:07.301 "please write a file"`,
			// A denied permission: no Stop hook, only this marker.
			`end interrupted af0b1a80 10:51:11.307 "[Request interrupted by user for tool use]"`,
		}},
		{"claude", "claude-d374eff7.jsonl", []string{
			`start 1ae2655b 10:43:47.667 "say hi"`,
			`end failed 1ae2655b 10:46:43.335 "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)"`,
		}},
		{"codex", "codex-01a22c19.jsonl", []string{
			`start 01a22c19 10:56:38.191 ""`,
			`end succeeded 01a22c19 10:56:38.399 "hi"`,
			`start 01a22c19 10:56:46.269 ""`,
			`end succeeded 01a22c19 10:56:46.675 "hi"`,
			`start 01a22c19 10:56:58.611 ""`,
			`end interrupted 01a22c19 10:57:11.216 "interrupted"`,
		}},
		{"codex", "codex-01a22c0e.jsonl", []string{
			`start 01a22c0f 10:45:18.638 ""`,
			`end interrupted 01a22c0f 10:47:57.011 "interrupted"`,
			`start 01a22c12 10:48:30.044 ""`,
			`end interrupted 01a22c12 10:53:11.288 "interrupted"`,
			`start 01a22c18 10:55:39.081 ""`,
			`end interrupted 01a22c18 10:55:43.073 "interrupted"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseFile(t, tt.provider, tt.file)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaudeLines(t *testing.T) {
	const ts = `"timestamp":"2026-11-30T10:00:00Z"`
	prompt := func(id, content string) string {
		return `{"promptId":"` + id + `","type":"user","message":{"role":"user","content":` + content + `},` + ts + `}`
	}
	assistant := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done\nmore"}]},` + ts + `}`
	duration := `{"type":"system","subtype":"turn_duration","durationMs":5,` + ts + `}`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"text blocks prompt", []string{prompt("p1", `[{"type":"text","text":"fix it\nplease"}]`), assistant, duration},
			[]string{`start p1 10:00:00.000 "fix it"`, `end succeeded p1 10:00:00.000 "done"`}},
		{"image prompt", []string{prompt("p1", `[{"type":"image","source":{}}]`)},
			[]string{`start p1 10:00:00.000 ""`}},
		{"tool result with a new id starts nothing", []string{prompt("p1", `[{"type":"tool_result","content":"x"}]`)}, nil},
		{"meta record", []string{`{"promptId":"p1","isMeta":true,"type":"user","message":{"content":"x"}}`}, nil},
		{"no prompt id (before 2.1)", []string{`{"type":"user","message":{"content":"hi"}}`, assistant, duration}, nil},
		{"sidechain", []string{`{"isSidechain":true,"promptId":"p1","type":"user","message":{"content":"hi"}}`}, nil},
		{"local command without a reply", []string{prompt("p1", `"<command-name>/model</command-name>"`), prompt("p2", `"hello"`)},
			[]string{`start p2 10:00:00.000 "hello"`}},
		{"slash command that reaches the model", []string{prompt("p1", `"<command-message>review</command-message>\n<command-name>/review</command-name>"`), assistant, duration},
			[]string{`start p1 10:00:00.000 "<command-message>review</command-message>"`, `end succeeded p1 10:00:00.000 "done"`}},
		{"same prompt id twice", []string{prompt("p1", `"a"`), prompt("p1", `"a"`)},
			[]string{`start p1 10:00:00.000 "a"`}},
		{"duration without a turn", []string{duration}, nil},
		{"duration twice", []string{prompt("p1", `"a"`), duration, duration},
			[]string{`start p1 10:00:00.000 "a"`, `end succeeded p1 10:00:00.000 ""`}},
		{"interrupt marker with its own id", []string{prompt("p1", `[{"type":"text","text":"[Request interrupted by user]"}]`)}, nil},
		{"bad json", []string{`{"promptId":"p1","type":"user"`, `not json`, `[]`, ``}, nil},
		{"skipped bookkeeping", []string{`{"type":"last-prompt","promptId":"p9","message":{"content":"x"}}`}, nil},
		{"bad timestamp", []string{`{"promptId":"p1","type":"user","message":{"content":"x"},"timestamp":"yesterday"}`},
			[]string{`start p1 00:00:00.000 "x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParser("claude")
			var recs []turnRecord
			for _, l := range tt.lines {
				recs = p.line([]byte(l), recs)
			}
			if diff := cmp.Diff(tt.want, renderRecords(recs)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCodexLines(t *testing.T) {
	ev := func(payload string) string {
		return `{"timestamp":"2026-11-30T10:00:00Z","type":"event_msg","payload":` + payload + `}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"turn", []string{ev(`{"type":"task_started","turn_id":"t1"}`), ev(`{"type":"task_complete","turn_id":"t1","last_agent_message":"ok\nmore"}`)},
			[]string{`start t1 10:00:00.000 ""`, `end succeeded t1 10:00:00.000 "ok"`}},
		{"aborted without reason", []string{ev(`{"type":"turn_aborted","turn_id":"t1"}`)},
			[]string{`end interrupted t1 10:00:00.000 "aborted"`}},
		{"nested turn", []string{ev(`{"type":"task_started","turn_id":"t2","root_turn_id":"t1"}`)}, nil},
		{"no turn id (old versions)", []string{ev(`{"type":"task_started"}`)}, nil},
		{"not an event", []string{`{"type":"response_item","payload":{"type":"task_started","turn_id":"t1"}}`}, nil},
		{"bad payload", []string{`{"type":"event_msg","payload":"task_started"}`, `{"type":"event_msg","payload":{"type":"task_started"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newParser("codex")
			var recs []turnRecord
			for _, l := range tt.lines {
				recs = p.line([]byte(l), recs)
			}
			if diff := cmp.Diff(tt.want, renderRecords(recs)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}
