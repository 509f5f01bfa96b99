package realcli_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// TestMusterClaudeBackground: issue 25, Required 5. Claude Code 2.1.332
// runs `claude --bg PROMPT` under a supervisor of its own (`claude daemon
// run`) and lists it with `claude agents --json`; `muster ls` lists it
// beside the panes, marked external, with the CLI's status and state, and
// `muster new claude --cmd 'claude attach ID'` (what ls prints) opens it in
// a Muster pane joined to the running agent: the conversation shows, and
// the supervisor still runs one agent, the same process, which ls then
// lists as that pane only.
func TestMusterClaudeBackground(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Claude, realcli.Options{})
	m := newMuster(t, s)
	claude := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, s.Bin, args...)
		cmd.Env, cmd.Dir = m.env, s.Dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The supervisor outlives the command that started it; stopped before
	// Muster's daemon (cleanups run last first) and the leak check. The
	// pane joined to it goes first: a `claude attach` whose supervisor
	// stops starts a new one of its own (`claude daemon run --origin
	// transient`), which nothing would stop.
	t.Cleanup(func() {
		if r := m.run(launchTimeout, "kill", "bg"); r.code != 0 {
			t.Logf("muster kill bg: exit %d: %s", r.code, r.stderr)
		}
		if out, err := claude("daemon", "stop", "--any"); err != nil {
			t.Logf("claude daemon stop --any: %v: %s", err, out)
		}
	})
	if err := s.Server.Enqueue(fakemodel.Text("reply in the background")); err != nil {
		t.Fatal(err)
	}
	out, err := claude("--bg", "say hello from the background")
	if err != nil {
		t.Fatalf("claude --bg: %v: %s", err, out)
	}
	mm := regexp.MustCompile(`backgrounded · ([0-9a-f]+)`).FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("claude --bg printed no id:\n%s", out)
	}
	id := mm[1]

	var row proto.SessionInfo
	var last string
	if !poll(turnTimeout, func() bool {
		r := m.run(launchTimeout, "ls", "--json")
		last = r.stdout + r.stderr
		var list []proto.SessionInfo
		if json.Unmarshal([]byte(r.stdout), &list) != nil {
			return false
		}
		for _, r := range list {
			if r.External != nil && r.External.ID == id {
				row = r
				return r.External.Status == "idle"
			}
		}
		return false
	}) {
		out, err := claude("agents", "--json")
		jobs, _ := filepath.Glob(filepath.Join(s.Home, ".claude", "jobs", "*"))
		t.Fatalf("muster ls never listed the background agent %s idle; last:\n%s\nclaude agents --json: %v\n%s\njobs: %v", id, last, err, out, jobs)
	}
	if row.Pane != proto.PaneExternal || row.Provider != "claude" || !strings.HasPrefix(row.NativeSessionID, id) || row.PID == 0 ||
		row.External.Supervisor != "claude agents" || row.External.State == "" || row.External.Attach != "claude attach "+id {
		t.Errorf("ls row: %+v %+v", row, *row.External)
	}
	if table := m.must("ls"); !strings.Contains(table, "external: ") || !strings.Contains(table, "--cmd 'claude attach "+id+"'") {
		t.Errorf("ls:\n%s\nwant the agent marked external and how to open it", table)
	}

	// Open it in a pane the way ls says.
	m.must("new", "claude", "--name", "bg", "--dir", s.Dir, "--detach", "--cmd", row.External.Attach)
	m.waitScreen("bg", "reply in the background", launchTimeout)
	// The pane has the agent now: ls lists the pane, not the agent a
	// second time as an external row.
	start := time.Now()
	r := m.run(launchTimeout, "ls", "--json")
	t.Logf("muster ls --json with a background agent (claude agents --json): %s", time.Since(start).Round(time.Millisecond))
	var list []proto.SessionInfo
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("ls --json: %v: %s%s", err, r.stdout, r.stderr)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name+"/"+s.Pane)
	}
	if len(list) != 1 || list[0].Name != "bg" || list[0].External != nil {
		t.Errorf("ls after attaching: %v; want the pane bg alone, not the agent %s beside it", names, id)
	}
	out, err = claude("agents", "--json")
	if err != nil {
		t.Fatalf("claude agents --json: %v: %s", err, out)
	}
	var agents []struct {
		ID   string `json:"id"`
		PID  int    `json:"pid"`
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(out), &agents); err != nil {
		t.Fatalf("claude agents --json: %v: %s", err, out)
	}
	var same int
	for _, a := range agents {
		if a.Kind == "background" {
			same++
			if a.ID != id || a.PID != row.PID {
				t.Errorf("after attaching: background agent %+v; want only %s, pid %d", a, id, row.PID)
			}
		}
	}
	if same != 1 {
		t.Errorf("after attaching: %d background agents, want the one (%s)", same, out)
	}
	t.Logf("claude agents --json after attaching:\n%s", out)
	t.Logf("the pane:\n%s", m.capture("bg"))
}
