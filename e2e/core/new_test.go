package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNewRunsArgvAfterDash checks that `muster new -- CMD ARGS…` runs CMD
// with ARGS exactly as given (issue 11: it ran `$SHELL CMD ARGS…`, which
// exited 126), while `muster new shell -- ARGS…` still passes ARGS to the
// shell.
func TestNewRunsArgvAfterDash(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "argv", "--detach", "--", "sh", "-c", "echo hi; sleep 1; exit 3")
	e.must("new", "--name", "sh", "--detach", "shell", "--", "-c", "echo in-shell; exit 4")
	for name, code := range map[string]int{"argv": 3, "sh": 4} {
		if !eventually(func() bool { return e.session(name).State == "exited" }) {
			t.Fatalf("%s never exited", name)
		}
		if s := e.session(name); s.ExitCode == nil || *s.ExitCode != code {
			t.Errorf("%s: command %q, exit code %v, want %d; screen:\n%s", name, s.Command, deref(s.ExitCode), code, e.must("capture", name))
		}
	}
	if got := e.must("capture", "argv"); !strings.Contains(got, "hi") {
		t.Errorf("capture argv = %q", got)
	}
	if got, want := e.session("argv").Command, "sh -c echo hi; sleep 1; exit 3"; got != want {
		t.Errorf("command = %q, want %q", got, want)
	}
	if got := e.session("sh").Command; !strings.HasPrefix(got, "/bin/bash -c ") {
		t.Errorf("shell command = %q, want $SHELL -c …", got)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestNewExitsAreVisible: a command that cannot start says why and fails
// `muster new --detach`; an attached `muster new` shows the output of a
// command that exits at once and returns its exit code.
func TestNewExitsAreVisible(t *testing.T) {
	e := newEnv(t)
	r := e.run("new", "--name", "nope", "--detach", "--cmd", "nonexistent-binary --flag")
	if r.code == 0 || !strings.Contains(r.stderr, "nonexistent-binary: not found") {
		t.Errorf("new --cmd nonexistent-binary: code %d, stderr %q", r.code, r.stderr)
	}
	// Builtins and keywords of the shell are commands too.
	e.must("new", "--name", "builtin", "--detach", "--cmd", "exec sleep 30")

	c := e.ptyRun(80, 24, true, "new", "--name", "quick", "--cmd", e.script("echo quick-output; exit 7"))
	err := c.cmd.Wait()
	<-c.done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 7 {
		t.Errorf("attached new exited %d, want the pane's 7", code)
	}
	screen := c.screen()
	if !strings.Contains(screen, "quick-output") || !strings.Contains(screen, "[quick exited with code 7]") {
		t.Errorf("the quick command's output and exit are not on the user's screen:\n%s", screen)
	}
}
