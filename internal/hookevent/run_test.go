package hookevent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
)

// eventServer is a minimal events.sock: it records each request line and
// answers ok, inserted unless the event id was seen before.
type eventServer struct {
	path string
	ln   net.Listener
	wg   sync.WaitGroup

	mu     sync.Mutex
	raw    [][]byte
	seen   map[string]bool
	refuse string // when set, every event is refused with this error code
}

// shortDir returns a fresh directory with a short path, so that socket
// paths stay far below the 104-byte limit.
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func startServer(t testing.TB, path string) *eventServer {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &eventServer{path: path, ln: ln, seen: map[string]bool{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *eventServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		line, err := bufio.NewReader(c).ReadBytes('\n')
		if err != nil {
			c.Close()
			continue
		}
		env, code := proto.DecodeEnvelope(bytes.TrimSuffix(line, []byte("\n")), time.Now(), time.Minute)
		resp := proto.EventResponse{Error: code}
		if code == "" {
			s.mu.Lock()
			s.raw = append(s.raw, line)
			refuse := s.refuse
			dup := s.seen[env.Event.ID.RawValue]
			if refuse == "" {
				s.seen[env.Event.ID.RawValue] = true
			}
			s.mu.Unlock()
			inserted := !dup
			switch {
			case refuse != "":
				resp = proto.EventResponse{Error: refuse}
			default:
				resp = proto.EventResponse{OK: true, Inserted: &inserted}
			}
		}
		c.Write(proto.EncodeEventResponse(resp))
		c.Close()
	}
}

func (s *eventServer) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

func (s *eventServer) envelopes(t *testing.T) []proto.Envelope {
	t.Helper()
	var out []proto.Envelope
	for _, raw := range s.requests() {
		env, code := proto.DecodeEnvelope(bytes.TrimSuffix(raw, []byte("\n")), time.Now(), time.Minute)
		if code != "" {
			t.Fatalf("%s: %s", code, raw)
		}
		out = append(out, env)
	}
	return out
}

// paneEnv is the environment of a Muster pane whose events socket is sock.
func paneEnv(sock string, extra ...string) func(string) string {
	m := map[string]string{
		EnvEventSocket:     sock,
		EnvSurfaceID:       "surface-1",
		EnvEventCapability: "cap-0123456789abcdef0123456789abcdef",
		EnvAgentSessionID:  "muster-session-1",
		"HOME":             "/nonexistent-home",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return func(k string) string { return m[k] }
}

type invocation struct {
	stdout, stderr string
	code           int
}

func invoke(t *testing.T, args []string, payload string, getenv func(string) string) invocation {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, Options{
		Stdin:   strings.NewReader(payload),
		Stdout:  &out,
		Stderr:  &errOut,
		Getenv:  getenv,
		Now:     func() time.Time { return time.Date(2026, 11, 30, 10, 50, 41, 0, time.UTC) },
		Timeout: 5 * time.Second,
	})
	return invocation{out.String(), errOut.String(), code}
}

const claudePrompt = `{"session_id":"22222222-2222-4333-8444-555555555555","transcript_path":"/h/.claude/projects/-SCRATCH-repo-claude/22222222-2222-4333-8444-555555555555.jsonl","cwd":"/SCRATCH/repo-claude","prompt_id":"6cae53c4-9b30-4ee5-959a-61260a39c5f9","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"please write a file"}`

const claudePermission = `{"session_id":"22222222-2222-4333-8444-555555555555","transcript_path":"/h/.claude/projects/-SCRATCH-repo-claude/22222222-2222-4333-8444-555555555555.jsonl","cwd":"/SCRATCH/repo-claude","prompt_id":"6cae53c4-9b30-4ee5-959a-61260a39c5f9","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch fake-created.txt && echo done","description":"Run a command"},"permission_suggestions":[{"type":"addDirectories","directories":["/tmp"],"destination":"session"}]}`

func TestRunSendsTheExactEnvelope(t *testing.T) {
	dir := shortDir(t)
	srv := startServer(t, filepath.Join(dir, "events.sock"))
	got := invoke(t, []string{"claude"}, claudePermission, paneEnv(srv.path))
	if got.code != 0 || got.stdout != "" || got.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and nothing", got.code, got.stdout, got.stderr)
	}
	// The helper never saw this turn start, so it reports the start first.
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2", len(reqs))
	}
	run := TurnRunID("claude", "6cae53c4-9b30-4ee5-959a-61260a39c5f9")
	wantStart := `{"schemaVersion":1,"capability":"cap-0123456789abcdef0123456789abcdef","event":{` +
		`"schemaVersion":1,"id":{"rawValue":"` + nameUUID("implicit-start\x00"+run) + `"},"runID":{"rawValue":"` + run + `"},` +
		`"sessionID":"22222222-2222-4333-8444-555555555555","surfaceID":{"rawValue":"surface-1"},` +
		`"provider":"claude","kind":"started","occurredAt":"2026-11-30T10:50:41Z","hookName":"PermissionRequest"}}` + "\n"
	if diff := cmp.Diff(wantStart, string(reqs[0])); diff != "" {
		t.Errorf("implicit start envelope (-want +got):\n%s", diff)
	}
	id := eventID(run, "PermissionRequest", "approval-requested", []byte(claudePermission))
	want := `{"schemaVersion":1,"capability":"cap-0123456789abcdef0123456789abcdef","event":{` +
		`"schemaVersion":1,"id":{"rawValue":"` + id + `"},"runID":{"rawValue":"` + run + `"},` +
		`"sessionID":"22222222-2222-4333-8444-555555555555","surfaceID":{"rawValue":"surface-1"},` +
		`"provider":"claude","kind":"approval-requested","occurredAt":"2026-11-30T10:50:41Z",` +
		`"message":"Bash: touch fake-created.txt && echo done","hookName":"PermissionRequest"}}` + "\n"
	if diff := cmp.Diff(want, string(reqs[1])); diff != "" {
		t.Errorf("envelope (-want +got):\n%s", diff)
	}
	// Every field of DESIGN §4 is present under its wire name.
	var generic map[string]any
	if err := json.Unmarshal(reqs[1], &generic); err != nil {
		t.Fatal(err)
	}
	ev := generic["event"].(map[string]any)
	for _, k := range []string{"schemaVersion", "id", "runID", "sessionID", "surfaceID", "provider", "kind", "occurredAt", "message", "hookName"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("event lacks %q", k)
		}
	}
}

