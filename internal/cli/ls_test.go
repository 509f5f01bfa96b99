package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/proto"
)

// TestLsRedactsSecrets: a key in a pane's title, its command line or a
// reason is shown as [REDACTED:…] by `ls` and `ls --json`, as `history`
// shows titles.
func TestLsRedactsSecrets(t *testing.T) {
	key := "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefgh"
	home := startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{{
			ID: "3f1c2b9e-0000-4000-8000-000000000001", Name: "api", Provider: "claude", State: "restorable",
			CWD: "/src/api", CreatedAt: testNow.Add(-time.Hour).Format(time.RFC3339),
			Command: "claude --api-key " + key, Title: "use " + key + " for the deploy",
			Reason: "title \"use " + key + "\" could not resume",
		}})
	})
	for _, args := range [][]string{{"ls"}, {"ls", "--json"}} {
		ios, _, out, errOut := iostreams.Test()
		f := &Factory{IO: ios, Now: func() time.Time { return testNow }, Getenv: func(k string) string {
			if k == "MUSTER_HOME" {
				return home
			}
			return ""
		}}
		if code := Run(context.Background(), f, args); code != ExitOK {
			t.Fatalf("%v: exit %d (%s)", args, code, errOut.String())
		}
		if strings.Contains(out.String(), "AbCdEfGh") || !strings.Contains(out.String(), "[REDACTED:") {
			t.Errorf("%v printed the key or no redaction mark:\n%s", args, out.String())
		}
		if args[len(args)-1] == "--json" && strings.Count(out.String(), "[REDACTED:") != 3 {
			t.Errorf("ls --json redacted %d fields, want title, command and reason:\n%s", strings.Count(out.String(), "[REDACTED:"), out.String())
		}
	}
}
