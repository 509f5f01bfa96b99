package core_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestDaemonRestartKeepsEveryPane: `muster daemon restart` with ten panes
// (a fake Claude Code with its hooks, shells with history, one flooding
// its output) and two attached clients, one the daemon holds the terminal
// of and one relaying: every program keeps its pid, every screen and its
// history read the same, the flood has no gap, both clients attach again
// by themselves and their keys reach their panes, and the agent's hooks
// are still accepted (with the same capability: it is in the agent's
// environment).
func TestDaemonRestartKeepsEveryPane(t *testing.T) {
	e, _ := agentEnv(t)
	e.must("new", "claude", "--name", "cl", "--detach")
	e.waitConfirmed("cl")
	e.must("send", "cl", "reply before the restart", "--enter")
	e.must("wait", "cl", "--until", "done", "--timeout", "30s")
	shells := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"}
	for i, name := range shells {
		e.must("new", "--name", name, "--detach", "--cmd", "bash --norc --noprofile")
		e.must("send", name, fmt.Sprintf("seq 1 %d; printf '\\033[1;3%dmstyled-%s\\033[0m\\n'", 100+40*i, i%7+1, name), "--enter")
		e.waitScreen(name, "styled-"+name)
	}
	direct := e.attach("s1", 90, 25, true)
	direct.waitScreen("styled-s1")
	relayVars := e.vars
	e.vars = append(slices.Clone(e.vars), "MUSTER_ATTACH_DIRECT=0")
	relay := e.attach("s2", 90, 25, true)
	e.vars = relayVars
	relay.waitScreen("styled-s2")

	// The flood: 8000 numbered lines, paced so that the restart comes
	// in the middle of it.
	flood := e.script(`for i in $(seq 1 8000); do echo "n $i"; [ $((i % 100)) = 0 ] && sleep 0.15; done; echo flood-done; sleep 600`)
	e.must("new", "--name", "flood", "--detach", "--cmd", flood)
	// Any numbered line: a fixed one ("n 500") scrolls by between two
	// captures on a slow machine.
	e.waitScreen("flood", "n ")

	before := map[string]string{}
	pids := map[string]int{}
	for _, s := range e.ls() {
		pids[s.Name] = s.PID
		if s.Name != "flood" {
			before[s.Name] = e.must("capture", s.Name, "--scrollback", "2000", "--ansi")
		}
	}
	if len(pids) != 10 {
		t.Fatalf("%d sessions, want 10", len(pids))
	}
	status := e.must("daemon", "status")
	r := e.run("daemon", "restart")
	if r.code != 0 || !strings.Contains(r.stderr, "10 panes kept") {
		t.Fatalf("daemon restart: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(e.must("capture", "flood"), "flood-done") {
		t.Fatal("the flood ended before the restart was over: it proves nothing")
	}
	if got := daemonPID(e.must("daemon", "status")); got != daemonPID(status) {
		t.Errorf("daemon after the restart: %q, before: %q (it re-executes itself: same pid)", got, daemonPID(status))
	}
	for _, s := range e.ls() {
		if s.PID != pids[s.Name] || s.State != "running" {
			t.Errorf("%s: pid %d, state %s after the restart; pid %d before", s.Name, s.PID, s.State, pids[s.Name])
		}
		if want, ok := before[s.Name]; ok {
			if got := e.must("capture", s.Name, "--scrollback", "2000", "--ansi"); got != want {
				t.Errorf("%s: screen and history after the restart:\n%s\nbefore:\n%s", s.Name, got, want)
			}
		}
	}

	// Both clients attached again: what they type reaches their panes,
	// and they show it.
	direct.typeText("echo typed-after-restart-direct\r")
	direct.waitScreen("typed-after-restart-direct")
	e.waitScreen("s1", "typed-after-restart-direct")
	relay.typeText("echo typed-after-restart-relay\r")
	relay.waitScreen("typed-after-restart-relay")
	e.waitScreen("s2", "typed-after-restart-relay")

	// The agent's hooks are accepted by the new image: the new turn's
	// run is moved by hook events.
	runBefore := explain(t, e, "cl")
	e.must("send", "cl", "reply after the restart", "--enter")
	var after proto.Explanation
	if !eventually(func() bool {
		after = explain(t, e, "cl")
		if after.RunID == nil || runBefore.RunID != nil && *after.RunID == *runBefore.RunID {
			return false
		}
		for _, ev := range after.Events {
			if ev.Source == "hook" && ev.RunID == *after.RunID && ev.Kind == "succeeded" {
				return true
			}
		}
		return false
	}) {
		t.Errorf("no hook event ended the turn after the restart: %+v", after.Events)
	}

	// The flood went on with no line lost or repeated.
	e.waitScreen("flood", "flood-done")
	text := e.must("capture", "flood", "--scrollback", "20000")
	next := 0
	for _, l := range strings.Split(text, "\n") {
		v, ok := strings.CutPrefix(l, "n ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || next != 0 && n != next {
			t.Fatalf("the flood's line after %d is %q: output lost across the restart", next-1, l)
		}
		next = n + 1
	}
	if next != 8001 {
		t.Fatalf("the flood's history ends at %d, want 8000", next-1)
	}
}

// TestDaemonRestartRefusesABrokenBinary: a restart into a file that is
// not a muster, or not executable, is refused in one line and the daemon
// goes on with its panes as they were.
func TestDaemonRestartRefusesABrokenBinary(t *testing.T) {
	e := newEnv(t)
	e.must("new", "--name", "s", "--detach", "--cmd", "bash --norc --noprofile")
	e.must("send", "s", "echo still-here", "--enter")
	e.waitScreen("s", "still-here")
	pid := e.session("s").PID
	status := firstLine(e.must("daemon", "status"))
	dir := t.TempDir()
	notMuster := filepath.Join(dir, "not-muster")
	os.WriteFile(notMuster, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	// A copy, not a link: the mode belongs to the file.
	notExecutable := filepath.Join(dir, "muster")
	data, err := os.ReadFile(musterBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notExecutable, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{notMuster, notExecutable} {
		r := e.run("daemon", "restart", "--binary", bin)
		if r.code == 0 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "keeps running") {
			t.Errorf("restart into %s: exit %d, stderr %q; want a one-line refusal", bin, r.code, r.stderr)
		}
		if got := firstLine(e.must("daemon", "status")); got != status {
			t.Errorf("after a refused restart the daemon is %q, was %q", got, status)
		}
		if s := e.session("s"); s.PID != pid || s.State != "running" {
			t.Errorf("after a refused restart: pid %d, %s; want pid %d running", s.PID, s.State, pid)
		}
	}
	e.must("send", "s", "echo answered-after", "--enter")
	e.waitScreen("s", "answered-after")
}

// daemonPID is the "pid N" of `muster daemon status`.
func daemonPID(status string) string {
	_, rest, _ := strings.Cut(status, "pid ")
	pid, _, _ := strings.Cut(rest, ",")
	return pid
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func explain(t *testing.T, e *env, name string) proto.Explanation {
	t.Helper()
	var x proto.Explanation
	if err := json.Unmarshal([]byte(e.must("explain", name, "--json")), &x); err != nil {
		t.Fatal(err)
	}
	return x
}
