package hookroute

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/provider/codex"
	"github.com/musterhq/muster/internal/transcript"
)

// fakeCodex is a shell script named codex: it holds the file named by
// FAKE_ROLLOUT open (when set), says "ready", and waits on a FIFO nobody
// writes. Linux names a script's process after the script, so it is a
// Codex process to the router. It forks nothing once ready: a fork before
// its exec (of `sleep`, say) is named codex too, and a walk of the tree
// that met it would count it as an agent.
const fakeCodex = `#!/bin/sh
if [ -n "$FAKE_ROLLOUT" ]; then exec 3<"$FAKE_ROLLOUT"; fi
if [ -n "$FAKE_ROLLOUT2" ]; then exec 4<"$FAKE_ROLLOUT2"; fi
if [ -n "$FAKE_PIDFILE" ]; then echo $$ > "$FAKE_PIDFILE.tmp" && mv "$FAKE_PIDFILE.tmp" "$FAKE_PIDFILE"; fi
p=$(mktemp -u) && mkfifo "$p" && exec 9<>"$p" && rm "$p"
echo ready
read -r x <&9
`

type env struct {
	t     *testing.T
	root  string
	home  string // CODEX_HOME
	bin   string
	procs ProcFS
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs a Linux /proc")
	}
	root := t.TempDir()
	e := &env{t: t, root: root, home: filepath.Join(root, "codex"), bin: filepath.Join(root, "bin")}
	if err := os.MkdirAll(e.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.bin, "codex"), []byte(fakeCodex), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// router returns a router for Codex sessions under the env's CODEX_HOME.
func (e *env) router() *Router {
	return NewRouter(codex.Provider{}, transcript.Env{Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return e.home
		}
		return ""
	}}, e.procs)
}