func TestRunStdout(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		payload  string
		want     string
	}{
		{"claude prints nothing", "claude", `{"session_id":"s","prompt_id":"p","hook_event_name":"UserPromptSubmit","prompt":"hi"}`, ""},
		{"codex prints nothing", "codex", `{"session_id":"s","turn_id":"t","hook_event_name":"UserPromptSubmit","prompt":"hi"}`, ""},
		{"opencode prints nothing", "opencode", `{"type":"chat.message","properties":{"input":{"sessionID":"ses_1"},"output":{"message":{"id":"msg_1","role":"user"}}}}`, ""},
		{"gemini prints {}", "gemini", `{"session_id":"s","hook_event_name":"BeforeAgent","timestamp":"2026-11-30T10:52:06.659Z","prompt":"hi"}`, "{}\n"},
		{"cursor prints {}", "cursor", `{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`, "{}\n"},
		{"gemini prints {} for a malformed payload", "gemini", `{not json`, "{}\n"},
		{"cursor prints {} for an ignored hook", "cursor", `{"conversation_id":"c","generation_id":"g","hook_event_name":"afterAgentThought"}`, "{}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
			got := invoke(t, []string{tt.provider}, tt.payload, paneEnv(srv.path))
			if got.code != 0 {
				t.Errorf("exit %d", got.code)
			}
			if got.stdout != tt.want {
				t.Errorf("stdout %q, want %q", got.stdout, tt.want)
			}
		})
	}
}

