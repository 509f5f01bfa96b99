package realcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// codexDaemons returns the Codex app-server processes running with the
// Setup's HOME: the daemon and its pid-update-loop.
func codexDaemons(s *realcli.Setup) []realcli.Process {
	var out []realcli.Process
	for _, p := range s.Processes() {
		if strings.Contains(p.Command, " app-server") {
			out = append(out, p)
		}
	}
	return out
}

// startCodexInShell opens a shell pane and types `codex` into it, as a
// user would: Codex 0.169 then runs with its background app-server daemon.
func startCodexInShell(m *musterRun, name string) {
	m.t.Helper()
	m.must("new", "--name", name, "--dir", m.s.Dir, "--detach")
	m.must("send", name, "codex", "--enter")
	m.waitScreen(name, profiles[realcli.Codex].idle, launchTimeout)
}

// promptUntil types prompt into pane name and presses Enter again until
// the screen shows reply (a key typed while Codex redraws can be lost).
func promptUntil(m *musterRun, name, prompt, reply string) {
	m.t.Helper()
	m.must("send", name, prompt, "--enter")
	for i := 0; !poll(15*time.Second, func() bool { return strings.Contains(m.capture(name), reply) }); i++ {
		if i == 4 {
			m.t.Fatalf("%s: no reply %q to %q; screen:\n%s", name, reply, prompt, m.capture(name))
		}
		if !strings.Contains(m.capture(name), prompt) {
			m.must("send", name, prompt, "--enter")
		} else {
			m.must("send", name, "", "--enter")
		}
	}
}

// rolloutOf returns the session id of the rollout that holds prompt.
func rolloutOf(t *testing.T, s *realcli.Setup, prompt string) string {
	t.Helper()
	var id string
	if !poll(turnTimeout, func() bool {
		files, _ := filepath.Glob(filepath.Join(s.Home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), prompt) {
				base := strings.TrimSuffix(filepath.Base(f), ".jsonl")
				id = base[len(base)-36:]
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no rollout holds %q", prompt)
	}
	return id
}

// killAll kills the panes and checks that Codex's app-server daemon, which
// the first pane's TUI started, is gone once none of them is left.
func killAll(m *musterRun, names ...string) {
	m.t.Helper()
	if len(codexDaemons(m.s)) == 0 {
		m.t.Fatalf("no Codex app-server runs before the kill: the panes did not run Codex in daemon mode")
	}
	for _, n := range names {
		m.must("kill", n)
	}
	start := time.Now()
	if !poll(20*time.Second, func() bool { return len(codexDaemons(m.s)) == 0 }) {
		m.t.Fatalf("the Codex app-server outlived `muster kill` of its panes: %v", codexDaemons(m.s))
	}
	m.t.Logf("app-server gone %s after the last kill", time.Since(start).Round(10*time.Millisecond))
}

// TestMusterCodexDaemonPanes is issue 10's Codex daemon-mode case: Codex
// typed as `codex` into two shell panes of one directory, where its
// app-server daemon (a child of the first pane's TUI) holds every rollout
// open and runs both panes' hooks. Each session's turns and native id stay
// on its own pane or are refused, never crossed; the daemon does not
// outlive `muster kill` of the panes.
func TestMusterCodexDaemonPanes(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Codex, realcli.Options{})
	m := newMuster(t, s)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	}()
	m.must("hooks", "setup", "codex")
	if err := realcli.TrustCodexHooks(filepath.Join(s.Home, ".codex")); err != nil {
		t.Fatal(err)
	}

	// Both Codexes start before either has a session: nothing tells the
	// panes apart, so their events are refused.
	startCodexInShell(m, "ca")
	startCodexInShell(m, "cb")
	s.Server.Enqueue(fakemodel.Text("reply for ca"), fakemodel.Text("reply for cb"))
	promptUntil(m, "ca", "hello from ca", "reply for ca")
	before := m.session("ca")
	promptUntil(m, "cb", "hello from cb", "reply for cb")
	sidA, sidB := rolloutOf(t, s, "hello from ca"), rolloutOf(t, s, "hello from cb")
	time.Sleep(2 * time.Second) // the Stop hooks of both turns have run
	a, b := m.session("ca"), m.session("cb")
	t.Logf("at once: ca native %q run %q %q; cb native %q run %q %q (sessions %s, %s)",
		a.NativeSessionID, runID(a), runState(a), b.NativeSessionID, runID(b), runState(b), sidA, sidB)
	if a.NativeSessionID == sidB || b.NativeSessionID == sidA {
		t.Errorf("crossed native ids: ca has %q, cb has %q; ca's session is %s, cb's %s", a.NativeSessionID, b.NativeSessionID, sidA, sidB)
	}
	if runID(a) != runID(before) {
		t.Errorf("cb's turn moved ca's run from %q to %q", runID(before), runID(a))
	}
	if codexDaemons(s) == nil {
		t.Fatal("no app-server: Codex did not run in daemon mode")
	}
	killAll(m, "ca", "cb")

	// One after the other: the first pane is the only Codex pane in the
	// directory, and the second is then the only one without a session.
	startCodexInShell(m, "cc")
	s.Server.Enqueue(fakemodel.Text("reply for cc"), fakemodel.Text("reply for cd"))
	start := time.Now()
	promptUntil(m, "cc", "hello from cc", "reply for cc")
	w := m.wait("cc", "done", turnTimeout)
	t.Logf("cc: prompt to %s %s", w.State, time.Since(start).Round(10*time.Millisecond))
	startCodexInShell(m, "cd")
	start = time.Now()
	promptUntil(m, "cd", "hello from cd", "reply for cd")
	w2 := m.wait("cd", "done", turnTimeout)
	t.Logf("cd: prompt to %s %s", w2.State, time.Since(start).Round(10*time.Millisecond))
	sidC, sidD := rolloutOf(t, s, "hello from cc"), rolloutOf(t, s, "hello from cd")
	c, d := m.session("cc"), m.session("cd")
	if c.NativeSessionID != sidC || d.NativeSessionID != sidD {
		t.Errorf("native ids: cc %q, cd %q; want %s, %s", c.NativeSessionID, d.NativeSessionID, sidC, sidD)
	}
	if runID(c) == runID(d) || runID(c) != w.RunID || runID(d) != w2.RunID {
		t.Errorf("runs: cc %q (waited %q), cd %q (waited %q); want each pane its own", runID(c), w.RunID, runID(d), w2.RunID)
	}
	for _, ws := range []string{w.State, w2.State} {
		if ws != "succeeded" && ws != "idle" {
			t.Errorf("a turn ended %q, want succeeded", ws)
		}
	}
	killAll(m, "cc", "cd")
}

