package replay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func TestRedact(t *testing.T) {
	const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	tests := []struct {
		name string
		in   string
		want string
		n    int
	}{
		{"anthropic", "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 end", "key [REDACTED:anthropic-key] end", 1},
		{"openai project", "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "OPENAI_API_KEY=[REDACTED:openai-key]", 1},
		{"not inside a word", "task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz", 0},
		{"github classic", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "[REDACTED:github-token]", 1},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED:github-token]", 1},
		{"aws", "aws AKIAIOSFODNN7EXAMPLE ok", "aws [REDACTED:aws-key] ok", 1},
		{"slack", "xoxb-123456789012-abcdefghij", "[REDACTED:slack-token]", 1},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google-key]", 1},
		{"bearer", "Authorization: Bearer abcdef0123456789abcdef.xyz", "Authorization: Bearer [REDACTED:bearer-token]", 1},
		{"bearer short word", "the bearer of news", "the bearer of news", 0},
		{"pem", "key:\n" + pem + "\nafter", "key:\n[REDACTED:private-key]\nafter", 1},
		{"pem truncated", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "[REDACTED:private-key]", 1},
		{"url password", "postgres://app:hunter2secret@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x", 1},
		{"assignment", `"password": "correct-horse-battery"`, `"password": "[REDACTED:secret]"`, 1},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED:jwt]", 1},
		{"plain text", "nothing to see here, password: no", "nothing to see here, password: no", 0},
		{"two", "sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa and AKIAABCDEFGHIJKLMNOP", "[REDACTED:anthropic-key] and [REDACTED:aws-key]", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Redact(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Redact(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
			}
			again, m := Redact(got)
			if again != got || m != 0 {
				t.Errorf("not idempotent: %q → %q (%d)", got, again, m)
			}
		})
	}
}

func TestRedactTranscript(t *testing.T) {
	in := &transcript.Transcript{
		Session: transcript.Session{Title: "use sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa"},
		Items: []transcript.Item{
			{Kind: transcript.UserPrompt, Text: "token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
				Images: []transcript.Image{{MIME: "image/png", DataURL: "data:image/png;base64,AKIAABCDEFGHIJKLMNOP"}}},
			{Kind: transcript.ToolUse, Tool: "Bash", Input: json.RawMessage(`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop1234' x","n":1.50}`)},
		},
	}
	out, n := RedactTranscript(in)
	if n != 3 {
		t.Fatalf("redacted %d, want 3", n)
	}
	if strings.Contains(out.Title, "sk-ant") || strings.Contains(out.Items[0].Text, "ghp_") || strings.Contains(string(out.Items[1].Input), "abcdefghijklmnop1234") {
		t.Fatalf("secret left: %+v", out)
	}
	if !strings.Contains(string(out.Items[1].Input), `"n":1.50`) {
		t.Errorf("numbers changed: %s", out.Items[1].Input)
	}
	if out.Items[0].Images[0].DataURL != in.Items[0].Images[0].DataURL {
		t.Error("image data was redacted")
	}
	if !strings.Contains(in.Title, "sk-ant") {
		t.Error("the input transcript was modified")
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa", "password=hunter22hunter", "Bearer abcdefghijklmnopq", "https://u:p@h", "-----BEGIN PRIVATE KEY-----\nabc", "AKIAABCDEFGHIJKLMNOP"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once, _ := Redact(s)
		twice, n := Redact(once)
		if twice != once || n != 0 {
			t.Fatalf("not idempotent: %q → %q → %q (%d)", s, once, twice, n)
		}
	})
}
