package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/proto"
)

// fakeClaudeAgents puts a `claude` on a new PATH that prints agents as
// `claude agents --json` (Claude Code 2.1.332, as
// internal/provider/claude/testdata/background/agents.json recorded it)
// and a job directory per agent under a new HOME, and returns HOME and
// PATH.
func fakeClaudeAgents(t *testing.T, ids ...string) (home, path string) {
	t.Helper()
	home, bin := t.TempDir(), t.TempDir()
	var rows []map[string]any
	for i, id := range ids {
		if err := os.MkdirAll(filepath.Join(home, ".claude", "jobs", id), 0o700); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, map[string]any{
			"pid": 6634 + i, "id": id, "cwd": "/src/bg", "kind": "background", "startedAt": 1796445690237,
			"sessionId": id + "-e99d-41c7-817c-23c324ac7ffa", "name": "bg-" + id, "status": "idle", "state": "working",
		})
	}
	out, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	// Builtins only: PATH holds nothing else.
	script := "#!/bin/sh\n[ \"$1 $2\" = 'agents --json' ] || exit 3\nprintf '%s\\n' '" + string(out) + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return home, bin
}

// TestLsExternalJoinedByPane: a live pane that runs `claude attach ID`
// (what ls advises for a background agent) is that agent's: ls lists the
// pane and not the agent a second time as an external row; an agent no
// pane joined is still listed, and so is one whose pane has exited.
func TestLsExternalJoinedByPane(t *testing.T) {
	home, path := fakeClaudeAgents(t, "0b6ecd0a", "1c7fde1b", "2d8aef2c")
	muster := startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{
			{ID: "p1", Name: "joined", Provider: "claude", State: proto.PaneRunning, PID: 7, CWD: "/src/bg",
				CreatedAt: testNow.Add(-time.Minute).Format(time.RFC3339), Command: "/usr/local/bin/claude attach '0b6ecd0a'"},
			{ID: "p2", Name: "gone", Provider: "claude", State: "exited", CWD: "/src/bg",
				CreatedAt: testNow.Add(-time.Minute).Format(time.RFC3339), Command: "claude attach 2d8aef2c"},
		})
	})
	ios, _, out, errOut := iostreams.Test()
	env := map[string]string{"MUSTER_HOME": muster, "HOME": home, "PATH": path}
	f := &Factory{IO: ios, Now: func() time.Time { return testNow }, Getenv: func(k string) string { return env[k] }}
	if code := Run(context.Background(), f, []string{"ls", "--json"}); code != ExitOK {
		t.Fatalf("ls --json: exit %d (%s)", code, errOut.String())
	}
	var list []proto.SessionInfo
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	var got []string
	for _, s := range list {
		if s.External != nil {
			got = append(got, s.External.ID)
		}
	}
	if len(got) != 2 || got[0] != "1c7fde1b" || got[1] != "2d8aef2c" || len(list) != 4 {
		t.Errorf("external rows %v of %d rows; want 1c7fde1b and 2d8aef2c beside the 2 panes (0b6ecd0a is the pane joined's):\n%s", got, len(list), out.String())
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
}

func TestRunsAttach(t *testing.T) {
	attach := []string{"claude", "attach", "0b6ecd0a"}
	for cmd, want := range map[string]bool{
		"claude attach 0b6ecd0a":           true,
		"  claude   attach \"0b6ecd0a\"":   true,
		"/opt/bin/claude attach 0b6ecd0a":  true,
		"claude attach 0b6ecd0":            false,
		"claude attach 0b6ecd0a --fork":    false,
		"codex attach 0b6ecd0a":            false,
		"claude --resume 0b6ecd0a":         false,
		"claude attach 0b6ecd0a 'unclosed": false,
		"":                                 false,
	} {
		if got := runsAttach(proto.SessionInfo{Command: cmd}, attach); got != want {
			t.Errorf("runsAttach(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestServeListsExternal: `muster serve`'s Live page lists the background
// agents as ls does (the same listing: an agent a live pane joined is
// the pane's), marked external, with the command that opens one in a
// pane and no terminal of its own.
func TestServeListsExternal(t *testing.T) {
	home, path := fakeClaudeAgents(t, "0b6ecd0a", "1c7fde1b")
	muster := startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{
			{ID: "p1", Name: "joined", Provider: "claude", State: proto.PaneRunning, PID: 7, CWD: "/src/bg",
				CreatedAt: testNow.Add(-time.Minute).Format(time.RFC3339), Command: "claude attach 0b6ecd0a"},
		})
	})
	u := startServeEnv(t, map[string]string{"MUSTER_HOME": muster, "HOME": home, "PATH": path}, "--addr", "127.0.0.1:0")
	base := u[:strings.Index(u, "/?")]
	resp, body := serveGet(t, base+"/live", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /live: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(body, `data-name="joined"`) {
		t.Errorf("the page lacks the pane:\n%s", body)
	}
	if strings.Contains(body, "0b6ecd0a&#39;</code>") || strings.Contains(body, `data-name="bg-0b6ecd0a"`) {
		t.Errorf("the page lists the agent the pane joined as external:\n%s", body)
	}
	for _, w := range []string{`<section class="pane ext" data-name="bg-1c7fde1b">`, `<span class="state external">↗ external idle</span><span class="act">working</span>`,
		`run by claude agents, not muster; open it in a pane: <code>muster new claude --cmd &#39;claude attach 1c7fde1b&#39;</code>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %s:\n%s", w, body)
		}
	}
}
