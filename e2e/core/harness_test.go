// Package core_test drives the real muster binary end to end: a real daemon
// under a temporary MUSTER_HOME, real programs in real PTYs.
package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/testbin"
)

// musterBin is the muster binary, with muster-hook beside it so that
// `muster hooks setup` installs the helper agents run on every hook.
var musterBin string

func TestMain(m *testing.M) {
	// Some tests run this binary again as a small client (isolation_test.go).
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[1:]))
	}
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e/core drives real daemons, PTYs and tmux for minutes: skipped under -short")
		os.Exit(0)
	}
	bin, err := testbin.BuildMuster()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = bin
	os.Exit(m.Run())
}

// env is one isolated Muster home.
type env struct {
	t    *testing.T
	home string
	vars []string
	bin  string // the muster binary e.run runs; musterBin unless a test sets it
	// hookBin holds hook-loop and the hook spools (installHookLoop).
	hookBin string
}

func (e *env) userHome() string {
	home := ""
	for _, kv := range e.vars {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	return home
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Each test has its own home and daemon, and most of their time is
	// spent waiting on programs, so they run side by side.
	t.Parallel()
	// Socket paths must stay short, so not t.TempDir().
	home, err := os.MkdirTemp("/tmp", "mt")
	if err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	e := &env{t: t, home: home, bin: musterBin}
	e.vars = append(os.Environ(),
		"MUSTER_HOME="+home,
		"HOME="+userHome,
		"XDG_CONFIG_HOME="+filepath.Join(userHome, ".config"),
		"XDG_STATE_HOME="+filepath.Join(userHome, ".state"),
		"XDG_RUNTIME_DIR=",
		"CLAUDE_CONFIG_DIR="+filepath.Join(userHome, ".claude"),
		"CODEX_HOME="+filepath.Join(userHome, ".codex"),
		"GEMINI_CLI_HOME="+userHome,
		"SHELL=/bin/bash",
		"TMUX=/tmp/tmux-fake,1,0",
		"TMUX_PANE=%9",
	)
	t.Cleanup(func() {
		e.run("daemon", "stop", "--force")
		os.RemoveAll(home)
	})
	return e
}

type result struct {
	stdout, stderr string
	code           int
}

func (e *env) run(args ...string) result {
	return e.runIn("", args...)
}

func (e *env) runIn(dir string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.vars
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			e.t.Fatalf("run muster %v: %v", args, err)
		}
	}
	return result{out.String(), errb.String(), code}
}

// script writes an executable shell script and returns its path, for panes
// whose command is a composition (a bare `a; b` needs a resume template).
func (e *env) script(body string) string {
	e.t.Helper()
	f, err := os.CreateTemp(e.t.TempDir(), "script*.sh")
	if err != nil {
		e.t.Fatal(err)
	}
	fmt.Fprintf(f, "#!/bin/bash\n%s\n", body)
	f.Close()
	os.Chmod(f.Name(), 0o755)
	return f.Name()
}

// must runs a command that has to succeed.
func (e *env) must(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("muster %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (e *env) ls() []proto.SessionInfo {
	e.t.Helper()
	var list []proto.SessionInfo
	if err := json.Unmarshal([]byte(e.must("ls", "--json")), &list); err != nil {
		e.t.Fatal(err)
	}
	return list
}

func (e *env) session(name string) proto.SessionInfo {
	e.t.Helper()
	for _, s := range e.ls() {
		if s.Name == name {
			return s
		}
	}
	e.t.Fatalf("no session %q in ls", name)
	return proto.SessionInfo{}
}

// waitScreen polls capture until it contains want.
func (e *env) waitScreen(name, want string) string {
	e.t.Helper()
	var last string
	ok := eventually(func() bool {
		r := e.run("capture", name)
		last = r.stdout
		return strings.Contains(last, want)
	})
	if !ok {
		e.t.Fatalf("screen of %s never showed %q; last:\n%s", name, want, last)
	}
	return last
}

// eventually polls cond until it holds or a generous deadline passes; the
// deadline only bounds a failing test, it is not a performance assertion.
func eventually(cond func() bool) bool {
	return poll.Until(20*time.Second, cond)
}
