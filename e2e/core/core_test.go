package core_test

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	work := t.TempDir()
	if got := strings.TrimSpace(e.must("new", "--name", "api", "--dir", work, "--cmd", "bash --norc --noprofile")); got != "api" {
		t.Fatalf("new printed %q, want the name", got)
	}
	e.must("send", "api", `printf "%s\\n" "A=$MUSTER_AGENT_SESSION_ID" "S=$MUSTER_SURFACE_ID" "T=$TERM" "X=${TMUX:-none}${TMUX_PANE:-none}" "D=$PWD"`, "--enter")
	// The typed command line itself holds "A=": wait for the last line
	// it prints, which only its output has.
	screen := e.waitScreen("api", "D="+work)
	s := e.session("api")
	for _, want := range []string{"A=" + s.ID, "S=" + s.SurfaceID, "T=xterm-256color", "X=nonenone", "D=" + work} {
		if !strings.Contains(screen, want) {
			t.Errorf("pane environment: screen lacks %q:\n%s", want, screen)
		}
	}
	if s.State != "running" || s.ExitCode != nil || s.PID <= 0 || s.CWD != work || s.Provider != "custom" {
		t.Errorf("ls entry = %+v", s)
	}
	if _, err := time.Parse(time.RFC3339, s.CreatedAt); err != nil {
		t.Errorf("created_at %q is not RFC 3339", s.CreatedAt)
	}
	// The ls JSON carries the documented keys, null exit_code while running.
	raw := e.must("ls", "--json")
	var objs []map[string]any
	json.Unmarshal([]byte(raw), &objs)
	for _, k := range []string{"id", "name", "provider", "state", "pid", "cwd", "exit_code", "created_at"} {
		if _, ok := objs[0][k]; !ok {
			t.Errorf("ls --json lacks %q", k)
		}
	}
	if objs[0]["exit_code"] != nil {
		t.Errorf("exit_code = %v while running, want null", objs[0]["exit_code"])
	}

	e.must("rename", "api", "web")
	e.must("send", "web", "exit 5", "--enter")
	if !eventually(func() bool { return e.session("web").State == "exited" }) {
		t.Fatal("pane never exited")
	}
	if s := e.session("web"); s.ExitCode == nil || *s.ExitCode != 5 {
		t.Errorf("exit code = %v, want 5", s.ExitCode)
	}
	// The final screen stays readable.
	if got := e.must("capture", "web"); !strings.Contains(got, "A="+s.ID) {
		t.Errorf("capture after exit lost the screen:\n%s", got)
	}
	e.must("kill", "web")
	if len(e.ls()) != 0 {
		t.Errorf("killed session still listed")
	}
}

func TestExitedPaneSurvivesDaemonRestart(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "done", "--cmd", e.script(`printf 'goodbye\n'; exit 7`), "--detach")
	if !eventually(func() bool { return e.session("done").State == "exited" }) {
		t.Fatal("pane never exited")
	}
	e.must("new", "--name", "live", "--cmd", "sleep 1000", "--detach")
	e.must("daemon", "stop", "--force")
	list := e.ls() // starts a new daemon on demand
	if len(list) != 2 {
		t.Fatalf("after restart ls has %d sessions, want 2", len(list))
	}
	d := e.session("done")
	if d.State != "exited" || d.ExitCode == nil || *d.ExitCode != 7 {
		t.Errorf("exited session after restart = %+v", d)
	}
	if got := e.must("capture", "done"); !strings.Contains(got, "goodbye") {
		t.Errorf("capture after restart = %q", got)
	}
	if l := e.session("live"); l.State == "running" {
		t.Errorf("a pane cannot survive its daemon, but ls says %+v", l)
	}
}

func TestCaptureRendersEscapes(t *testing.T) {
	e := newEnv(t)
	// Colours, cursor moves, a title with ';' and Claude's ✳ (E2 9C B3),
	// then the alternate screen.
	e.must("new", "--name", "esc", "--detach", "--cmd", e.script(
		`printf '\033]0;✳ Claude; Code\007\033[31mred\033[0m \033[1mbold\033[0m\n日本語のテスト\n'; sleep 0.2; printf '\033[?1049h\033[2J\033[5;10Halt screen'; sleep 1000`))
	screen := e.waitScreen("esc", "alt screen")
	if strings.Contains(screen, "red") || strings.Contains(screen, "Claude") {
		t.Errorf("alternate screen shows main-screen text or a leaked title:\n%s", screen)
	}
	lines := strings.Split(screen, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[4], "         alt screen") {
		t.Errorf("text not at row 5 col 10:\n%q", screen)
	}
	if s := e.session("esc"); s.Title != "✳ Claude; Code" {
		t.Errorf("title = %q, want the full title with ; and ✳", s.Title)
	}
	ansi := e.must("capture", "esc", "--ansi")
	if !strings.Contains(ansi, "alt screen") {
		t.Errorf("--ansi capture = %q", ansi)
	}
}

