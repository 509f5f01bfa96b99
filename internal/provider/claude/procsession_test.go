package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func TestProcessSession(t *testing.T) {
	dir := t.TempDir()
	env := transcript.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}}
	write := func(name, body string) {
		os.MkdirAll(filepath.Join(dir, "sessions"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "sessions", name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The shape 2.1.328 writes (bundle: pid, sessionId, cwd, startedAt,
	// procStart, version, …).
	write("4242.json", `{"pid":4242,"sessionId":"22222222-2222-4333-8444-555555555555","cwd":"/w","startedAt":1796170952464,"procStart":"1287180","version":{"VERSION":"2.1.328"}}`)
	write("77.json", `{"pid":78,"sessionId":"22222222-2222-4333-8444-555555555555"}`)
	write("5.json", `{"pid":5,"sessionId":"../../etc/passwd"}`)
	write("6.json", `{"pid":6,`)
	for _, tt := range []struct {
		pid  int
		want string
	}{
		{4242, "22222222-2222-4333-8444-555555555555"},
		{77, ""}, // a record of another process
		{5, ""},  // not a plain id
		{6, ""},  // torn
		{9, ""},  // none
		{0, ""},
		{-1, ""},
	} {
		if got := (Provider{}).ProcessSession(env, tt.pid); got != tt.want {
			t.Errorf("ProcessSession(%d) = %q, want %q", tt.pid, got, tt.want)
		}
	}
}