// TestMusterHooklessClaudesOneDir is issue 10's hook-less two-pane case:
// Claude Code typed as `claude` into two shell panes of one directory, no
// hooks anywhere. Each pane's turn is read from its own transcript, which
// the Claude process proves (its sessions/<pid>.json); neither pane shows
// the other's prompt.
func TestMusterHooklessClaudesOneDir(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Claude, realcli.Options{})
	m := newMuster(t, s)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	}()
	for _, n := range []string{"ha", "hb"} {
		m.must("new", "--name", n, "--dir", s.Dir, "--detach")
		m.must("send", n, "claude", "--enter")
	}
	for _, n := range []string{"ha", "hb"} {
		m.waitScreen(n, profiles[realcli.Claude].idle, launchTimeout)
	}
	s.Server.Enqueue(fakemodel.Text("reply for ha"), fakemodel.Text("reply for hb"))
	for _, n := range []string{"ha", "hb"} {
		start := time.Now()
		promptUntil(m, n, "hello from "+n, "reply for "+n)
		var msgs string
		m.waitFor(n, "its own turn in explain", turnTimeout, func() bool {
			msgs = explainMessages(m, n)
			return strings.Contains(msgs, "hello from "+n)
		})
		t.Logf("%s: prompt to its turn in explain %s", n, time.Since(start).Round(10*time.Millisecond))
	}
	time.Sleep(3 * time.Second) // a few more polls: nothing may move
	for _, n := range []string{"ha", "hb"} {
		other := map[string]string{"ha": "hb", "hb": "ha"}[n]
		msgs := explainMessages(m, n)
		if strings.Contains(msgs, "hello from "+other) {
			t.Errorf("%s shows %s's turn:\n%s", n, other, msgs)
		}
		info := m.session(n)
		t.Logf("%s: run %q %q", n, runID(info), runState(info))
	}
}

// explainMessages returns the hook names and messages of the events
// `muster explain --json` shows for pane name, one a line.
func explainMessages(m *musterRun, name string) string {
	m.t.Helper()
	var x proto.Explanation
	m.mustJSON(&x, "explain", name, "--json")
	var b strings.Builder
	for _, e := range x.Events {
		b.WriteString(e.HookName + " " + e.Message + "\n")
	}
	return b.String()
}

