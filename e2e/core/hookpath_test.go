package core_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
)

// TestHookCommandsRunTheHelper: musterBin has muster-hook beside it, as an
// installation has, so the hook commands Claude is launched with run the
// helper; a muster alone in its directory falls back to `muster hook
// event`. Either way the turn reaches the daemon.
func TestHookCommandsRunTheHelper(t *testing.T) {
	for _, tt := range []struct {
		name  string
		alone bool
	}{{"helper", false}, {"fallback", true}} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := agentEnv(t)
			want := launcher.ShellQuote(filepath.Join(filepath.Dir(musterBin), "muster-hook")) + " event claude"
			if tt.alone {
				e.bin = filepath.Join(t.TempDir(), "muster")
				linkOrCopy(t, musterBin, e.bin)
				want = launcher.ShellQuote(e.bin) + " hook event claude"
			}
			e.must("new", "claude", "--name", "cl", "--detach")
			e.waitConfirmed("cl")
			e.must("send", "cl", "reply hello", "--enter")
			e.must("wait", "cl", "--until", "done", "--timeout", "30s")

			runs, err := fakeagenttest.ReadHookLog(e.hookLog())
			if err != nil {
				t.Fatal(err)
			}
			events := 0
			for _, r := range runs {
				if !strings.Contains(r.Command, " event claude") {
					continue // the identity capture, `muster hook capture`
				}
				events++
				if !strings.Contains(r.Command, want) || r.ExitCode != 0 {
					t.Errorf("%s hook: %q exited %d (%s), want %q exiting 0", r.Event, r.Command, r.ExitCode, r.Stderr, want)
				}
			}
			if events == 0 {
				t.Fatalf("no event hook ran: %+v", runs)
			}
		})
	}
}

// linkOrCopy puts the file src at dst.
func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	if os.Link(src, dst) == nil {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