func TestRunQuietCases(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		payload    string
		env        func(sock string) func(string) string
		wantSent   int
		wantStderr string // substring; "" = stderr must be empty
	}{
		{
			name: "no pane environment sends nothing, silently", args: []string{"claude"},
			payload: claudePermission,
			env:     func(string) func(string) string { return func(string) string { return "" } },
		},
		{
			name: "a partial pane environment counts as none", args: []string{"opencode"},
			payload: `{"type":"chat.message","properties":{"input":{"sessionID":"ses_1"},"output":{"message":{"id":"msg_1","role":"user"}}}}`,
			env: func(sock string) func(string) string {
				return func(k string) string {
					if k == EnvEventSocket {
						return sock
					}
					return ""
				}
			},
		},
		{
			name: "malformed JSON warns once", args: []string{"claude"}, payload: `{"hook_event_name":`,
			env: paneEnvFor, wantStderr: "muster hook event: claude hook payload: malformed hook payload",
		},
		{
			name: "a JSON array warns", args: []string{"codex"}, payload: `[1,2]`,
			env: paneEnvFor, wantStderr: "malformed hook payload",
		},
		{
			name: "a payload without hook name warns", args: []string{"claude"}, payload: `{"session_id":"s"}`,
			env: paneEnvFor, wantStderr: "no hook event name",
		},
		{
			name: "a reserved hook name warns", args: []string{"claude"}, payload: `{"session_id":"s","hook_event_name":"muster.startupSweep"}`,
			env: paneEnvFor, wantStderr: "reserved",
		},
		{
			name: "empty stdin warns", args: []string{"claude"}, payload: "",
			env: paneEnvFor, wantStderr: "empty",
		},
		{
			name: "a payload past what is read warns", args: []string{"claude"},
			payload: `{"hook_event_name":"Stop","x":"` + strings.Repeat("a", proto.MaxHookPayloadRead) + `"}`,
			env:     paneEnvFor, wantStderr: "larger than 33554432 bytes",
		},
		{
			name: "an oversized payload keeps its event", args: []string{"claude"},
			payload: strings.Replace(claudePermission, `"touch fake-created.txt && echo done"`,
				`"touch fake-created.txt && echo `+strings.Repeat("a", 3*proto.MaxHookPayload)+`"`, 1),
			env: paneEnvFor, wantSent: 2,
		},
		{
			name: "an unknown provider warns", args: []string{"aider"}, payload: claudePermission,
			env: paneEnvFor, wantStderr: `unknown provider "aider"`,
		},
		{
			name: "no provider warns with the usage", args: nil, payload: claudePermission,
			env: paneEnvFor, wantStderr: "usage: muster hook event PROVIDER",
		},
		{
			name: "an ignored hook is silent", args: []string{"claude"},
			payload: `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`,
			env:     paneEnvFor,
		},
		{
			name: "a mapped hook is sent, silently", args: []string{"claude"}, payload: claudePrompt,
			env: paneEnvFor, wantSent: 1,
		},
		{
			name: "the installer's trailing marker and unknown flags are ignored", args: []string{"--verbose", "claude", "#", "muster-hooks:v1"},
			payload: claudePrompt, env: paneEnvFor, wantSent: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
			got := invoke(t, tt.args, tt.payload, tt.env(srv.path))
			if got.code != 0 {
				t.Errorf("exit %d, want 0", got.code)
			}
			if got.stdout != "" {
				t.Errorf("stdout %q, want nothing", got.stdout)
			}
			if tt.wantStderr == "" && got.stderr != "" {
				t.Errorf("stderr %q, want nothing", got.stderr)
			}
			if tt.wantStderr != "" {
				if !strings.Contains(got.stderr, tt.wantStderr) || strings.Count(got.stderr, "\n") != 1 {
					t.Errorf("stderr %q, want one line containing %q", got.stderr, tt.wantStderr)
				}
			}
			if n := len(srv.requests()); n != tt.wantSent {
				t.Errorf("%d events sent, want %d", n, tt.wantSent)
			}
		})
	}
}