// codexTUIs returns the interactive Codex processes running with the
// Setup's HOME: the npm wrapper (node …/bin/codex) and the binary it
// starts, not the app-server and not the shells Codex runs, whose scripts
// mention codex too (its shell-environment snapshot).
func codexTUIs(s *realcli.Setup) []realcli.Process {
	var out []realcli.Process
	for _, p := range s.Processes() {
		f := strings.Fields(p.Command)
		if len(f) > 0 && filepath.Base(f[0]) == "node" {
			f = f[1:]
		}
		if len(f) > 0 && filepath.Base(f[0]) == "codex" && (len(f) == 1 || f[1] != "app-server") {
			out = append(out, p)
		}
	}
	return out
}

// exitCodex types /exit into pane name's Codex and waits until the
// pane's own Codex processes (the npm wrapper and the binary, in the
// pane's terminal session) are gone. Counting every Codex of the HOME is
// not enough: a TUI forking its pid-update-loop briefly shows a second
// process with the TUI's command line, and its exec looked like the
// pane's Codex exiting while /exit still sat in the composer.
func exitCodex(m *musterRun, name string) {
	m.t.Helper()
	sid := map[int]bool{m.session(name).PID: true}
	own := func() []realcli.Process {
		in := map[int]bool{}
		for _, pid := range sessionMembers(sid) {
			in[pid] = true
		}
		var out []realcli.Process
		for _, p := range codexTUIs(m.s) {
			if in[p.PID] {
				out = append(out, p)
			}
		}
		return out
	}
	if len(own()) == 0 {
		m.t.Fatalf("%s: no Codex runs in the pane; screen:\n%s", name, m.capture(name))
	}
	// A key typed while Codex redraws can be lost (a busy machine lost the
	// slash once, and "exit" went to the model as a prompt), and the
	// slash-command popup can take the first Enter: type the command until
	// the screen shows it, then press Enter until Codex exits.
	for attempt := 0; ; attempt++ {
		if attempt == 3 {
			m.t.Fatalf("%s: Codex did not exit (%v); screen:\n%s", name, own(), m.capture(name))
		}
		m.must("send", name, "/exit")
		if !poll(5*time.Second, func() bool { return strings.Contains(m.capture(name), "/exit") }) {
			continue
		}
		for range 2 {
			m.must("send", name, "", "--enter")
			if poll(10*time.Second, func() bool { return len(own()) == 0 }) {
				return
			}
		}
	}
}

// TestMusterCodexDaemonExits is the other half of issue 10's daemon-mode
// case: Codex typed into shell panes exits by itself (/exit) and the panes
// live on. Its app-server daemon, which the first TUI started and which
// survives it in a session of its own, stays while another pane's Codex
// may use it and is ended once no pane runs Codex, without any `muster
// kill`.
func TestMusterCodexDaemonExits(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Codex, realcli.Options{})
	m := newMuster(t, s)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	}()
	startCodexInShell(m, "ea")
	startCodexInShell(m, "eb")
	s.Server.Enqueue(fakemodel.Text("reply for ea"))
	promptUntil(m, "ea", "hello from ea", "reply for ea")
	if len(codexDaemons(s)) == 0 {
		t.Fatal("no Codex app-server: the panes did not run Codex in daemon mode")
	}
	exitCodex(m, "ea")
	// eb's Codex is the daemon's client: a few of the daemon's checks
	// (every 3 s) must leave it running.
	time.Sleep(7 * time.Second)
	if len(codexDaemons(s)) == 0 {
		t.Fatal("the app-server was ended while eb's Codex ran")
	}
	exitCodex(m, "eb")
	start := time.Now()
	if !poll(30*time.Second, func() bool { return len(codexDaemons(s)) == 0 }) {
		t.Fatalf("the Codex app-server outlived the Codexes of its panes: %v", codexDaemons(s))
	}
	t.Logf("app-server gone %s after the last Codex exited", time.Since(start).Round(10*time.Millisecond))
	for _, n := range []string{"ea", "eb"} {
		if info := m.session(n); info.State != "running" {
			t.Errorf("pane %s is %q after its Codex exited, want its shell running", n, info.State)
		}
	}
}

