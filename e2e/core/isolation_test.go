package core_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// helperEnv makes the test binary run as a small client instead of the
// tests (see TestMain).
const helperEnv = "MUSTER_E2E_HELPER"

func runHelper(mode string, args []string) int {
	switch mode {
	case "raw":
		return rawHelper(args)
	case "flood":
		return floodHelper(args)
	case "events":
		return eventsHelper(args)
	case "keylog":
		return keylogHelper(args)
	}
	fmt.Fprintln(os.Stderr, "unknown helper", mode)
	return 2
}

// rawHelper plays a hostile process inside a pane that knows only its own
// environment: control.sock sits beside MUSTER_EVENT_SOCKET. It sends each
// request of the JSON array in args[0] on a fresh connection and writes the
// response lines to args[1]. In requests, @CAP@ becomes its own
// capability and @STOLEN@ the capability read from /proc/<args[2]>/environ.
func rawHelper(args []string) int {
	sock := filepath.Join(filepath.Dir(os.Getenv("MUSTER_EVENT_SOCKET")), "control.sock")
	data, err := os.ReadFile(args[0])
	if err != nil {
		return 1
	}
	var reqs []json.RawMessage
	if err := json.Unmarshal(data, &reqs); err != nil {
		return 1
	}
	stolen := ""
	if env, err := os.ReadFile("/proc/" + args[2] + "/environ"); err == nil {
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("MUSTER_EVENT_CAPABILITY=")); ok {
				stolen = string(v)
			}
		}
	}
	var out bytes.Buffer
	for _, r := range reqs {
		line := strings.ReplaceAll(string(r), "@CAP@", os.Getenv("MUSTER_EVENT_CAPABILITY"))
		line = strings.ReplaceAll(line, "@STOLEN@", stolen)
		out.WriteString(roundTrip(sock, line))
	}
	if err := os.WriteFile(args[1]+".tmp", out.Bytes(), 0o600); err != nil {
		return 1
	}
	if err := os.Rename(args[1]+".tmp", args[1]); err != nil {
		return 1
	}
	return 0
}

// eventsHelper plays a process inside a pane that sends events on
// events.sock. It sends each envelope of the JSON array in args[0] on a
// fresh connection and writes the response lines to args[1]. In them, @CAP@
// and @SURF@ become its own capability and surface id, @STOLEN@ and
// @VSURF@ those read from /proc/<args[2]>/environ.
func eventsHelper(args []string) int {
	data, err := os.ReadFile(args[0])
	if err != nil {
		return 1
	}
	var reqs []json.RawMessage
	if err := json.Unmarshal(data, &reqs); err != nil {
		return 1
	}
	stolen := map[string]string{}
	if env, err := os.ReadFile("/proc/" + args[2] + "/environ"); err == nil {
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			k, v, _ := strings.Cut(string(kv), "=")
			stolen[k] = v
		}
	}
	var out bytes.Buffer
	for _, r := range reqs {
		line := strings.NewReplacer(
			"@CAP@", os.Getenv("MUSTER_EVENT_CAPABILITY"), "@SURF@", os.Getenv("MUSTER_SURFACE_ID"),
			"@STOLEN@", stolen["MUSTER_EVENT_CAPABILITY"], "@VSURF@", stolen["MUSTER_SURFACE_ID"],
		).Replace(string(r))
		out.WriteString(sendEvent(os.Getenv("MUSTER_EVENT_SOCKET"), line))
	}
	if err := os.WriteFile(args[1]+".tmp", out.Bytes(), 0o600); err != nil {
		return 1
	}
	if err := os.Rename(args[1]+".tmp", args[1]); err != nil {
		return 1
	}
	return 0
}

// sendEvent sends one request line to events.sock and returns the answer.
func sendEvent(sock, line string) string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return `{"ok":false,"error":"dial_failed"}` + "\n"
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return `{"ok":false,"error":"write_failed"}` + "\n"
	}
	resp, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return `{"ok":false,"error":"closed"}` + "\n"
	}
	return resp
}