func paneEnvFor(sock string) func(string) string { return paneEnv(sock) }

func TestRunDaemonDownIsSilent(t *testing.T) {
	dir := shortDir(t)
	for _, provider := range []string{"claude", "gemini"} {
		t.Run(provider, func(t *testing.T) {
			payload := claudePermission
			want := ""
			if provider == "gemini" {
				payload = `{"session_id":"s","hook_event_name":"BeforeAgent","prompt":"x"}`
				want = "{}\n"
			}
			got := invoke(t, []string{provider}, payload, paneEnv(filepath.Join(dir, "events.sock")))
			if got.code != 0 || got.stdout != want || got.stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, %q, nothing", got.code, got.stdout, got.stderr, want)
			}
		})
	}
	// With a listener that is gone (socket file left behind, connection refused).
	t.Run("stale socket", func(t *testing.T) {
		sock := filepath.Join(dir, "stale.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		got := invoke(t, []string{"claude"}, claudePermission, paneEnv(sock))
		if got.code != 0 || got.stdout != "" || got.stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
		}
	})
}

func TestRunCodexWithoutPaneEnvironment(t *testing.T) {
	home := shortDir(t)
	srv := startServer(t, filepath.Join(home, "run", "events.sock"))
	payload := `{"session_id":"01a22c19-5448-7d02-89e7-73b160cc00ef","turn_id":"01a22c19-7f11-73f2-af3a-7d2876c516c8","transcript_path":"/h/.codex/sessions/r.jsonl","cwd":"/repo","hook_event_name":"UserPromptSubmit","model":"gpt-fake","permission_mode":"default","prompt":"say hi"}`
	env := map[string]string{"MUSTER_HOME": home, "HOME": home}
	got := invoke(t, []string{"codex"}, payload, func(k string) string { return env[k] })
	if got.code != 0 || got.stdout != "" || got.stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	envs := srv.envelopes(t)
	if len(envs) != 1 {
		t.Fatalf("%d events sent to the default socket, want 1", len(envs))
	}
	e := envs[0]
	if e.Capability != "" {
		t.Errorf("capability %q, want empty", e.Capability)
	}
	// The daemon refuses an empty surfaceID: it must be left out.
	if raw := srv.requests()[0]; strings.Contains(string(raw), "surfaceID") {
		t.Errorf("surfaceID sent without a pane: %s", raw)
	}
	if e.Event.SessionID == nil || *e.Event.SessionID != "01a22c19-5448-7d02-89e7-73b160cc00ef" {
		t.Errorf("sessionID %v", e.Event.SessionID)
	}
	if e.Event.Kind != proto.KindStarted || e.Event.RunID.RawValue != TurnRunID("codex", "01a22c19-7f11-73f2-af3a-7d2876c516c8") {
		t.Errorf("kind %s run %s", e.Event.Kind, e.Event.RunID.RawValue)
	}
	// The state lives beside the socket.
	if _, err := os.Stat(StateDir(srv.path)); err != nil {
		t.Errorf("state dir: %v", err)
	}
}

