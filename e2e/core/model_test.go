package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cursorPrompt is a Cursor 1.7 beforeSubmitPrompt hook payload, as
// internal/hookevent/testdata/cursor.jsonl has it: Cursor names the model
// in every hook.
const cursorPrompt = `{"conversation_id":"6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f","generation_id":"gen-1","model":"gpt-5","hook_event_name":"beforeSubmitPrompt","cursor_version":"1.7.0","workspace_roots":["/repo"],"transcript_path":null,"prompt":"run the tests","attachments":[]}`

// TestHookModelReachesLsAndDashboard: the model a hook payload names goes
// from the real muster-hook binary, run in a pane as the agent runs it,
// through events.sock to `muster ls --json` and the dashboard.
func TestHookModelReachesLsAndDashboard(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	payload := filepath.Join(dir, "payload.json")
	if err := os.WriteFile(payload, []byte(cursorPrompt), 0o600); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(filepath.Dir(musterBin), "muster-hook")
	done := filepath.Join(dir, "done")
	// The pane's program is named as Cursor's CLI is, so that the daemon
	// sees Cursor in the foreground: the model is the running agent's, and
	// it goes when the agent leaves.
	agent := filepath.Join(dir, "cursor-agent")
	script := fmt.Sprintf("#!/bin/sh\nMUSTER_HOOK_DEBUG=1 %q event cursor < %q > %q 2>&1; echo $? >> %q\nsleep 600\n",
		hook, payload, done, done)
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.must("new", "--name", "cu", "--detach", "--cmd", agent)
	if !eventually(func() bool {
		b, _ := os.ReadFile(done)
		return strings.HasSuffix(string(b), "\n")
	}) {
		t.Fatal("the pane never ran muster-hook")
	}
	out, _ := os.ReadFile(done)
	if !strings.Contains(string(out), "ok=true") {
		t.Fatalf("muster-hook did not deliver the event:\n%s", out)
	}
	if !eventually(func() bool { return e.session("cu").Model == "gpt-5" }) {
		t.Fatalf("ls --json shows model %q, want gpt-5 (muster-hook said %s)", e.session("cu").Model, out)
	}
	// Wide enough that the session table beside the preview has its MODEL
	// column.
	dash := e.ptyRun(300, 30, true)
	dash.waitScreen("gpt-5")
}
