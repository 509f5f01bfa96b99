package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/testing/testbin"
	"github.com/musterhq/muster/internal/tui"
)

// TestDashboardReconnects runs the dashboard's model over the real
// backend against a real daemon and kills the daemon with SIGKILL: the
// open dashboard says the daemon is away, starts a new one itself (racing
// a command that does the same: both use the one that wins) and shows
// what it reports, without being restarted.
func TestDashboardReconnects(t *testing.T) {
	bin := testbin.Muster(t)
	// Socket paths must stay short, so not t.TempDir().
	home, err := os.MkdirTemp("/tmp", "mr")
	if err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	env := map[string]string{
		"MUSTER_HOME":     home,
		"HOME":            userHome,
		"XDG_CONFIG_HOME": filepath.Join(userHome, ".config"),
		"XDG_STATE_HOME":  filepath.Join(userHome, ".state"),
		"XDG_DATA_HOME":   filepath.Join(userHome, ".local", "share"),
		"SHELL":           "/bin/sh",
		"PATH":            os.Getenv("PATH"),
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	muster := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = envList, userHome
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("muster %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command(bin, "daemon", "stop", "--force")
		cmd.Env = envList
		cmd.Run()
		os.RemoveAll(home)
	})
	muster("new", "--name", "alpha", "--detach", "--cmd", "sh")

	ios, _, _, _ := iostreams.Test()
	// The daemon the dashboard starts inherits this process's
	// environment, which must name the test's home, never the real one.
	for k, v := range env {
		t.Setenv(k, v)
	}
	f := &Factory{IO: ios, Getenv: os.Getenv, Executable: bin}
	b := &dashboardBackend{f: f}
	defer b.Close()
	var m tea.Model = tui.New(tui.Options{Backend: b, Home: userHome})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	// The dashboard's commands run as the program runs them: each in a
	// goroutine of its own, a batch as its parts, and the messages they
	// return go to Update one at a time.
	msgs := make(chan tea.Msg, 64)
	var start func(tea.Cmd)
	start = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		go func() {
			msg := cmd()
			if batch, ok := msg.(tea.BatchMsg); ok {
				for _, c := range batch {
					start(c)
				}
				return
			}
			if msg != nil {
				msgs <- msg
			}
		}()
	}
	start(m.Init())
	// waitFor runs the dashboard until the frame shows every want.
	waitFor := func(want ...string) string {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			var msg tea.Msg
			select {
			case msg = <-msgs:
			case <-timeout:
				t.Fatalf("the dashboard never showed %q:\n%s", want, ansi.Strip(m.View().Content))
			}
			var cmd tea.Cmd
			m, cmd = m.Update(msg)
			start(cmd)
			frame := ansi.Strip(m.View().Content)
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(frame, w)
			}
			if ok {
				return frame
			}
		}
	}
	waitFor("alpha", "◌ live", "1 live")

	var st struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(muster("daemon", "status", "--json")), &st); err != nil || st.PID == 0 {
		t.Fatalf("daemon status: %v %+v", err, st)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	frame := waitFor("daemon away", "reconnecting")
	if strings.Contains(frame, "◌ live") {
		t.Errorf("a session still shows live while the daemon is away:\n%s", frame)
	}

	// A command races the dashboard to start the new daemon.
	lsDone := make(chan string, 1)
	go func() {
		cmd := exec.Command(bin, "ls")
		cmd.Env, cmd.Dir = envList, userHome
		out, err := cmd.CombinedOutput()
		if err != nil {
			lsDone <- fmt.Sprintf("muster ls: %v\n%s", err, out)
		}
		lsDone <- ""
	}()
	// It offers the session the dead daemon left to restore; esc keeps it
	// in the list.
	frame = waitFor("reconnected to the daemon", "Restore 1 session?", "[✓] alpha", "the daemon died")
	if strings.Contains(frame, "daemon away") || strings.Contains(frame, "1 live") {
		t.Errorf("stale rows after the daemon came back:\n%s", frame)
	}
	if msg := <-lsDone; msg != "" {
		t.Error(msg)
	}
	m, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	start(cmd)
	waitFor("alpha", "⟲ restorable", "nothing restored")

	// Killed again with no command to race, the dashboard alone brings a
	// daemon back.
	if err := json.Unmarshal([]byte(muster("daemon", "status", "--json")), &st); err != nil || st.PID == 0 {
		t.Fatalf("daemon status: %v %+v", err, st)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor("daemon away", "reconnecting")
	waitFor("reconnected to the daemon", "alpha")
}
