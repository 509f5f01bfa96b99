package nativeid

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		stdin    string
		file     string // testdata file instead of stdin
		want     Claim
	}{
		{
			name: "canonical v1", provider: "custom",
			stdin: `{"version":1,"event":"session_started","session_id":"provider-owned-session-id"}`,
			want:  Claim{Provider: "custom", SessionID: "provider-owned-session-id", Format: Canonical, Event: EventSessionStarted},
		},
		{
			name: "canonical v1 pretty with additive fields", provider: "opencode",
			stdin: "{\n  \"version\": 1,\n  \"event\": \"session_started\",\n  \"session_id\": \"ses_dd3ef6bbdffe5SLE0xMEI2bxBZ\",\n  \"future\": {\"x\": [1,2]}\n}\n",
			want:  Claim{Provider: "opencode", SessionID: "ses_dd3ef6bbdffe5SLE0xMEI2bxBZ", Format: Canonical, Event: EventSessionStarted},
		},
		{
			name: "claude native SessionStart startup", provider: "claude", file: "claude-sessionstart-startup.json",
			want: Claim{Provider: "claude", SessionID: "d374eff7-6681-449d-ac7d-e8ad01a2744d", Format: Native, Event: "SessionStart", Source: "startup"},
		},
		{
			name: "claude native SessionStart resume", provider: "claude", file: "claude-sessionstart-resume.json",
			want: Claim{Provider: "claude", SessionID: "d374eff7-6681-449d-ac7d-e8ad01a2744d", Format: Native, Event: "SessionStart", Source: "resume"},
		},
		{
			name: "codex native SessionStart", provider: "codex", file: "codex-sessionstart-startup.json",
			want: Claim{Provider: "codex", SessionID: "01a22c0e-d041-74f3-b87b-104fada8e2f6", Format: Native, Event: "SessionStart", Source: "startup"},
		},
		{
			name: "gemini native SessionStart", provider: "gemini", file: "gemini-sessionstart-resume.json",
			want: Claim{Provider: "gemini", SessionID: "33333333-2222-4333-8444-555555555555", Format: Native, Event: "SessionStart", Source: "resume"},
		},
		{
			name: "cursor native sessionStart", provider: "cursor",
			stdin: `{"conversation_id":"c0ffee00-0000-4000-8000-000000000001","generation_id":"g1","hook_event_name":"sessionStart","session_id":"c0ffee00-0000-4000-8000-000000000001","is_background_agent":false,"workspace_roots":["/repo"],"transcript_path":null}`,
			want:  Claim{Provider: "cursor", SessionID: "c0ffee00-0000-4000-8000-000000000001", Format: Native, Event: "sessionStart"},
		},
		{
			name: "native camelCase sessionId", provider: "gemini",
			stdin: `{"sessionId":"a1b2c3d4-0000-4000-8000-000000000000","hookEventName":"SessionStart"}`,
			want:  Claim{Provider: "gemini", SessionID: "a1b2c3d4-0000-4000-8000-000000000000", Format: Native, Event: "SessionStart"},
		},
		{
			name: "native with both spellings agreeing", provider: "claude",
			stdin: `{"session_id":"same","sessionId":"same"}`,
			want:  Claim{Provider: "claude", SessionID: "same", Format: Native},
		},
		{
			name: "native non-start event still carries an id", provider: "claude", file: "claude-sessionend.json",
			want: Claim{Provider: "claude", SessionID: "d374eff7-6681-449d-ac7d-e8ad01a2744d", Format: Native, Event: "SessionEnd"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.stdin)
			if tt.file != "" {
				in = readTestdata(t, tt.file)
			}
			got, err := Decode(tt.provider, in)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		stdin    string
		file     string
		want     error
	}{
		{"unknown version 2", "claude", `{"version":2,"event":"session_started","session_id":"x"}`, "", ErrUnknownVersion},
		{"version as string", "custom", `{"version":"1","event":"session_started","session_id":"x"}`, "", ErrUnknownVersion},
		{"version 1.0", "custom", `{"version":1.0,"event":"session_started","session_id":"x"}`, "", ErrUnknownVersion},
		{"version null", "custom", `{"version":null,"event":"session_started","session_id":"x"}`, "", ErrUnknownVersion},
		{"unknown event", "custom", `{"version":1,"event":"session_ended","session_id":"x"}`, "", ErrUnknownEvent},
		{"missing event", "custom", `{"version":1,"session_id":"x"}`, "", ErrUnknownEvent},
		{"event not a string", "custom", `{"version":1,"event":7,"session_id":"x"}`, "", ErrUnknownEvent},
		{"canonical needs snake_case id", "custom", `{"version":1,"event":"session_started","sessionId":"x"}`, "", ErrMissingSessionID},
		{"canonical missing id", "claude", `{"version":1,"event":"session_started"}`, "", ErrMissingSessionID},
		{"canonical empty id", "custom", `{"version":1,"event":"session_started","session_id":""}`, "", ErrEmptySessionID},
		{"canonical numeric id", "custom", `{"version":1,"event":"session_started","session_id":42}`, "", ErrSessionIDType},
		{"canonical null id", "custom", `{"version":1,"event":"session_started","session_id":null}`, "", ErrSessionIDType},
		{"native missing id", "claude", `{"hook_event_name":"SessionStart"}`, "", ErrMissingSessionID},
		{"opencode raw bus event has no top-level id", "opencode", "", "opencode-session-created-event.json", ErrMissingSessionID},
		{"native empty id", "codex", `{"session_id":""}`, "", ErrEmptySessionID},
		{"native object id", "gemini", `{"session_id":{"id":"x"}}`, "", ErrSessionIDType},
		{"native conflicting ids", "claude", `{"session_id":"a","sessionId":"b"}`, "", ErrAmbiguousSessionID},
		{"id with newline", "claude", `{"session_id":"a\nb"}`, "", ErrInvalidSessionID},
		{"id with NUL", "claude", `{"session_id":"a\u0000b"}`, "", ErrInvalidSessionID},
		{"id with surrounding space", "claude", `{"session_id":" a "}`, "", ErrInvalidSessionID},
		{"id too long", "claude", `{"session_id":"` + strings.Repeat("x", MaxSessionIDLen+1) + `"}`, "", ErrInvalidSessionID},
		{"native for custom", "custom", "", "claude-sessionstart-startup.json", ErrNativeNotAllowed},
		{"native for muse", "muse", `{"session_id":"x"}`, "", ErrNativeNotAllowed},
		{"malformed", "claude", `{"session_id":`, "", ErrMalformed},
		{"trailing garbage", "claude", `{"session_id":"x"} {}`, "", ErrMalformed},
		{"array", "claude", `[{"session_id":"x"}]`, "", ErrMalformed},
		{"empty stdin", "claude", "", "", ErrMalformed},
		{"blank stdin", "claude", " \n", "", ErrMalformed},
		{"invalid utf-8", "claude", "{\"session_id\":\"\xff\"}", "", ErrMalformed},
		{"unknown provider", "aider", `{"version":1,"event":"session_started","session_id":"x"}`, "", ErrUnknownProvider},
		{"too large", "claude", `{"session_id":"x","pad":"` + strings.Repeat("p", MaxPayload) + `"}`, "", ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.stdin)
			if tt.file != "" {
				in = readTestdata(t, tt.file)
			}
			got, err := Decode(tt.provider, in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode = %+v, %v; want %v", got, err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("error is not one short line: %q", msg)
			}
		})
	}
}

