package cli

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/iostreams"
)

// usageEnv is a Factory whose home is a temp dir: no test reaches the
// real one, and none of these commands gets as far as a daemon.
func usageEnv(t *testing.T) (*Factory, func() (string, string)) {
	t.Helper()
	home := t.TempDir()
	ios, _, out, errOut := iostreams.Test()
	f := &Factory{IO: ios, Getenv: func(k string) string {
		switch k {
		case "HOME", "MUSTER_HOME":
			return home
		}
		return ""
	}}
	return f, func() (string, string) { return out.String(), errOut.String() }
}

func TestUsageMistakesExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown command", []string{"bogus"}},
		{"unknown subcommand", []string{"daemon", "bogus"}},
		{"unknown flag", []string{"ls", "--bogus"}},
		{"unknown shorthand flag", []string{"ls", "-z"}},
		{"unknown flag of a subcommand", []string{"hooks", "status", "--bogus"}},
		{"flag needs an argument", []string{"wait", "api", "--until"}},
		{"flag value invalid", []string{"capture", "api", "--scrollback", "many"}},
		{"no arguments allowed", []string{"ls", "extra"}},
		{"too few arguments", []string{"send", "api"}},
		{"too many arguments", []string{"rename", "a", "b", "c"}},
		{"at least one argument", []string{"wait", "--until", "done"}},
		{"cobra's own completion command", []string{"completion", "bash", "extra"}},
		{"cobra's hidden __complete", []string{"__complete"}},
		{"the command's own check", []string{"ack"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, output := usageEnv(t)
			code := Run(t.Context(), f, tt.args)
			out, errOut := output()
			if code != ExitUsage {
				t.Errorf("%q: exit %d, want %d (stderr %q)", tt.args, code, ExitUsage, errOut)
			}
			if out != "" || !strings.HasPrefix(errOut, "muster: ") || !strings.HasSuffix(errOut, "\n  run `muster --help` for usage\n") {
				t.Errorf("%q: stdout %q, stderr %q", tt.args, out, errOut)
			}
		})
	}
}

// TestErrorTextIsNotUsage: an error is a usage error by its type, never by
// its text. EINVAL's text is "invalid argument", which pflag's usage
// errors also contain.
func TestErrorTextIsNotUsage(t *testing.T) {
	for _, err := range []error{
		syscall.EINVAL,
		fmt.Errorf("open pty: %w", syscall.EINVAL),
		fmt.Errorf("agent said: unknown command %q; accepts 1 arg(s)", "x"),
	} {
		t.Run(err.Error(), func(t *testing.T) {
			f, output := usageEnv(t)
			root := NewRootCmd(f)
			root.AddCommand(&cobra.Command{Use: "fails", RunE: func(*cobra.Command, []string) error { return err }})
			code := execute(t.Context(), f, root, []string{"fails"})
			_, errOut := output()
			if want := "muster: " + err.Error() + "\n"; code != ExitError || errOut != want {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, ExitError, want)
			}
		})
	}
}

// TestHookCaptureMistakesExit1: agents read exit 2 from a hook as
// "block", so `hook capture` turns its usage mistakes into exit 1.
func TestHookCaptureMistakesExit1(t *testing.T) {
	for _, args := range [][]string{
		{"hook", "capture", "--bogus"},
		{"hook", "capture", "--process-id", "x"},
		{"hook", "capture", "extra"},
	} {
		f, output := usageEnv(t)
		if code := Run(t.Context(), f, args); code != ExitError {
			_, errOut := output()
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, ExitError, errOut)
		}
	}
}
