package core_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// hookLoop plays an agent running its hooks: it feeds each payload file
// dropped into its spool directory ($1) to the hook helper, in order, and
// removes it once the helper returned (the daemon acknowledged the event).
// Nothing is typed into the pane, so no keystroke evidence (the fusion rule
// of internal/native) mixes with the hook events under test.
const hookLoop = `#!/bin/sh
spool=$1
mkdir -p "$spool"
while :; do
	for f in "$spool"/*.json; do
		[ -e "$f" ] || continue
		muster hook event claude < "$f" || echo "hook failed: $f"
		rm -f "$f"
	done
	sleep 0.05
done
`

// installHookLoop puts muster and hook-loop on the panes' PATH and returns
// the directory, where tests may add programs of their own.
func (e *env) installHookLoop() string {
	e.t.Helper()
	bin := e.t.TempDir()
	if err := os.Symlink(musterBin, filepath.Join(bin, "muster")); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "hook-loop"), []byte(hookLoop), 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.vars = append(e.vars, "PATH="+bin+":"+os.Getenv("PATH"))
	e.hookBin = bin
	return bin
}

// hookSpool is where claudeHook drops the payloads for session name: the
// pane runs `hook-loop "$(hookSpool)"` in the background.
func (e *env) hookSpool(name string) string {
	return filepath.Join(e.hookBin, "spool-"+name)
}

// hookShell is a pane command: a shell whose hooks run from the spool.
func (e *env) hookShell(name string) string {
	return e.script(fmt.Sprintf("hook-loop %q &\nexec bash --norc --noprofile", e.hookSpool(name)))
}

// claudeHook has the pane's hook loop run `muster hook event claude` with a
// payload shaped like Claude Code 2.1.328's, and returns once the daemon
// answered it.
func (e *env) claudeHook(name, event, promptID, extra string) {
	e.t.Helper()
	payload := fmt.Sprintf(`{"session_id":"d374eff7-6681-449d-ac7d-e8ad01a2744d","transcript_path":"/tmp/x.jsonl","cwd":"/tmp","prompt_id":"%s","hook_event_name":"%s"%s}`, promptID, event, extra)
	spool := e.hookSpool(name)
	if err := os.MkdirAll(spool, 0o700); err != nil {
		e.t.Fatal(err)
	}
	tmp := filepath.Join(spool, "next.tmp")
	final := filepath.Join(spool, fmt.Sprintf("%020d.json", time.Now().UnixNano()))
	if err := os.WriteFile(tmp, []byte(payload), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		e.t.Fatal(err)
	}
	if !eventually(func() bool { _, err := os.Stat(final); return os.IsNotExist(err) }) {
		e.t.Fatalf("the hook loop of %s never ran %s", name, event)
	}
}

func (e *env) attention(all bool) []proto.AttentionItem {
	e.t.Helper()
	args := []string{"attention", "--json"}
	if all {
		args = append(args, "--all")
	}
	var items []proto.AttentionItem
	if err := json.Unmarshal([]byte(e.must(args...)), &items); err != nil {
		e.t.Fatal(err)
	}
	return items
}