func TestRunKeepsStateAcrossInvocations(t *testing.T) {
	// The Claude approval of research/real-cli/claude (session 4444…): the
	// Notification that follows PermissionRequest by 6 s must not be sent,
	// which only the state file can tell across processes.
	lines := readLines(t, "claude.jsonl", "44444444-2222-4333-8444-555555555555")
	srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
	for _, l := range lines {
		if got := invoke(t, []string{"claude"}, l, paneEnv(srv.path)); got.stderr != "" {
			t.Fatalf("stderr %q", got.stderr)
		}
	}
	var kinds []string
	for _, e := range srv.envelopes(t) {
		kinds = append(kinds, e.Event.HookName+" "+string(e.Event.Kind))
	}
	want := []string{
		"UserPromptSubmit started",
		"PermissionRequest approval-requested",
		"PostToolUse running",
		"Stop succeeded",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}

func (s *eventServer) setRefuse(code string) {
	s.mu.Lock()
	s.refuse = code
	s.mu.Unlock()
}

// stateFiles returns the content of every state file beside the socket.
func stateFiles(t *testing.T, sock string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(StateDir(sock))
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(StateDir(sock), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestRunRefusedEventLeavesStateAlone(t *testing.T) {
	// Session 4444… of research/real-cli/claude: a prompt, then a
	// permission request.
	var prompt, permission string
	for _, l := range readLines(t, "claude.jsonl", "44444444-2222-4333-8444-555555555555") {
		switch {
		case strings.Contains(l, `"hook_event_name":"UserPromptSubmit"`):
			prompt = l
		case strings.Contains(l, `"hook_event_name":"PermissionRequest"`):
			permission = l
		}
	}
	for _, code := range []string{proto.ErrForbidden, proto.ErrRateLimited, proto.ErrInvalidEvent, proto.ErrUnauthorized} {
		t.Run(code, func(t *testing.T) {
			srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
			// Refused from the first hook on: no state appears.
			srv.setRefuse(code)
			invoke(t, []string{"claude"}, prompt, paneEnv(srv.path))
			for name, content := range stateFiles(t, srv.path) {
				if content != "" {
					t.Fatalf("a refused first event stored state %s: %s", name, content)
				}
			}
			// Accepted: the prompt is sent again (not dropped as a repeat
			// of a turn the daemon never recorded) and stored.
			srv.setRefuse("")
			invoke(t, []string{"claude"}, prompt, paneEnv(srv.path))
			if n := len(srv.requests()); n != 2 {
				t.Fatalf("%d requests after the prompt was re-run, want 2", n)
			}
			before := stateFiles(t, srv.path)
			if len(before) != 1 {
				t.Fatalf("state files after an accepted prompt: %v", before)
			}
			// Refused mid-turn: the state stays byte for byte.
			srv.setRefuse(code)
			invoke(t, []string{"claude"}, permission, paneEnv(srv.path))
			if diff := cmp.Diff(before, stateFiles(t, srv.path)); diff != "" {
				t.Errorf("a refused %s event changed the state (-before +after):\n%s", code, diff)
			}
			// The provider re-runs the refused hook and it goes through.
			srv.setRefuse("")
			invoke(t, []string{"claude"}, permission, paneEnv(srv.path))
			envs := srv.envelopes(t)
			if len(envs) != 4 || envs[3].Event.Kind != proto.KindApprovalRequested {
				t.Fatalf("after the refused permission request was re-run: %d requests, last %+v", len(envs), envs[len(envs)-1].Event)
			}
			if diff := cmp.Diff(before, stateFiles(t, srv.path)); diff == "" {
				t.Error("an accepted permission request left the state unchanged; the test proves nothing")
			}
		})
	}
}

func readLines(t *testing.T, file, contains string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && strings.Contains(l, contains) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no line of %s contains %q", file, contains)
	}
	return out
}

func TestRunRetriesConnectWithTheSameEvent(t *testing.T) {
	srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
	calls := 0
	orig := dial
	t.Cleanup(func() { dial = orig })
	dial = func(socket string, timeout time.Duration) (conn, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("connect: connection refused")
		}
		return orig(socket, timeout)
	}
	got := invoke(t, []string{"claude"}, claudePrompt, paneEnv(srv.path))
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("exit %d stderr %q", got.code, got.stderr)
	}
	if calls != 2 || len(srv.requests()) != 1 {
		t.Fatalf("%d dials and %d requests, want 2 and 1", calls, len(srv.requests()))
	}
	// A provider re-running the hook with the same payload sends the same
	// id (when the state does not already drop it as a repeat).
	if err := os.RemoveAll(StateDir(srv.path)); err != nil {
		t.Fatal(err)
	}
	invoke(t, []string{"claude"}, claudePrompt, paneEnv(srv.path))
	envs := srv.envelopes(t)
	if len(envs) != 2 || envs[0].Event.ID != envs[1].Event.ID {
		t.Fatalf("ids of the two sends differ: %+v", envs)
	}
}

