package realcli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// Process is a running process.
type Process struct {
	PID     int
	Command string
}

func (p Process) String() string { return fmt.Sprintf("%d %s", p.PID, p.Command) }

// Processes returns the processes running with s.Home as their HOME: the
// CLI, its children and anything they left behind.
func (s *Setup) Processes() []Process {
	return processesWithEnv("HOME=" + s.Home)
}

func processesWithEnv(kv string) []Process {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	self := os.Getpid()
	want := []byte(kv)
	var out []Process
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue // gone, a zombie, or not ours
		}
		found := false
		for _, v := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(v, want) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out = append(out, Process{PID: pid, Command: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
	}
	return out
}

// reap kills whatever still runs with this HOME and fails the test for it:
// whoever started the CLI had to stop it.
func (s *Setup) reap(t testing.TB) {
	// A hook the CLI started as it exited (SessionEnd) may still be
	// finishing; give short-lived processes a moment to end by themselves.
	var left []Process
	poll.Until(3*time.Second, func() bool { left = s.Processes(); return len(left) == 0 })
	if len(left) == 0 {
		return
	}
	var lines []string
	for _, p := range left {
		lines = append(lines, p.String())
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
	t.Errorf("realcli: %d processes were left running with HOME=%s (killed now):\n%s", len(left), s.Home, strings.Join(lines, "\n"))
	poll.Until(5*time.Second, func() bool { return len(s.Processes()) == 0 })
}

// checkOutside fails the test if the CLI wrote its state for this run where
// the temporary directories do not reach: the places REPORT.md saw the CLIs
// write to when HOME or TMPDIR was not set, under the test process's own
// temp dir and home.
func (s *Setup) checkOutside(t testing.TB) {
	var found []string
	uid := strconv.Itoa(os.Getuid())
	tmps := []string{os.TempDir()}
	if os.TempDir() != "/tmp" {
		tmps = append(tmps, "/tmp")
	}
	for _, tmp := range tmps {
		p := filepath.Join(tmp, "claude-"+uid, dashed(s.Dir))
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != s.Home {
		p := filepath.Join(home, ".claude", "projects", dashed(s.Dir))
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
		for _, f := range []string{".claude.json", ".codex/config.toml", ".gemini/trustedFolders.json", ".gemini/projects.json"} {
			p := filepath.Join(home, f)
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s.Root)) {
				found = append(found, p+" (names "+s.Root+")")
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("realcli: %s wrote outside its temporary directories:\n%s", s.CLI, strings.Join(found, "\n"))
	}
}
