//go:build linux || darwin

package native

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/transcript"
)

// TestRealPane runs sh in a real PTY, reads its foreground process group
// with TIOCGPGRP as the daemon does, and runs a foreground job that is not
// an agent (sleep), then a fake agent: a copy of sleep named opencode (an
// agent whose turns are not read, so its launch opens its run at once).
func TestRealPane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	dir := t.TempDir()
	bin, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode"), bin, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(sh)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir, "PS1=$ ", "ENV=", "TERM=dumb"}
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	readerDone := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
		<-readerDone
	})
	fg := func() (int, error) { return unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPGRP) }

	rec := newRecorder(t)
	e := New(Config{
		Events: rec,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		Env:    transcript.Env{Home: dir, Getenv: func(string) string { return "" }},
		Poll:   50 * time.Millisecond,
	})
	e.SurfaceStarted(Surface{ID: "s1", Provider: "shell", PID: cmd.Process.Pid, CWD: dir, ForegroundPGID: fg})

	// The pane's reader: the scanner in front of the estimator.
	go func() {
		defer close(readerDone)
		sc := termsignal.New()
		buf := make([]byte, 4096)
		var out []byte
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				var sigs []termsignal.Signal
				out, sigs = sc.Feed(buf[:n], out[:0])
				e.Signals("s1", sigs)
			}
			if err != nil {
				return
			}
		}
	}()

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		poll.Wait(t, 20*time.Second, func() bool {
			if cond() {
				return true
			}
			e.pollOnce(t.Context())
			return false
		}, func() string { return what + "; events:\n" + strings.Join(rec.lines(nil), "\n") })
	}
	// running waits until the foreground job has exec'd name and returns
	// its process group.
	running := func(name string) int {
		t.Helper()
		var pg int
		waitFor(name+" in the foreground", func() bool {
			var err error
			if pg, err = fg(); err != nil || pg == cmd.Process.Pid {
				return false
			}
			info, err := inspectProcess(pg)
			return err == nil && len(info.Argv) > 0 && exeName(info.Argv[0]) == name
		})
		return pg
	}
	type_ := func(s string) {
		t.Helper()
		if _, err := io.WriteString(ptmx, s); err != nil {
			t.Fatal(err)
		}
	}
	shellBack := func() {
		t.Helper()
		waitFor("the shell in the foreground", func() bool { pg, err := fg(); return err == nil && pg == cmd.Process.Pid })
	}

	shellBack()
	e.pollOnce(t.Context())

	// An ordinary foreground job is not an agent.
	type_("sleep 30\n")
	pg := running("sleep")
	e.pollOnce(t.Context())
	unix.Kill(-pg, unix.SIGTERM)
	shellBack()
	e.pollOnce(t.Context())
	if n := rec.count(); n != 0 {
		t.Fatalf("events for sleep:\n%s", strings.Join(rec.lines(nil), "\n"))
	}

	// The fake opencode, then the exit status the shell reports by OSC 133 D.
	type_(`opencode 30; printf '\033]133;D;%s\007' $?` + "\n")
	pg = running("opencode")
	waitFor("launchObserved", func() bool { return rec.count() == 1 })
	unix.Kill(-pg, unix.SIGTERM)
	waitFor("commandFinished", func() bool { return rec.count() == 2 })
	want := []string{
		"launchObserved started R1 opencode started (process group " + strconv.Itoa(pg) + ")",
		"commandFinished interrupted R1 the agent exited with status 143 (signal 15)",
	}
	if got := rec.lines(nil); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Killed with no D: the group is gone, so the process exited.
	type_("opencode 30\n")
	pg2 := running("opencode")
	waitFor("a second launchObserved", func() bool { return rec.count() == 3 })
	unix.Kill(-pg2, unix.SIGKILL)
	waitFor("processExited", func() bool { return rec.count() == 4 })
	evs := rec.all()
	if evs[2].RunID == evs[0].RunID || evs[3].RunID != evs[2].RunID || evs[3].HookName != HookProcessExited || evs[3].Kind != proto.KindSucceeded {
		t.Errorf("second run: %+v then %+v", evs[2], evs[3])
	}
	shellBack()
}