func TestRunRedactsTheCapability(t *testing.T) {
	srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
	payload := `{"session_id":"s","prompt_id":"p","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"echo cap-0123456789abcdef0123456789abcdef"}}`
	invoke(t, []string{"claude"}, payload, paneEnv(srv.path))
	reqs := srv.requests()
	if len(reqs) == 0 {
		t.Fatal("nothing sent")
	}
	for _, r := range reqs {
		if n := strings.Count(string(r), "cap-0123456789abcdef0123456789abcdef"); n != 1 {
			t.Errorf("capability appears %d times in %s, want only in its field", n, r)
		}
	}
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last), `"message":"Bash: echo [redacted]"`) {
		t.Errorf("message not redacted: %s", last)
	}
}

func TestRunDebugExplains(t *testing.T) {
	srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
	got := invoke(t, []string{"claude"}, `{"session_id":"s","hook_event_name":"SessionStart"}`, paneEnv(srv.path, EnvDebug, "1"))
	if !strings.Contains(got.stderr, "SessionStart ignored") {
		t.Errorf("stderr %q", got.stderr)
	}
	got = invoke(t, []string{"claude"}, claudePermission, paneEnv(srv.path, EnvDebug, "1"))
	if !strings.Contains(got.stderr, "PermissionRequest → approval-requested") || !strings.Contains(got.stderr, "ok=true") {
		t.Errorf("stderr %q", got.stderr)
	}
	if got.stdout != "" {
		t.Errorf("stdout %q", got.stdout)
	}
}

func TestFastPath(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
		want bool
	}{
		{"hook event claude", []string{"hook", "event", "claude"}, "", true},
		{"hook event without provider", []string{"hook", "event"}, "", true},
		{"help goes to cobra", []string{"hook", "event", "--help"}, "", false},
		{"short help goes to cobra", []string{"hook", "event", "claude", "-h"}, "", false},
		{"other hook command", []string{"hook", "capture", "--provider", "claude"}, "", false},
		{"other command", []string{"ls"}, "", false},
		{"no arguments", nil, "", false},
		{"disabled", []string{"hook", "event", "claude"}, "0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := func(k string) string {
				if k == "MUSTER_HOOK_FASTPATH" {
					return tt.env
				}
				return ""
			}
			if got := FastPath(tt.args, env); got != tt.want {
				t.Errorf("FastPath(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}

// TestOversizedPayloadKeepsItsEvent: a hook payload over MaxHookPayload
// (a tool's input or output of megabytes) is mapped with its long fields
// cut: its event arrives, with what the payload says besides intact.
func TestOversizedPayloadKeepsItsEvent(t *testing.T) {
	srv := startServer(t, filepath.Join(shortDir(t), "events.sock"))
	huge := strings.Repeat("é", 2*proto.MaxHookPayload)
	payload := strings.Replace(claudePermission, `"touch fake-created.txt && echo done"`, `"echo `+huge+`"`, 1)
	got := invoke(t, []string{"claude"}, payload, paneEnv(srv.path))
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	envs := srv.envelopes(t)
	if len(envs) != 2 {
		t.Fatalf("%d events sent, want the implicit start and the approval", len(envs))
	}
	ev := envs[1].Event
	if ev.Kind != proto.KindApprovalRequested || ev.HookName != "PermissionRequest" ||
		ev.RunID.RawValue != TurnRunID("claude", "6cae53c4-9b30-4ee5-959a-61260a39c5f9") ||
		!strings.HasPrefix(ev.Message, "Bash: echo éé") || !utf8.ValidString(ev.Message) {
		t.Errorf("sent %+v", ev)
	}
}
