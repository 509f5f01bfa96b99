package hookevent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
)

// replay maps every payload of testdata/<file> in order, keeping one State
// per session the way the state files do, and renders what would be sent as
// "session4 hook kind runLabel" lines; runs get labels A, B, … in order of
// first appearance, so equal labels mean equal run ids.
func replay(t *testing.T, provider, file string, stateful bool, keep func(line []byte) bool) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states := map[string]*State{}
	labels := map[string]string{}
	var out []string
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, proto.MaxHookPayload)
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		if keep != nil && !keep(line) {
			continue
		}
		now = now.Add(time.Second)
		in, err := parse(provider, line)
		if err != nil {
			t.Fatalf("%s: %v\n%s", file, err, line)
		}
		var st *State
		if stateful && in.Session != "" {
			st = states[in.Session]
			if st == nil {
				st = &State{Session: in.Session}
			}
		}
		res, err := Map(provider, line, st, now)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if stateful && in.Session != "" {
			switch {
			case res.Drop:
				delete(states, in.Session)
			case res.State != nil:
				states[in.Session] = res.State
			}
		}
		for _, e := range res.Events {
			checkMapped(t, provider, e)
			l, ok := labels[e.RunID.RawValue]
			if !ok {
				l = string(rune('A' + len(labels)))
				labels[e.RunID.RawValue] = l
			}
			out = append(out, fmt.Sprintf("%.4s %s %s %s", deref(e.SessionID), e.HookName, e.Kind, l))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkMapped asserts the invariants of every mapped event.
func checkMapped(t testing.TB, provider string, e proto.Event) {
	t.Helper()
	if !isUUID(e.ID.RawValue) || !isUUID(e.RunID.RawValue) {
		t.Errorf("%s %s: ids %q %q are not UUIDs", provider, e.HookName, e.ID.RawValue, e.RunID.RawValue)
	}
	if !e.Kind.Valid() {
		t.Errorf("%s %s: invalid kind %q", provider, e.HookName, e.Kind)
	}
	if len(e.Message) > MaxMessage {
		t.Errorf("%s %s: message of %d bytes", provider, e.HookName, len(e.Message))
	}
	if strings.ContainsAny(e.Message, "\x1b\n\r\t\x00") {
		t.Errorf("%s %s: message has control characters: %q", provider, e.HookName, e.Message)
	}
	if e.HookName == "" || strings.HasPrefix(e.HookName, "muster.") {
		t.Errorf("%s: bad hook name %q", provider, e.HookName)
	}
	if e.OccurredAt.IsZero() || e.OccurredAt.Location() != time.UTC {
		t.Errorf("%s %s: occurredAt %v", provider, e.HookName, e.OccurredAt)
	}
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
	}
	return true
}

