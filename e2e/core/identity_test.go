package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A custom agent that reports its own conversation id through the seed-000
// canonical capture, and resumes through its launcher template.
const customAgent = `#!/bin/sh
if [ "$1" = "--resume" ]; then
	echo "resumed conversation $2"
	id="$2"
else
	id="conv-$$"
	echo "new conversation $id"
fi
printf '{"version":1,"event":"session_started","session_id":"%s"}' "$id" |
	muster hook capture --provider custom --process-id "$$" || echo "capture failed"
exec sleep 100000
`

func TestCustomLauncherCaptureAndResume(t *testing.T) {
	e := newEnv(t)
	bin := t.TempDir()
	agent := filepath.Join(bin, "myagent")
	if err := os.WriteFile(agent, []byte(customAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(musterBin, filepath.Join(bin, "muster"))
	e.vars = append(e.vars, "PATH="+bin+":"+os.Getenv("PATH"))

	e.must("new", "--name", "ag", "--detach", "--cmd", "myagent", "--resume-cmd", "myagent --resume {session_id}")
	screen := e.waitScreen("ag", "new conversation")
	if strings.Contains(screen, "capture failed") {
		t.Fatalf("capture was refused:\n%s", screen)
	}
	var native string
	if !eventually(func() bool { native = e.session("ag").NativeSessionID; return native != "" }) {
		t.Fatal("native id never captured")
	}
	if !strings.HasPrefix(native, "conv-") || !e.session("ag").NativeConfirmed {
		t.Fatalf("native id = %q", native)
	}

	e.must("daemon", "stop", "--force")
	s := e.session("ag")
	if s.State != "restorable" || s.Reason == "" {
		t.Fatalf("after daemon stop: state %q reason %q, want restorable with a reason", s.State, s.Reason)
	}
	out := e.must("resume", "ag")
	if !strings.Contains(out, "ag: resumed") {
		t.Fatalf("resume printed %q", out)
	}
	e.waitScreen("ag", "resumed conversation "+native)
	if s := e.session("ag"); s.State != "running" || s.NativeSessionID != native {
		t.Errorf("after resume: %+v", s)
	}
}

func TestCaptureOutsideMusterIsANoOp(t *testing.T) {
	e := newEnv(t)
	r := e.run("hook", "capture", "--provider", "custom", "--process-id", "1")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("outside a pane: exit %d stdout %q stderr %q; want a silent 0", r.code, r.stdout, r.stderr)
	}
}

func TestLauncherTemplatesRefusedBeforeAnythingIsStored(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ cmd, resume, want string }{
		{"agent", "agent --resume '{session_id}'", "quoted"},
		{"agent", "agent --id={session_id}", "embedded"},
		{"agent | tee log", "agent -r | tee log", "composition"},
		{"make test; echo done", "make test; echo {session_id}x", "embedded"},
		{"agent", "agent 'unterminated", "quote"},
		{"agent", `agent \`, "escape"},
	} {
		r := e.run("new", "--detach", "--cmd", tc.cmd, "--resume-cmd", tc.resume)
		if r.code != 1 || !strings.Contains(strings.ToLower(r.stderr), tc.want) {
			t.Errorf("cmd %q resume %q: exit %d stderr %q, want a refusal mentioning %q", tc.cmd, tc.resume, r.code, r.stderr, tc.want)
		}
	}
	if n := len(e.ls()); n != 0 {
		t.Errorf("refused launchers created %d sessions", n)
	}
}

// TestCompositionIsAPlainPane: a --cmd that is a shell composition, with no
// --resume-cmd, runs as it is; its hooks cannot record a native id (the
// refusal names --resume-cmd), and it restores by running again, with no
// id appended.
func TestCompositionIsAPlainPane(t *testing.T) {
	e := newEnv(t)
	bin := t.TempDir()
	agent := filepath.Join(bin, "myagent")
	if err := os.WriteFile(agent, []byte(customAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Symlink(musterBin, filepath.Join(bin, "muster"))
	e.vars = append(e.vars, "PATH="+bin+":"+os.Getenv("PATH"))

	e.must("new", "--name", "comp", "--detach", "--cmd", "echo first && echo piped | tr a-z A-Z; myagent 2>&1 | cat")
	screen := e.waitScreen("comp", "capture failed")
	for _, want := range []string{"first", "PIPED", "new conversation", "--resume-cmd"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the pane lacks %q:\n%s", want, screen)
		}
	}
	if s := e.session("comp"); s.NativeSessionID != "" {
		t.Errorf("a plain composition pane recorded native id %q", s.NativeSessionID)
	}
	e.must("daemon", "stop", "--force")
	if out := e.must("resume", "comp"); !strings.Contains(out, "comp: resumed") {
		t.Fatalf("resume printed %q", out)
	}
	screen = e.waitScreen("comp", "PIPED")
	if strings.Contains(screen, "resumed conversation") {
		t.Errorf("the restore appended an id:\n%s", screen)
	}
}