// helloLine opens every raw control connection: the version exchange.
var helloLine = fmt.Sprintf(`{"op":"hello","args":{"protocol":%d,"version":"e2e"}}`, proto.ControlVersion)

// roundTrip sends one request on a fresh connection, after hello, and
// returns the response line.
func roundTrip(sock, line string) string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return `{"ok":false,"error":{"code":"dial_failed"}}` + "\n"
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte(helloLine + "\n" + line + "\n")); err != nil {
		return `{"ok":false,"error":{"code":"write_failed"}}` + "\n"
	}
	br := bufio.NewReader(c)
	if hello, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(hello, `{"ok":true`) {
		return `{"ok":false,"error":{"code":"hello_failed"}}` + "\n"
	}
	resp, err := br.ReadString('\n')
	if err != nil {
		return `{"ok":false,"error":{"code":"closed"}}` + "\n"
	}
	return resp
}

// floodHelper opens args[1] connections to the socket args[0], says
// "ready", and holds them until its stdin closes.
func floodHelper(args []string) int {
	n, _ := strconv.Atoi(args[1])
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("unix", args[0], 5*time.Second)
		if err != nil {
			continue
		}
		conns = append(conns, c)
	}
	fmt.Printf("ready %d\n", len(conns))
	bufio.NewReader(os.Stdin).ReadString('\n')
	for _, c := range conns {
		c.Close()
	}
	return 0
}

// victimAgent reports its conversation id like a real hook, then becomes
// the shell that an injected command would run in.
const victimAgent = `#!/bin/sh
printf '{"version":1,"event":"session_started","session_id":"%s"}' "conv-victim-$$" |
	muster hook capture --provider custom --process-id "$$" || echo "capture failed"
hook-loop "$(dirname "$0")/spool-victim" &
echo victim-ready
exec bash --norc --noprofile
`

type rawReq struct {
	Op   string `json:"op"`
	Args any    `json:"args,omitempty"`
}

type rawCase struct {
	name string
	req  rawReq
	want string // error code, or "" for ok
}

func writeRequests(t *testing.T, path string, cases []rawCase) {
	t.Helper()
	reqs := make([]rawReq, len(cases))
	for i, c := range cases {
		reqs[i] = c.req
	}
	b, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	if !eventually(func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil
	}) {
		t.Fatalf("%s never appeared", path)
	}
	return string(b)
}

// waitExit waits for the exit status a pane's shell writes with `echo $?
// >path` and returns it. The shell creates the file before echo writes
// it, so a file that exists may still be empty: the status is there once
// its line is (waitFile read "" there).
func waitExit(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	if !eventually(func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && bytes.HasSuffix(b, []byte("\n"))
	}) {
		t.Fatalf("%s never held an exit status: %q", path, b)
	}
	return strings.TrimSpace(string(b))
}

func checkResponses(t *testing.T, who, out string, cases []rawCase) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%s: %d responses for %d requests:\n%s", who, len(lines), len(cases), out)
	}
	for i, c := range cases {
		var resp proto.Response
		if err := json.Unmarshal([]byte(lines[i]), &resp); err != nil {
			t.Errorf("%s %s: response %q: %v", who, c.name, lines[i], err)
			continue
		}
		got := ""
		if !resp.OK {
			got = "(no code)"
			if resp.Error != nil {
				got = resp.Error.Code
			}
		}
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q; response %s", who, c.name, got, c.want, lines[i])
		}
	}
}

// stableScreen captures a pane until two captures in a row agree.
func (e *env) stableScreen(name string) string {
	e.t.Helper()
	var prev, cur string
	eventually(func() bool {
		prev, cur = cur, e.must("capture", name)
		return prev == cur
	})
	return cur
}