func TestReplayRealPayloads(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		file     string
		keep     func([]byte) bool
		want     []string
	}{
		{
			name: "claude", provider: "claude", file: "claude.jsonl",
			want: []string{
				// d374…: a turn that failed after the API retries, then /exit.
				"d374 UserPromptSubmit started A",
				"d374 StopFailure failed A",
				// 1111…: a turn left running (API unreachable) when the user exited.
				"1111 UserPromptSubmit started B",
				"1111 SessionEnd interrupted B",
				// 2222…: two plain turns with a tool call each.
				"2222 UserPromptSubmit started C",
				"2222 Stop succeeded C",
				"2222 UserPromptSubmit started D",
				"2222 Stop succeeded D",
				// an approved tool call: the Notification 6 s later is the same approval.
				"2222 UserPromptSubmit started E",
				"2222 PermissionRequest approval-requested E",
				"2222 PostToolUse running E",
				"2222 Stop succeeded E",
				// an approval left unanswered, then /exit.
				"2222 UserPromptSubmit started F",
				"2222 PermissionRequest approval-requested F",
				"2222 SessionEnd interrupted F",
				// 4444…: approved.
				"4444 UserPromptSubmit started G",
				"4444 PermissionRequest approval-requested G",
				"4444 PostToolUse running G",
				"4444 Stop succeeded G",
				// 6666… and 5555… interleaved: two panes, each waiting for approval, then exit.
				"6666 UserPromptSubmit started H",
				"5555 UserPromptSubmit started I",
				"5555 PermissionRequest approval-requested I",
				"6666 PermissionRequest approval-requested H",
				"6666 SessionEnd interrupted H",
				"5555 SessionEnd interrupted I",
			},
		},
		{
			name: "codex", provider: "codex", file: "codex.jsonl",
			want: []string{
				// 01a22c0e…: three resumed tries against an unreachable API, no Stop ever.
				"01a2 UserPromptSubmit started A",
				"01a2 SessionEnd interrupted A",
				"01a2 UserPromptSubmit started B",
				"01a2 SessionEnd interrupted B",
				"01a2 UserPromptSubmit started C",
				"01a2 SessionEnd interrupted C",
				// 01a22c18…
				"01a2 UserPromptSubmit started D",
				"01a2 SessionEnd interrupted D",
				// 01a22c19…: against the fake model.
				"01a2 UserPromptSubmit started E",
				"01a2 Stop succeeded E",
				"01a2 UserPromptSubmit started F",
				"01a2 Stop succeeded F",
				"01a2 UserPromptSubmit started G",
				"01a2 PermissionRequest approval-requested G",
				"01a2 SessionEnd interrupted G",
			},
		},
		{
			name: "gemini", provider: "gemini", file: "gemini.jsonl",
			want: []string{
				// 065d…: the turn that failed after the API retries (AfterAgent
				// with "[no response text]"), then SessionEnd twice.
				"065d BeforeAgent started A",
				"065d AfterAgent failed A",
				// 3333…: a plain turn, then a turn with an approved shell command.
				"3333 BeforeAgent started B",
				"3333 AfterAgent succeeded B",
				"3333 BeforeAgent started C",
				"3333 Notification approval-requested C",
				"3333 AfterTool running C",
				"3333 AfterAgent succeeded C",
			},
		},
		{
			name: "cursor", provider: "cursor", file: "cursor.jsonl",
			want: []string{
				"6f1c beforeSubmitPrompt started A",
				"6f1c stop succeeded A",
				"6f1c beforeSubmitPrompt started B",
				"6f1c stop interrupted B", // status aborted
				"6f1c beforeSubmitPrompt started C",
				"6f1c stop failed C", // status error
				"6f1c beforeSubmitPrompt started D",
				"6f1c sessionEnd interrupted D",
			},
		},
		{
			name: "opencode", provider: "opencode", file: "opencode.jsonl",
			want: []string{
				// ses_dd3ef6…: the network failure: error, then idle twice.
				"ses_ chat.message started A",
				"ses_ session.error failed A",
				// ses_dd3e5a…: two turns against the fake model.
				"ses_ chat.message started B",
				"ses_ session.idle succeeded B",
				"ses_ chat.message started C",
				"ses_ session.idle succeeded C",
			},
		},
		{
			// The plugin of internal/hookinstall forwards bus events only,
			// and no message events: session.status busy opens the turn.
			name: "opencode, bus events the plugin forwards", provider: "opencode", file: "opencode.jsonl",
			keep: func(line []byte) bool {
				var e struct{ Type string }
				json.Unmarshal(line, &e)
				switch e.Type {
				case "session.created", "session.status", "session.idle", "session.error", "session.compacted",
					"session.deleted", "permission.asked", "permission.updated", "permission.replied",
					"question.asked", "question.replied":
					return true
				}
				return false
			},
			want: []string{
				"ses_ session.status started A",
				"ses_ session.error failed A",
				"ses_ session.status started B",
				"ses_ session.idle succeeded B",
				"ses_ session.status started C",
				"ses_ session.idle succeeded C",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay(t, tt.provider, tt.file, true, tt.keep)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replay %s (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
