package core_test

import (
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