func TestHookEventsDriveRunStateAndAttention(t *testing.T) {
	e := newEnv(t)
	e.installHookLoop()
	e.must("new", "--name", "cl", "--detach", "--cmd", e.hookShell("cl"))

	// Already satisfied waits return at once; nothing has happened yet.
	if r := e.run("wait", "cl", "--until", "running", "--timeout", "200ms"); r.code != 1 {
		t.Fatalf("wait before any event: exit %d, want 1 (timeout); %s", r.code, r.stderr)
	}
	e.claudeHook("cl", "UserPromptSubmit", "p-1", `,"prompt":"run the tests"`)
	e.must("wait", "cl", "--until", "running", "--timeout", "20s")
	runID := *e.session("cl").RunID

	e.claudeHook("cl", "PermissionRequest", "p-1", `,"tool_name":"Bash","tool_input":{"command":"make test"}`)
	out := e.must("wait", "cl", "--until", "waiting", "--timeout", "20s", "--json")
	if !strings.Contains(out, "waitingApproval") {
		t.Errorf("wait --json = %s", out)
	}
	// Claude's late Notification for the same approval opens no second item.
	e.claudeHook("cl", "Notification", "p-1", `,"notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"`)
	items := e.attention(false)
	if len(items) != 1 || items[0].Reason != "approval-requested" || items[0].RunID != runID || !strings.Contains(items[0].Message, "make test") {
		t.Fatalf("attention = %+v, want one approval item for run %s", items, runID)
	}
	s := e.session("cl")
	if *s.RunState != "waitingApproval" || s.Attention != 1 || s.LastEventAt == nil {
		t.Errorf("ls = %+v", s)
	}

	// Approval granted: work resumes, the item resolves, the turn ends.
	e.claudeHook("cl", "PostToolUse", "p-1", `,"tool_name":"Bash","tool_input":{"command":"make test"},"tool_response":{"stdout":"ok"}`)
	e.must("wait", "cl", "--until", "running", "--timeout", "20s")
	if items := e.attention(false); len(items) != 0 {
		t.Errorf("approval item still open after work resumed: %+v", items)
	}
	if items := e.attention(true); len(items) != 1 || items[0].Open {
		t.Errorf("resolved item should stay visible with --all: %+v", items)
	}
	e.claudeHook("cl", "Stop", "p-1", `,"stop_hook_active":false`)
	e.must("wait", "cl", "--until", "done", "--timeout", "20s")
	if s := e.session("cl"); *s.RunState != "succeeded" || *s.RunID != runID {
		t.Errorf("after Stop: %v %v", *s.RunState, *s.RunID)
	}

	// A failure opens an item; ack clears it.
	e.claudeHook("cl", "UserPromptSubmit", "p-2", `,"prompt":"again"`)
	e.claudeHook("cl", "StopFailure", "p-2", `,"error":"server_error"`)
	e.must("wait", "cl", "--until", "attention", "--timeout", "20s")
	items = e.attention(false)
	if len(items) != 1 || items[0].Reason != "failed" {
		t.Fatalf("attention after StopFailure = %+v", items)
	}
	e.must("ack", fmt.Sprint(items[0].ID))
	if items := e.attention(false); len(items) != 0 {
		t.Errorf("ack left %+v", items)
	}

	// wait ends with 3 when the session disappears.
	done := make(chan result, 1)
	go func() { done <- e.run("wait", "cl", "--until", "waitingInput", "--timeout", "60s") }()
	if !eventually(func() bool { return len(e.ls()) == 1 }) {
		t.Fatal("no session")
	}
	e.must("kill", "cl")
	if r := <-done; r.code != 3 {
		t.Errorf("wait on a killed session: exit %d, want 3; %s", r.code, r.stderr)
	}
	if r := e.run("wait", "nope", "--until", "done"); r.code == 0 {
		t.Errorf("wait on an unknown session succeeded")
	}
}

func TestCapabilityRevokedWhenPaneCloses(t *testing.T) {
	e := newEnv(t)
	script := e.script(`printf '%s\n' "$MUSTER_EVENT_CAPABILITY" "$MUSTER_SURFACE_ID" "$MUSTER_EVENT_SOCKET" > "$0.cap"; read line; exit 0`)
	e.must("new", "--name", "c", "--detach", "--cmd", script)
	var fields []string
	if !eventually(func() bool {
		b, err := os.ReadFile(script + ".cap")
		fields = strings.Fields(string(b))
		return err == nil && len(fields) == 3
	}) {
		t.Fatal("the pane never wrote its environment")
	}
	capTok, surface, sock := fields[0], fields[1], fields[2]
	send := func(id string) string {
		env := fmt.Sprintf(`{"schemaVersion":1,"capability":%q,"event":{"schemaVersion":1,"id":{"rawValue":%q},"runID":{"rawValue":"11111111-1111-4111-8111-111111111111"},"sessionID":null,"surfaceID":{"rawValue":%q},"provider":"claude","kind":"started","occurredAt":"2026-01-01T00:00:00Z"}}`, capTok, id, surface)
		return rawEvent(t, sock, env)
	}
	if got := send("22222222-2222-4222-8222-222222222222"); !strings.Contains(got, `"inserted":true`) {
		t.Fatalf("live capability refused: %s", got)
	}
	e.must("send", "c", "", "--enter") // the script exits
	if !eventually(func() bool { return e.session("c").State == "exited" }) {
		t.Fatal("pane never exited")
	}
	got := send("33333333-3333-4333-8333-333333333333")
	if !strings.Contains(got, `"error":"unauthorized"`) || strings.Contains(got, capTok) {
		t.Errorf("revoked capability: response %s, want unauthorized without the token", got)
	}
}

func rawEvent(t *testing.T, sock, envelope string) string {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	conn.Write([]byte(envelope + "\n"))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return line
}