func TestPaneCannotDriveAnotherPane(t *testing.T) {
	e := newEnv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := e.installHookLoop()
	if err := os.WriteFile(filepath.Join(bin, "victim-agent"), []byte(victimAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()

	// The victim: an agent with a confirmed conversation id and an open
	// approval request.
	e.must("new", "--name", "victim", "--detach", "--cmd", "victim-agent")
	if screen := e.waitScreen("victim", "victim-ready"); strings.Contains(screen, "capture failed") {
		t.Fatalf("the victim's own capture was refused:\n%s", screen)
	}
	var victim proto.SessionInfo
	if !eventually(func() bool { victim = e.session("victim"); return victim.NativeConfirmed }) {
		t.Fatalf("victim's native id never confirmed: %+v", victim)
	}
	e.claudeHook("victim", "UserPromptSubmit", "p-1", `,"prompt":"deploy"`)
	e.claudeHook("victim", "PermissionRequest", "p-1", `,"tool_name":"Bash","tool_input":{"command":"make deploy"}`)
	e.must("wait", "victim", "--until", "waiting", "--timeout", "20s")
	items := e.attention(false)
	if len(items) != 1 {
		t.Fatalf("attention = %+v, want the victim's approval request", items)
	}
	item := items[0]
	before := e.stableScreen("victim")

	// The attacker: a shell pane that runs commands typed into it.
	e.must("new", "--name", "evil", "--detach", "--cmd", "bash --norc --noprofile")
	pwned := filepath.Join(work, "pwned")
	forbidden := []rawCase{
		{"send", rawReq{"send", proto.SendArgs{Name: "victim", Text: "touch " + pwned, Enter: true}}, proto.CodeForbidden},
		{"capture", rawReq{"capture", proto.CaptureArgs{Name: "victim"}}, proto.CodeForbidden},
		{"ack the victim's item", rawReq{"ack", proto.AckArgs{IDs: []int64{item.ID}}}, proto.CodeForbidden},
		{"ack --all", rawReq{"ack", proto.AckArgs{All: true}}, proto.CodeForbidden},
		{"rename", rawReq{"rename", proto.RenameArgs{Name: "victim", NewName: "owned"}}, proto.CodeForbidden},
		{"kill", rawReq{"kill", proto.Target{Name: "victim"}}, proto.CodeForbidden},
		{"resume", rawReq{"resume", map[string]any{"names": []string{"victim"}}}, proto.CodeForbidden},
		{"attach", rawReq{"attach", proto.AttachArgs{Name: "victim", Cols: 80, Rows: 24}}, proto.CodeForbidden},
		{"stop", rawReq{"stop", nil}, proto.CodeForbidden},
		{"native_capture with its own capability", rawReq{"native_capture", map[string]any{
			"session_id": victim.ID, "capability": "@CAP@", "provider": "custom",
			"native_id": "conv-attacker", "pid": victim.PID}}, proto.CodeUnauthorized},
		{"native_capture with the victim's capability read from /proc", rawReq{"native_capture", map[string]any{
			"session_id": victim.ID, "capability": "@STOLEN@", "provider": "custom",
			"native_id": "conv-attacker", "pid": victim.PID}}, proto.CodeForbidden},
		{"unknown op", rawReq{"reboot", nil}, proto.CodeForbidden},
	}
	allowed := []rawCase{
		{"status", rawReq{"status", nil}, ""},
		{"ls", rawReq{"ls", nil}, ""},
		{"attention", rawReq{"attention", proto.AttentionArgs{All: true}}, ""},
		{"explain", rawReq{"explain", proto.Target{Name: "victim"}}, ""},
		{"wait", rawReq{"wait", proto.WaitArgs{Names: []string{"victim"}, Until: []string{"waiting"}, TimeoutMS: 100}}, ""},
		{"capture itself", rawReq{"capture", proto.CaptureArgs{Name: "evil"}}, ""},
		{"send to its child", rawReq{"send", proto.SendArgs{Name: "child", Text: "echo from-evil-$((6*7))", Enter: true}}, ""},
		{"capture its child", rawReq{"capture", proto.CaptureArgs{Name: "child"}}, ""},
		{"rename its child", rawReq{"rename", proto.RenameArgs{Name: "child", NewName: "kid"}}, ""},
	}
	inPane := append(append([]rawCase{}, forbidden...), allowed...)
	writeRequests(t, filepath.Join(work, "reqs.json"), inPane)
	// A job that left the pane's process tree and session (setsid -f) but
	// kept its environment is still known.
	escaped := forbidden[:3]
	writeRequests(t, filepath.Join(work, "escaped.json"), escaped)

	w := func(name string) string { return filepath.Join(work, name) }
	script := strings.Join([]string{
		"muster new --name child --cmd 'bash --norc --noprofile' 2>" + w("new.err") + "; echo $? >" + w("new.rc"),
		"muster send victim 'touch " + pwned + "-cli' --enter 2>" + w("send.err") + "; echo $? >" + w("send.rc"),
		"muster attach victim 2>" + w("attach.err") + "; echo $? >" + w("attach.rc"),
		"muster attach evil 2>" + w("attach-self.err") + "; echo $? >" + w("attach-self.rc"),
		helperEnv + "=raw " + self + " " + w("reqs.json") + " " + w("raw.out") + " " + strconv.Itoa(victim.PID),
		"setsid -f env " + helperEnv + "=raw " + self + " " + w("escaped.json") + " " + w("escaped.out") + " " + strconv.Itoa(victim.PID),
	}, "; ")
	e.must("send", "evil", script, "--enter")

	checkResponses(t, "inside the pane:", waitFile(t, w("raw.out")), inPane)
	checkResponses(t, "escaped with its environment:", waitFile(t, w("escaped.out")), escaped)

	if rc := waitExit(t, w("new.rc")); rc != "0" {
		t.Errorf("muster new inside a pane: exit %s, stderr %q", rc, waitFile(t, w("new.err")))
	}
	if msg := waitFile(t, w("new.err")); !strings.Contains(msg, "created child detached") || !strings.Contains(msg, "muster attach child") {
		t.Errorf("muster new inside a pane said %q; want it created detached with how to attach", msg)
	}
	wantSend := `muster: refused: this process runs inside muster pane "evil"; it may not drive pane "victim"`
	if rc, msg := waitExit(t, w("send.rc")), waitFile(t, w("send.err")); rc != "1" || !strings.Contains(msg, wantSend) {
		t.Errorf("muster send victim from evil: exit %s, stderr %q; want 1 and %q", rc, msg, wantSend)
	}
	if rc, msg := waitExit(t, w("attach.rc")), waitFile(t, w("attach.err")); rc != "1" || !strings.Contains(msg, `may not drive pane "victim"`) {
		t.Errorf("muster attach victim from evil: exit %s, stderr %q; want 1 and a refusal", rc, msg)
	}
	if rc, msg := waitExit(t, w("attach-self.rc")), waitFile(t, w("attach-self.err")); rc != "1" || !strings.Contains(msg, "its own output") {
		t.Errorf("muster attach to the pane it runs in: exit %s, stderr %q; want 1 and why", rc, msg)
	}

	// The child was driven; the victim was not.
	e.waitScreen("kid", "from-evil-42")
	// A pane may attach to what it started: a nested client, with its own
	// detach key, that leaves the pane's shell as it was.
	e.must("send", "evil", "muster attach kid; echo attach-rc=$?", "--enter")
	e.waitScreen("evil", "nested muster client on kid; detach it with ctrl-]")
	e.must("send", "evil", "--keys", "C-]")
	e.waitScreen("evil", "attach-rc=0")
	if after := e.stableScreen("victim"); after != before {
		t.Errorf("the victim's screen changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, p := range []string{pwned, pwned + "-cli"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: an injected command ran in the victim", p)
		}
	}
	if items := e.attention(false); len(items) != 1 || items[0].ID != item.ID || !items[0].Open {
		t.Errorf("attention after the attack = %+v, want item %d still open", items, item.ID)
	}
	v := e.session("victim")
	if v.State != "running" || v.NativeSessionID != victim.NativeSessionID || !v.NativeConfirmed || v.ID != victim.ID {
		t.Errorf("victim after the attack = %+v, want it running with native id %q", v, victim.NativeSessionID)
	}

	// A pane may kill what it started.
	e.must("send", "evil", "muster kill kid; echo $? >"+w("kill.rc"), "--enter")
	if rc := waitExit(t, w("kill.rc")); rc != "0" {
		t.Errorf("evil killing its own child: exit %s", rc)
	}

	// The store agrees after a restart: nothing was renamed or replaced.
	e.must("daemon", "stop", "--force")
	if v := e.session("victim"); v.NativeSessionID != victim.NativeSessionID || v.ID != victim.ID {
		t.Errorf("victim after a restart = %+v, want native id %q", v, victim.NativeSessionID)
	}
	for _, s := range e.ls() {
		if s.Name == "owned" || s.Name == "kid" {
			t.Errorf("session %q should not exist", s.Name)
		}
	}
}

func TestPaneCannotSendEventsForAnotherPane(t *testing.T) {
	e := newEnv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.installHookLoop()
	work := t.TempDir()
	w := func(name string) string { return filepath.Join(work, name) }

	e.must("new", "--name", "victim", "--detach", "--cmd", e.hookShell("victim"))
	e.must("new", "--name", "evil", "--detach", "--cmd", "bash --norc --noprofile")
	// The victim's own hook runs inside its pane: recorded.
	e.claudeHook("victim", "UserPromptSubmit", "p-1", `,"prompt":"deploy"`)
	e.must("wait", "victim", "--until", "running", "--timeout", "20s")
	victim := e.session("victim")
	before := e.explainEvents("victim")

	event := func(id, surface, capability string, kind proto.EventKind) proto.Envelope {
		return proto.Envelope{SchemaVersion: 1, Capability: capability, Event: proto.Event{
			SchemaVersion: 1, ID: proto.RawID{RawValue: id}, RunID: proto.RawID{RawValue: *victim.RunID},
			SurfaceID: proto.RawID{RawValue: surface}, Provider: "claude", Kind: kind,
			OccurredAt: time.Now().UTC(), HookName: "Stop"}}
	}
	forbidden := []proto.Envelope{
		event("stolen-1", "@VSURF@", "@STOLEN@", proto.KindSucceeded),
		event("stolen-2", "@VSURF@", "@STOLEN@", proto.KindFailed),
	}
	own := []proto.Envelope{event("own-1", "@SURF@", "@CAP@", proto.KindStarted)}
	for name, reqs := range map[string][]proto.Envelope{"stolen.json": forbidden, "own.json": own} {
		b, err := json.Marshal(reqs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w(name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	vpid := strconv.Itoa(victim.PID)
	helper := helperEnv + "=events " + self
	// The real hook helper too, with the victim's variables read from /proc.
	stolenEnv := "env $(tr '\\0' '\\n' </proc/" + vpid + "/environ | grep -E '^MUSTER_(SURFACE_ID|EVENT_CAPABILITY)=') MUSTER_HOOK_DEBUG=1"
	stop := `{"session_id":"d374eff7-6681-449d-ac7d-e8ad01a2744d","transcript_path":"/tmp/x.jsonl","cwd":"/tmp","prompt_id":"p-1","hook_event_name":"Stop"}`
	e.must("send", "evil", strings.Join([]string{
		helper + " " + w("stolen.json") + " " + w("stolen.out") + " " + vpid,
		helper + " " + w("own.json") + " " + w("own.out") + " " + vpid,
		// A job that left the pane's process tree and session but kept its
		// environment is still placed in the pane.
		"setsid -f env " + helper + " " + w("stolen.json") + " " + w("escaped.out") + " " + vpid,
		stolenEnv + " muster hook event claude 2>" + w("hook.err") + " <<'EOF'\n" + stop + "\nEOF",
	}, "; "), "--enter")
	want := func(file string, code string, n int) {
		t.Helper()
		out := strings.Split(strings.TrimSpace(waitFile(t, file)), "\n")
		if len(out) != n {
			t.Fatalf("%s: %d answers, want %d: %q", file, len(out), n, out)
		}
		for _, l := range out {
			var r proto.EventResponse
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.OK != (code == "") || r.Error != code {
				t.Errorf("%s: answer %q, want error %q", file, l, code)
			}
		}
	}
	want(w("stolen.out"), proto.ErrForbidden, 2)
	want(w("escaped.out"), proto.ErrForbidden, 2)
	want(w("own.out"), "", 1)
	if !eventually(func() bool {
		b, _ := os.ReadFile(w("hook.err"))
		return strings.Contains(string(b), "ok=false "+proto.ErrForbidden)
	}) {
		b, _ := os.ReadFile(w("hook.err"))
		t.Errorf("the hook helper run in evil with the victim's variables said %q; want it refused %s", b, proto.ErrForbidden)
	}
	if v := e.session("victim"); v.RunState == nil || *v.RunState != "running" || *v.RunID != *victim.RunID {
		t.Errorf("victim after the attack: run %s state %s, want run %s still running", orNone(v.RunID), orNone(v.RunState), *victim.RunID)
	}
	if after := e.explainEvents("victim"); !slices.Equal(after, before) {
		t.Errorf("the victim's events changed:\nbefore %v\nafter  %v", before, after)
	}
	if e.session("evil").RunState == nil {
		t.Error("evil's event for its own pane was not recorded")
	}

	// The user, outside every pane, may run the victim's hook by hand. (Not
	// the Stop: the refused one above is in the hook helper's own state,
	// a file any process of the user may write.)
	cmd := exec.Command(musterBin, "hook", "event", "claude")
	cmd.Env = append(append([]string{}, e.vars...), "MUSTER_HOOK_DEBUG=1",
		"MUSTER_EVENT_SOCKET="+filepath.Join(e.home, "run", "events.sock"),
		"MUSTER_SURFACE_ID="+e.explainSurface("victim"), "MUSTER_EVENT_CAPABILITY="+e.paneVar(victim.PID, "MUSTER_EVENT_CAPABILITY"))
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(strings.ReplaceAll(stop, "p-1", "p-2"), `"Stop"`, `"UserPromptSubmit","prompt":"by hand"`))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "ok=true") {
		t.Fatalf("the hook run by hand: %v: %s", err, out)
	}
	if v := e.session("victim"); v.RunID == nil || *v.RunID == *victim.RunID || v.RunState == nil || *v.RunState != "running" {
		t.Errorf("victim after the hook run by hand: run %s state %s, want a new run running", orNone(v.RunID), orNone(v.RunState))
	}
}

func orNone(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

// explainEvents lists the ids of a session's stored events (explain).
func (e *env) explainEvents(name string) []string {
	e.t.Helper()
	var x proto.Explanation
	if err := json.Unmarshal([]byte(e.must("explain", name, "--json")), &x); err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, ev := range x.Events {
		ids = append(ids, ev.EventID)
	}
	return ids
}

// explainSurface is a session's live surface id.
func (e *env) explainSurface(name string) string {
	e.t.Helper()
	var x proto.Explanation
	if err := json.Unmarshal([]byte(e.must("explain", name, "--json")), &x); err != nil {
		e.t.Fatal(err)
	}
	return x.SurfaceID
}

// paneVar reads a variable of a pane's process from /proc, as any process
// of the user can.
func (e *env) paneVar(pid int, key string) string {
	e.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		e.t.Fatal(err)
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(key+"=")); ok {
			return string(v)
		}
	}
	e.t.Fatalf("pane %d has no %s", pid, key)
	return ""
}

func TestForgedNativeCaptureFromOutsideChangesNothing(t *testing.T) {
	e := newEnv(t)
	bin := e.installHookLoop()
	if err := os.WriteFile(filepath.Join(bin, "victim-agent"), []byte(victimAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	e.must("new", "--name", "victim", "--detach", "--cmd", "victim-agent")
	e.waitScreen("victim", "victim-ready")
	var victim proto.SessionInfo
	if !eventually(func() bool { victim = e.session("victim"); return victim.NativeConfirmed }) {
		t.Fatal("native id never confirmed")
	}
	// What the measured attack did: the session id from `muster ls --json`,
	// the pane's pid from /proc, through the real CLI.
	cmd := exec.Command(musterBin, "hook", "capture", "--provider", "custom", "--process-id", strconv.Itoa(victim.PID))
	cmd.Env = append(append([]string{}, e.vars...), "MUSTER_AGENT_SESSION_ID="+victim.ID)
	cmd.Stdin = strings.NewReader(`{"version":1,"event":"session_started","session_id":"conv-attacker"}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "capability") {
		t.Errorf("forged capture: %v, stderr %q; want exit 1 naming the missing capability", err, stderr.String())
	}
	// The same with a raw request carrying a made-up capability.
	sock := filepath.Join(e.home, "run", "control.sock")
	resp := roundTrip(sock, fmt.Sprintf(`{"op":"native_capture","args":{"session_id":%q,"capability":"AAAA","provider":"custom","native_id":"conv-attacker","pid":%d}}`, victim.ID, victim.PID))
	if !strings.Contains(resp, `"code":"unauthorized"`) {
		t.Errorf("raw forged capture answered %s, want unauthorized", resp)
	}
	if v := e.session("victim"); v.NativeSessionID != victim.NativeSessionID || !v.NativeConfirmed {
		t.Errorf("native id after forged captures = %q (confirmed %v), want %q", v.NativeSessionID, v.NativeConfirmed, victim.NativeSessionID)
	}
}

func TestControlFloodLeavesRoomForRealCommands(t *testing.T) {
	e := newEnv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.must("new", "--name", "a", "--detach", "--cmd", "bash --norc --noprofile")
	sock := filepath.Join(e.home, "run", "control.sock")
	// 2,000 idle connections from ten processes: past the per-process cap
	// and past the total cap.
	total := 0
	for range 10 {
		cmd := exec.Command(self)
		cmd.Args = []string{self, sock, "200"}
		cmd.Env = append(os.Environ(), helperEnv+"=flood")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); cmd.Wait() })
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "ready "))
		total += n
	}
	if total < 1900 {
		t.Fatalf("the flood opened only %d connections", total)
	}
	for i := range 3 {
		if r := e.run("ls", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"name": "a"`) && !strings.Contains(r.stdout, `"name":"a"`) {
			t.Fatalf("ls %d under the flood: exit %d, stdout %q, stderr %q", i, r.code, r.stdout, r.stderr)
		}
	}
	e.must("send", "a", "echo still-$((40+2))", "--enter")
	e.waitScreen("a", "still-42")

	var st struct{ PID int }
	if err := json.Unmarshal([]byte(e.must("daemon", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", st.PID)); err == nil && len(fds) > 1000 {
		t.Errorf("the daemon holds %d file descriptors under the flood; its connections are not capped", len(fds))
	}
}

func TestHookCaptureIsSilentWhenTheDaemonIsDown(t *testing.T) {
	e := newEnv(t)
	const secret = "cap-secret-never-logged"
	cmd := exec.Command(musterBin, "hook", "capture", "--provider", "custom", "--process-id", strconv.Itoa(os.Getpid()))
	cmd.Env = append(append([]string{}, e.vars...),
		"MUSTER_AGENT_SESSION_ID=3f1c2b9e-0000-4000-8000-000000000001", "MUSTER_EVENT_CAPABILITY="+secret)
	cmd.Stdin = strings.NewReader(`{"version":1,"event":"session_started","session_id":"conv-1"}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("hook capture with no daemon: %v, stdout %q, stderr %q; want a silent exit 0", err, stdout.String(), stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(e.home, "state", "hook.log"))
	if err != nil || !strings.Contains(string(log), "daemon unreachable") {
		t.Errorf("hook.log = %q, %v; want a line saying the daemon was unreachable", log, err)
	}
	if strings.Contains(string(log), secret) {
		t.Error("hook.log contains the capability")
	}
	if r := e.run("daemon", "status"); r.code != 4 {
		t.Errorf("daemon status after a hook capture: exit %d; a hook must not start the daemon", r.code)
	}
}