// TestMusterHooklessCodexesOneDir is issue 10's hook-less two-pane case
// for Codex 0.169: `codex` typed into two shell panes of one directory,
// no hooks installed, so both run in daemon mode and only the shared
// app-server holds their rollouts: nothing proves which rollout is whose.
// Each pane's runs are its own turns or coarse, never the other pane's
// prompt.
func TestMusterHooklessCodexesOneDir(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Codex, realcli.Options{})
	m := newMuster(t, s)
	defer func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	}()
	startCodexInShell(m, "xa")
	startCodexInShell(m, "xb")
	gate := make(chan struct{})
	s.Server.Enqueue(fakemodel.Text("reply for xa").After(gate), fakemodel.Text("reply for xb"))
	// The prompt reached the model (an Enter typed while Codex redraws
	// can be lost: pressed again while the prompt is in the input box).
	asked := len(s.Server.Turns())
	m.must("send", "xa", "hello from xa", "--enter")
	for i := 0; !poll(15*time.Second, func() bool { return len(s.Server.Turns()) > asked }); i++ {
		if i == 4 {
			t.Fatalf("xa: the prompt never reached the model; screen:\n%s", m.capture("xa"))
		}
		m.must("send", "xa", "", "--enter")
	}
	// While xa's reply is held, its pane's Codex works: a run shows.
	var a proto.SessionInfo
	m.waitFor("xa", "a run while its turn works", turnTimeout, func() bool {
		a = m.session("xa")
		return runState(a) == "running"
	})
	// Its reply ends the coarse run: Codex's OSC 7501 says done.
	xa := &mscenario{t: t, cli: realcli.Codex, prof: profiles[realcli.Codex], s: s, m: m, name: "xa"}
	w := endTurn(xa, "reply (coarse)", func() { close(gate) })
	if w.RunID != runID(a) || (w.State != "succeeded" && w.Terminal != "succeeded") {
		t.Errorf("xa after its reply: %+v, want run %s succeeded", w, runID(a))
	}
	if x := (&stateRun{sc: xa}).explain(); x.Because == nil || x.Because.Source != "terminal" || x.Because.HookName != "muster.terminal.turnEnded" {
		t.Errorf("xa's turn end: %+v, want Codex's OSC 7501 (muster.terminal.turnEnded)", x.Because)
	}
	m.waitScreen("xa", "reply for xa", turnTimeout)
	promptUntil(m, "xb", "hello from xb", "reply for xb")
	time.Sleep(3 * time.Second) // a few more polls: nothing may move
	runs := map[string]string{}
	for _, n := range []string{"xa", "xb"} {
		other := map[string]string{"xa": "xb", "xb": "xa"}[n]
		msgs := explainMessages(m, n)
		if strings.Contains(msgs, "hello from "+other) {
			t.Errorf("%s shows %s's turn:\n%s", n, other, msgs)
		}
		info := m.session(n)
		runs[n] = runID(info)
		t.Logf("%s: run %q %q; evidence:\n%s", n, runID(info), runState(info), msgs)
	}
	if runs["xa"] != "" && runs["xa"] == runs["xb"] {
		t.Errorf("both panes show run %s", runs["xa"])
	}
	if len(codexDaemons(s)) == 0 {
		t.Error("no app-server: Codex did not run in daemon mode, the case is not the one of issue 10")
	}
}

// TestMusterCodexDaemonStopEndsAppServer (issue 23 item 11): `muster
// daemon stop` while Codex, typed into a shell pane, runs in daemon mode
// ends its app-server daemon and pid-update-loop with the pane: nothing
// of Codex outlives Muster's panes.
func TestMusterCodexDaemonStopEndsAppServer(t *testing.T) {
	t.Parallel()
	s := realcli.New(t, realcli.Codex, realcli.Options{})
	m := newMuster(t, s)
	logOnFailure(t, s)
	startCodexInShell(m, "da")
	s.Server.Enqueue(fakemodel.Text("reply for da"))
	promptUntil(m, "da", "hello from da", "reply for da")
	if len(codexDaemons(s)) == 0 {
		t.Fatal("no Codex app-server: the pane did not run Codex in daemon mode")
	}
	for _, p := range codexDaemons(s) {
		t.Logf("codex shared process: %d %s", p.PID, p.Command)
	}
	m.must("daemon", "stop", "--force")
	start := time.Now()
	if !poll(20*time.Second, func() bool { return len(codexDaemons(s)) == 0 }) {
		t.Fatalf("the Codex app-server outlived `muster daemon stop` by 20 s: %v", codexDaemons(s))
	}
	t.Logf("app-server gone %s after muster daemon stop returned", time.Since(start).Round(10*time.Millisecond))
}
