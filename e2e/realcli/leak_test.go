package realcli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps Errorf messages instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestReapKillsAndReportsLeftovers(t *testing.T) {
	root := t.TempDir()
	s := &Setup{Home: filepath.Join(root, "home")}
	cmd := exec.Command("sleep", "600")
	cmd.Env = []string{"HOME=" + s.Home, "PATH=" + os.Getenv("PATH")}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if got := s.Processes(); len(got) != 1 || got[0].PID != cmd.Process.Pid || !strings.Contains(got[0].Command, "sleep 600") {
		t.Fatalf("Processes() = %v, want the sleep", got)
	}
	r := &recorder{TB: t}
	s.reap(r)
	if err := <-waited; err == nil {
		t.Error("the leftover process was not killed")
	}
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "left running") || !strings.Contains(r.errs[0], strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("reap reported %q, want the leftover named", r.errs)
	}
	r = &recorder{TB: t}
	s.reap(r)
	if len(r.errs) != 0 {
		t.Errorf("reap with nothing left reported %q", r.errs)
	}
}

func TestCheckOutsideFindsStateInTheRealHome(t *testing.T) {
	realHome := t.TempDir()
	t.Setenv("HOME", realHome)
	root := t.TempDir()
	s := &Setup{CLI: Claude, Root: root, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "work")}
	r := &recorder{TB: t}
	s.checkOutside(r)
	if len(r.errs) != 0 {
		t.Fatalf("a clean run reported %q", r.errs)
	}
	os.MkdirAll(filepath.Join(realHome, ".claude", "projects", dashed(s.Dir)), 0o755)
	os.MkdirAll(filepath.Join(realHome, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(realHome, ".gemini", "trustedFolders.json"), []byte(`{"`+s.Dir+`":"TRUST_FOLDER"}`), 0o644)
	s.checkOutside(r)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], ".claude/projects/"+dashed(s.Dir)) || !strings.Contains(r.errs[0], "trustedFolders.json") {
		t.Errorf("checkOutside reported %q, want both leaks", r.errs)
	}
}
