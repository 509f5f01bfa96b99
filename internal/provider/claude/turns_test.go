package claude

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/testing/providertest"
)

func TestTurnsOfTranscripts(t *testing.T) {
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
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := providertest.ParseTurns(t, Provider{}, filepath.Join("testdata", "turns", tt.file))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurnLines(t *testing.T) {
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
			if diff := cmp.Diff(tt.want, providertest.LineTurns(t, Provider{}, tt.lines...)); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzTurnLines(f *testing.F) {
	providertest.AddLineSeeds(f, filepath.Join("testdata", "turns", "claude-22222222.jsonl"), filepath.Join("testdata", "turns", "claude-d374eff7.jsonl"))
	f.Add([]byte(`{"promptId":"p","type":"user","message":{"content":"<command-name>/x</command-name>"}}` + "\n" + `{"type":"assistant","isApiErrorMessage":true}`))
	f.Fuzz(func(t *testing.T, data []byte) { providertest.FuzzTurnLines(t, Provider{}, data) })
}