func TestCheckProvider(t *testing.T) {
	if err := CheckProvider("claude", "claude"); err != nil {
		t.Errorf("CheckProvider(claude, claude) = %v", err)
	}
	// A Codex agent nested in a Claude pane claims its own provider.
	if err := CheckProvider("claude", "codex"); !errors.Is(err, ErrProviderMismatch) {
		t.Errorf("CheckProvider(claude, codex) = %v, want ErrProviderMismatch", err)
	}
	if err := CheckProvider("custom", "claude"); !errors.Is(err, ErrProviderMismatch) {
		t.Errorf("CheckProvider(custom, claude) = %v, want ErrProviderMismatch", err)
	}
}

func TestMusterSessionID(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		wantID string
		wantOK bool
	}{
		{"absent", nil, "", false},
		{"empty", map[string]string{EnvSessionID: ""}, "", false},
		{"blank", map[string]string{EnvSessionID: "  "}, "", false},
		{"set", map[string]string{EnvSessionID: "ms_123"}, "ms_123", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := MusterSessionID(func(k string) string { return tt.env[k] })
			if id != tt.wantID || ok != tt.wantOK {
				t.Errorf("MusterSessionID = %q, %v; want %q, %v", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}

// FuzzDecode checks that Decode never panics, that every accepted claim
// has a valid id and a known format, and that re-encoding an accepted claim
// canonically decodes to the same id.
func FuzzDecode(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			f.Add("claude", readTestdata(f, e.Name()))
		}
	}
	f.Add("custom", []byte(`{"version":1,"event":"session_started","session_id":"x"}`))
	f.Add("custom", []byte(`{"version":2}`))
	f.Add("gemini", []byte(`{"sessionId":"x","session_id":"x"}`))
	f.Fuzz(func(t *testing.T, provider string, stdin []byte) {
		c, err := Decode(provider, stdin)
		if err != nil {
			return
		}
		if ValidSessionID(c.SessionID) != nil {
			t.Fatalf("accepted invalid id %q", c.SessionID)
		}
		if c.Format != Canonical && c.Format != Native {
			t.Fatalf("bad format %v", c.Format)
		}
		if c.Format == Native && !acceptsNative(provider) {
			t.Fatalf("native payload accepted for %q", provider)
		}
		canon := `{"version":1,"event":"session_started","session_id":` + jsonString(c.SessionID) + `}`
		again, err := Decode(provider, []byte(canon))
		if err != nil || again.SessionID != c.SessionID {
			t.Fatalf("re-decode of %s = %+v, %v", canon, again, err)
		}
	})
}