// dir makes a working directory.
func (e *env) dir(name string) string {
	d := filepath.Join(e.root, "work", name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// rollout writes a rollout for session id whose session_meta records cwd.
func (e *env) rollout(id, cwd, originator, source string) string {
	d := filepath.Join(e.home, "sessions", "2026", "11", "30")
	if err := os.MkdirAll(d, 0o755); err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(d, "rollout-2026-11-30T10-56-09-"+id+".jsonl")
	meta := fmt.Sprintf(`{"timestamp":"2026-11-30T10:56:11.740Z","ordinal":0,"type":"session_meta","payload":{"session_id":%q,"id":%q,"timestamp":"2026-11-30T10:56:09.909Z","cwd":%q,"originator":%q,"cli_version":"0.169.0","source":%s,"thread_source":"user","model_provider":"openai"}}`+"\n"+
		`{"timestamp":"2026-11-30T10:56:11.741Z","type":"event_msg","payload":{"type":"task_started"}}`+"\n", id, id, cwd, originator, source)
	if err := os.WriteFile(p, []byte(meta), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// pane starts a fake Codex in dir, holding open (when not ""), either as the
// pane process itself or as the child of a shell, and returns the Pane.
func (e *env) pane(surface, dir, open string, viaShell bool, args ...string) Pane {
	e.t.Helper()
	var cmd *exec.Cmd
	if viaShell {
		cmd = exec.Command("/bin/sh", "-c", "codex; :")
	} else {
		cmd = exec.Command(filepath.Join(e.bin, "codex"))
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.bin+":/usr/bin:/bin", "FAKE_ROLLOUT="+open)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		e.t.Fatalf("fake codex did not start: %q, %v", line, err)
	}
	argv := append([]string{"codex"}, args...)
	return Pane{SurfaceID: surface, PID: cmd.Process.Pid, CWD: dir, LaunchArgs: argv}
}

// daemonPane starts a shell pane whose Codex TUI holds nothing open and
// has a child `codex app-server --managed-daemon` that holds opens open, as
// Codex 0.169.0 does without --no-daemon. It returns once the daemon holds
// them.
func (e *env) daemonPane(surface, dir string, opens ...string) Pane {
	e.t.Helper()
	opens = append(opens, "", "")
	cmd := exec.Command("/bin/sh", "-c", `FAKE_ROLLOUT="$S1" FAKE_ROLLOUT2="$S2" codex app-server --managed-daemon >/dev/null & FAKE_ROLLOUT= exec codex`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.bin+":/usr/bin:/bin", "S1="+opens[0], "S2="+opens[1])
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		e.t.Fatalf("fake codex did not start: %q, %v", line, err)
	}
	p := Pane{SurfaceID: surface, PID: cmd.Process.Pid, CWD: dir, LaunchArgs: []string{"codex"}}
	if opens[0] == "" {
		return p
	}
	for i := 0; ; i++ {
		for _, pid := range SharedPIDs(e.procs, p.PID, codex.Provider{}) {
			if files, _ := e.procs.OpenFiles(pid); slices.Contains(files, opens[0]) {
				return p
			}
		}
		if i == 500 {
			e.t.Fatal("the fake app-server never opened its rollout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shellPane starts a pane with no Codex in it.
func (e *env) shellPane(surface, dir string) Pane {
	cmd := exec.Command("/bin/sh", "-c", "echo ready; while :; do sleep 3600; done")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	bufio.NewReader(out).ReadString('\n')
	return Pane{SurfaceID: surface, PID: cmd.Process.Pid, CWD: dir}
}

const (
	sidA = "01a22c18-f9a7-7cb0-aed7-af74b3099326"
	sidB = "01a22c19-5448-7d02-89e7-73b160cc00ef"
	sidC = "01a22c0e-d041-74f3-b87b-104fada8e2f6"
)

func wantRoute(t *testing.T, r *Router, sid, hook string, panes []Pane, surface string, rule Rule) {
	t.Helper()
	d, err := r.Route(sid, hook, panes)
	if err != nil {
		t.Fatalf("Route(%s, %s) = %v, want %s by %s", sid, hook, err, surface, rule)
	}
	if d.SurfaceID != surface || d.Rule != rule {
		t.Fatalf("Route(%s, %s) = %s by %s, want %s by %s", sid, hook, d.SurfaceID, d.Rule, surface, rule)
	}
}

func wantRefused(t *testing.T, r *Router, sid, hook string, panes []Pane, want error) {
	t.Helper()
	d, err := r.Route(sid, hook, panes)
	if !errors.Is(err, want) {
		t.Fatalf("Route(%s, %s) = %+v, %v; want %v", sid, hook, d, err, want)
	}
}

func TestRuleOpenRollout(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	ra := e.rollout(sidA, w, "codex-tui", `"cli"`)
	// Two Codex panes in the same directory; only p2's Codex (a child of
	// its shell) holds the rollout open. Rule 4 alone would be ambiguous.
	p1 := e.pane("p1", w, "", false)
	p2 := e.pane("p2", w, ra, true)
	r := e.router()
	wantRoute(t, r, sidA, "PreToolUse", []Pane{p1, p2}, "p2", RuleOpenRollout)
	// The binding it made now answers without the open file.
	if s, ok := r.Binding(sidA); !ok || s != "p2" {
		t.Fatalf("binding = %q, %v", s, ok)
	}
}

func TestRuleOpenRolloutAmbiguous(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	ra := e.rollout(sidA, w, "codex-tui", `"cli"`)
	p1 := e.pane("p1", w, ra, false)
	p2 := e.pane("p2", e.dir("other"), ra, false)
	wantRefused(t, e.router(), sidA, "Stop", []Pane{p1, p2}, ErrAmbiguous)
}

func TestRuleBindingAndItsEnd(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	e.rollout(sidA, w, "codex-tui", `"cli"`)
	p1 := e.pane("p1", w, "", false)
	r := e.router()
	wantRoute(t, r, sidA, "UserPromptSubmit", []Pane{p1}, "p1", RuleUnboundCwd)
	// A second Codex pane in the same directory appears; the binding still
	// routes, where rule 4 would now be ambiguous.
	p2 := e.pane("p2", w, "", false)
	wantRoute(t, r, sidA, "Stop", []Pane{p1, p2}, "p1", RuleBinding)

	// The Codex process of p1 is replaced: the binding ends, and the two
	// unbound panes make the session ambiguous.
	p1b := e.pane("p1", w, "", false)
	wantRefused(t, r, sidA, "Stop", []Pane{p1b, p2}, ErrAmbiguous)

	// A closed pane loses its binding too.
	r2 := e.router()
	wantRoute(t, r2, sidA, "UserPromptSubmit", []Pane{p2}, "p2", RuleUnboundCwd)
	r2.PaneClosed("p2")
	if _, ok := r2.Binding(sidA); ok {
		t.Fatal("binding survived PaneClosed")
	}
	// Gone from the pane list entirely: no binding, no pane.
	wantRefused(t, r2, sidA, "Stop", []Pane{e.shellPane("s", w)}, ErrNoPane)
}

func TestRuleResumeArgs(t *testing.T) {
	e := newEnv(t)
	e.rollout(sidA, e.dir("recorded"), "codex-tui", `"cli"`)
	// The pane runs elsewhere than the rollout says and holds nothing open.
	p1 := e.pane("p1", e.dir("elsewhere"), "", false, "resume", sidA)
	p2 := e.pane("p2", e.dir("elsewhere"), "", false)
	r := e.router()
	wantRoute(t, r, sidA, "SessionStart", []Pane{p1, p2}, "p1", RuleResumeArgs)
	// Before the rollout exists, the resume launch still routes.
	wantRoute(t, e.router(), sidB, "SessionStart",
		[]Pane{e.pane("p3", e.dir("x"), "", false, "-c", "a=b", "resume", sidB)}, "p3", RuleResumeArgs)
	// Two panes resuming the same session are ambiguous.
	p4 := e.pane("p4", e.dir("y"), "", false, "resume", sidC)
	p5 := e.pane("p5", e.dir("y"), "", false, "resume", sidC)
	wantRefused(t, e.router(), sidC, "SessionStart", []Pane{p4, p5}, ErrAmbiguous)
}

func TestRuleUnboundCwd(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	e.rollout(sidA, w, "codex-tui", `"vscode"`) // the real 0.169 TUI with its daemon
	e.rollout(sidB, w, "codex_exec", `"exec"`)
	e.rollout(sidC, w, "codex_cli_rs", `{"subagent":{"thread_spawn":{"parent_thread_id":"x"}}}`)
	p1 := e.pane("p1", w, "", true)
	other := e.pane("p2", e.dir("other"), "", false)
	shell := e.shellPane("p3", w) // same directory, but no Codex in it
	panes := []Pane{p1, other, shell}
	r := e.router()
	wantRefused(t, r, sidB, "UserPromptSubmit", panes, ErrNoPane) // codex exec
	wantRefused(t, r, sidC, "UserPromptSubmit", panes, ErrNoPane) // sub-agent
	wantRoute(t, r, sidA, "UserPromptSubmit", panes, "p1", RuleUnboundCwd)
}

func TestTwoUnboundPanesInOneDirectoryRefuse(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	e.rollout(sidA, w, "codex-tui", `"cli"`)
	e.rollout(sidB, w, "codex-tui", `"cli"`)
	p1 := e.pane("p1", w, "", false)
	p2 := e.pane("p2", w, "", false)
	r := e.router()
	wantRefused(t, r, sidA, "UserPromptSubmit", []Pane{p1, p2}, ErrAmbiguous)
	// Once one of them is bound (here by its open rollout), the other is the
	// only unbound pane in the directory.
	p2b := e.pane("p2", w, filepath.Join(e.home, "sessions", "2026", "11", "30", "rollout-2026-11-30T10-56-09-"+sidB+".jsonl"), false)
	wantRoute(t, r, sidB, "UserPromptSubmit", []Pane{p1, p2b}, "p2", RuleOpenRollout)
	wantRoute(t, r, sidA, "UserPromptSubmit", []Pane{p1, p2b}, "p1", RuleUnboundCwd)
}

func TestRuleRebind(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	e.rollout(sidA, w, "codex-tui", `"cli"`)
	e.rollout(sidB, w, "codex-tui", `"cli"`) // after /new in the same Codex
	p1 := e.pane("p1", w, "", false)
	r := e.router()
	wantRoute(t, r, sidA, "UserPromptSubmit", []Pane{p1}, "p1", RuleUnboundCwd)
	// Only the session's first hooks may move a binding.
	wantRefused(t, r, sidB, "PreToolUse", []Pane{p1}, ErrNoPane)
	wantRoute(t, r, sidB, "SessionStart", []Pane{p1}, "p1", RuleRebind)
	if _, ok := r.Binding(sidA); ok {
		t.Fatal("the old session kept its binding after the rebind")
	}
	wantRoute(t, r, sidB, "Stop", []Pane{p1}, "p1", RuleBinding)
	// Two bound panes in the directory: rebinding would be a guess.
	e.rollout(sidC, w, "codex-tui", `"cli"`)
	p2 := e.pane("p2", w, "", false)
	wantRoute(t, r, sidA, "UserPromptSubmit", []Pane{p1, p2}, "p2", RuleUnboundCwd)
	wantRefused(t, r, sidC, "UserPromptSubmit", []Pane{p1, p2}, ErrAmbiguous)
}

func TestNoRolloutYet(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	p1 := e.pane("p1", w, "", false)
	// Codex writes the rollout at the first prompt: its SessionStart is refused.
	wantRefused(t, e.router(), sidA, "SessionStart", []Pane{p1}, ErrNoPane)
}

func TestHostileSessionIDs(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	p1 := e.pane("p1", w, "", false)
	r := e.router()
	for _, id := range []string{"", "../../etc/passwd", "*", "a/b", "a b", "-rf", "x\x00y", string(make([]byte, 200))} {
		wantRefused(t, r, id, "SessionStart", []Pane{p1}, ErrNoPane)
	}
}

// The daemon-mode case of issue 10 (Codex 0.169.0 typed as `codex` in two
// shell panes of one directory): pane 1's TUI started the app-server, which
// holds both sessions' rollouts open. Rule 1 used to route pane 2's session
// to pane 1; the daemon is not pane 1's agent, so both are refused while
// neither pane can be told apart, and routed once one can.
func TestSharedDaemonIsNotThePanesAgent(t *testing.T) {
	e := newEnv(t)
	w := e.dir("repo")
	ra := e.rollout(sidA, w, "codex-tui", `"vscode"`)
	rb := e.rollout(sidB, w, "codex-tui", `"vscode"`)
	p1 := e.daemonPane("p1", w, ra, rb)
	p2 := e.pane("p2", w, "", true)
	if own := AgentPIDs(e.procs, p1.PID, codex.Provider{}); len(own) != 1 || own[0] != p1.PID {
		t.Fatalf("the agent of pane 1 is %v, want only its TUI %d", own, p1.PID)
	}
	panes := []Pane{p1, p2}
	r := e.router()
	wantRefused(t, r, sidB, "SessionStart", panes, ErrAmbiguous)
	wantRefused(t, r, sidA, "UserPromptSubmit", panes, ErrAmbiguous)
	if _, ok := r.Binding(sidB); ok {
		t.Fatal("a refused route left a binding")
	}

	// Pane 1 alone: its session routes by directory, and then pane 2's
	// session goes to the only unbound pane, never to the daemon's.
	r = e.router()
	wantRoute(t, r, sidA, "UserPromptSubmit", []Pane{p1}, "p1", RuleUnboundCwd)
	wantRoute(t, r, sidB, "UserPromptSubmit", panes, "p2", RuleUnboundCwd)
	wantRoute(t, r, sidB, "Stop", panes, "p2", RuleBinding)
	wantRoute(t, r, sidA, "Stop", panes, "p1", RuleBinding)
}