func TestCaptureMainScreenAndScrollback(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "s", "--detach", "--cmd", e.script(`printf '\033]2;t\xe6\x9c\xac;x\007\033[32mgreen\033[0m\n'; seq 1 200; sleep 1000`))
	screen := e.waitScreen("s", "200")
	if strings.Contains(screen, "green") {
		t.Errorf("the first line should have scrolled away:\n%s", screen)
	}
	hist := e.must("capture", "s", "--scrollback", "1000")
	if !strings.Contains(hist, "green\n1\n2\n") {
		t.Errorf("scrollback lost history:\n%s", hist[:min(len(hist), 200)])
	}
	if strings.Contains(hist, "x\n") && strings.Contains(hist, "t本") {
		t.Errorf("title leaked onto the screen")
	}
	ansi := e.must("capture", "s", "--ansi", "--scrollback", "1000")
	if !strings.Contains(ansi, "\x1b[32mgreen") {
		t.Errorf("--ansi lost colours: %q", ansi[:min(len(ansi), 200)])
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "a", "--cmd", "sleep 1000", "--detach")
	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"unknown provider", []string{"new", "nosuch", "--detach"}, `unknown provider "nosuch"`, 1},
		{"missing dir", []string{"new", "--dir", "/does/not/exist", "--detach"}, "does not exist", 1},
		{"duplicate name", []string{"new", "--name", "a", "--cmd", "true", "--detach"}, `a session named "a" already exists`, 1},
		{"empty command", []string{"new", "--cmd", "  ", "--detach"}, "empty command", 1},
		{"composition with a placeholder-free resume", []string{"new", "--cmd", "a; b", "--resume-cmd", "a | b", "--detach"}, "composition", 1},
		{"bad name", []string{"new", "--name", "has space", "--cmd", "true", "--detach"}, "may not contain spaces", 1},
		{"two providers", []string{"new", "claude", "codex", "--detach"}, "at most one PROVIDER", 2},
		{"unknown flag", []string{"ls", "--bogus"}, "unknown flag", 2},
		{"send unknown", []string{"send", "nope", "x"}, `no session named "nope"`, 1},
		{"capture unknown", []string{"capture", "nope"}, `no session named "nope"`, 1},
		{"kill unknown", []string{"kill", "nope"}, `no session named "nope"`, 1},
		{"rename to taken", []string{"new", "--name", "b", "--cmd", "true", "--detach"}, "", 0},
		{"rename clash", []string{"rename", "b", "a"}, `already exists`, 1},
		{"negative scrollback", []string{"capture", "a", "--scrollback", "-1"}, "must not be negative", 2},
		{"attach without terminal", []string{"attach", "a"}, "needs a terminal", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.ls())
			r := e.run(tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, tc.code, r.stderr)
			}
			if tc.want == "" {
				return
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tc.want)
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 1 {
				t.Errorf("error is not short: %q", r.stderr)
			}
			if tc.args[0] == "new" && len(e.ls()) != before {
				t.Errorf("a failed new created a session")
			}
		})
	}
}

func TestMalformedControlRequests(t *testing.T) {
	e := newEnv(t)
	e.must("daemon")
	sock := filepath.Join(e.home, "run", "control.sock")
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("control.sock mode %v, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(filepath.Dir(sock)); dst.Mode().Perm() != 0o700 {
		t.Errorf("runtime dir mode %v, want 0700", dst.Mode().Perm())
	}
	for _, tc := range []struct{ req, code string }{
		{"{not json\n", "bad_request"},
		{`{"op":"nosuch"}` + "\n", "unsupported"},
		{`{"op":""}` + "\n", "bad_request"},
		{`{"op":"send"}` + "\n", "bad_request"},
		{`{"op":"send","args":{"name":5}}` + "\n", "bad_request"},
		{`{"op":"capture","args":{"name":"x","scrollback":-5}}` + "\n", "bad_request"},
		{`{"op":"new","args":{"dir":"relative"}}` + "\n", "invalid"},
		{`{"op":"attach","args":{"name":"nope","cols":80,"rows":24}}` + "\n", "not_found"},
		{strings.Repeat("x", 2<<20) + "\n", "bad_request"},
	} {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		go conn.Write([]byte(helloLine + "\n" + tc.req))
		br := bufio.NewReader(conn)
		if hello, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(hello, `{"ok":true`) {
			t.Fatalf("hello: %q, %v", hello, err)
		}
		line, err := br.ReadString('\n')
		conn.Close()
		if err != nil {
			t.Errorf("request %.40q: no response: %v", tc.req, err)
			continue
		}
		var resp struct {
			OK    bool
			Error struct{ Code, Message string }
		}
		if json.Unmarshal([]byte(line), &resp) != nil || resp.OK || resp.Error.Code != tc.code {
			t.Errorf("request %.40q: response %s, want code %s", tc.req, line, tc.code)
		}
	}
	// The daemon is still healthy.
	e.must("daemon", "status")
}

func TestStaleSocketAndSecondDaemon(t *testing.T) {
	e := newEnv(t)
	e.must("daemon")
	r := e.run("daemon", "--foreground", "--quiet")
	if r.code == 0 || !strings.Contains(r.stderr, "already running") {
		t.Errorf("second daemon: exit %d, stderr %q", r.code, r.stderr)
	}
	var st struct{ PID int }
	json.Unmarshal([]byte(e.must("daemon", "status", "--json")), &st)
	if st.PID <= 0 {
		t.Fatal("no daemon pid")
	}
	syscall.Kill(st.PID, syscall.SIGKILL)
	sock := filepath.Join(e.home, "run", "control.sock")
	if !eventually(func() bool { return syscall.Kill(st.PID, 0) != nil }) {
		t.Fatal("daemon did not die")
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("expected a stale socket left behind: %v", err)
	}
	if r := e.run("daemon", "status"); r.code != 4 {
		t.Errorf("status with a stale socket: exit %d, want 4 (not running); %s", r.code, r.stderr)
	}
	e.must("new", "--name", "after", "--cmd", "sleep 100", "--detach")
	if e.session("after").State != "running" {
		t.Error("a new daemon did not start over the stale socket")
	}
}
