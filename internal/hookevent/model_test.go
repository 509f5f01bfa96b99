package hookevent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestModelOfPayload: the model Codex and Cursor name in their hook
// payloads rides on the events the helper sends; Claude Code's events name
// none (only its SessionStart carries one, and that sends nothing).
func TestModelOfPayload(t *testing.T) {
	tests := []struct{ provider, file, model string }{
		{"codex", "codex.jsonl", "gpt-6.1-sol"},
		{"cursor", "cursor.jsonl", "gpt-5"},
		{"claude", "claude.jsonl", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, MaxPayload)
			st := &State{}
			sent := 0
			for sc.Scan() {
				res, err := Map(tt.provider, sc.Bytes(), st, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if res.State != nil {
					st = res.State
				}
				for _, m := range res.Events {
					body, err := json.Marshal(Envelope(tt.provider, m, "", ""))
					if err != nil {
						t.Fatal(err)
					}
					has := strings.Contains(string(body), `"model":"`+tt.model+`"`)
					if tt.model == "" {
						has = !strings.Contains(string(body), `"model"`)
					}
					if !has {
						t.Errorf("%s %s: envelope %s, want model %q", tt.provider, m.HookName, body, tt.model)
					}
					sent++
				}
				if sent > 0 && tt.model != "" {
					return // the first session's events are enough
				}
			}
			if sent == 0 {
				t.Fatal("no event sent")
			}
		})
	}
}
