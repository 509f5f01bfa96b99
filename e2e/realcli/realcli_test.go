package realcli_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/testing/fakemodel"
	testpoll "github.com/musterhq/muster/internal/testing/poll"
)

// profile is what a scenario needs to know to drive one CLI by keys.
type profile struct {
	// idle is text the CLI shows once its input box takes keys.
	idle string
	// startHook fires at launch; "" when the CLI fires it only with the
	// first prompt (Codex).
	startHook string
	// submitHook fires when the CLI accepts a prompt.
	submitHook string
	// doneHook fires when a turn ends.
	doneHook string
	// approval is text of the dialog asking to run a shell command, and
	// approveKeys the keys that allow it once.
	approval    string
	approveKeys []string
	// permissionHook fires when that dialog opens, and permissionField and
	// permissionValue pick it out from other calls of the same event.
	permissionHook                   string
	permissionField, permissionValue string
	// failHook fires when a turn fails; "" when nothing fires (Codex).
	failHook string
}

var profiles = map[realcli.CLI]profile{
	realcli.Claude: {
		idle:      "manual mode on",
		startHook: "SessionStart", submitHook: "UserPromptSubmit", doneHook: "Stop",
		approval: "Do you want to proceed?", approveKeys: []string{"Enter"},
		permissionHook: "PermissionRequest", permissionField: "tool_name", permissionValue: "Bash",
		failHook: "StopFailure",
	},
	realcli.Codex: {
		idle:       "Ask Codex to do anything",
		submitHook: "UserPromptSubmit", doneHook: "Stop",
		approval: "Would you like to run the following command?", approveKeys: []string{"y"},
		permissionHook: "PermissionRequest", permissionField: "tool_name", permissionValue: "Bash",
	},
	realcli.Gemini: {
		idle:      "Type your message",
		startHook: "SessionStart", submitHook: "BeforeAgent", doneHook: "AfterAgent",
		approval: "Allow execution of", approveKeys: []string{"Enter"},
		permissionHook: "Notification", permissionField: "notification_type", permissionValue: "ToolPermission",
		failHook: "AfterAgent",
	},
}

// Deadlines are generous: on a loaded 2-core machine Gemini CLI needs
// half a minute to start. No test asserts how long anything took.
const (
	launchTimeout = 150 * time.Second
	turnTimeout   = 120 * time.Second
)

func TestClaude(t *testing.T) { t.Parallel(); runScenario(t, realcli.Claude) }
func TestCodex(t *testing.T)  { t.Parallel(); runScenario(t, realcli.Codex) }
func TestGemini(t *testing.T) { t.Parallel(); runScenario(t, realcli.Gemini) }

// scenario drives one CLI through launch, a text turn, a shell call that
// needs approval, a failed turn, a hangup and a resume, checking the screen,
// the hooks and what reached the fake model server at each step.
type scenario struct {
	t    *testing.T
	cli  realcli.CLI
	prof profile
	s    *realcli.Setup
	ts   *tmuxServer
	p    *pane
	// timings, logged at the end for README.md.
	times []string
}

func (sc *scenario) took(what string, d time.Duration) {
	sc.times = append(sc.times, what+" "+d.Round(10*time.Millisecond).String())
}

func (sc *scenario) enqueue(rs ...fakemodel.Reply) {
	sc.t.Helper()
	if err := sc.s.Server.Enqueue(rs...); err != nil {
		sc.t.Fatal(err)
	}
}

func (sc *scenario) hooks() []realcli.Hook {
	sc.t.Helper()
	hs, err := sc.s.Hooks()
	if err != nil {
		sc.t.Fatal(err)
	}
	return hs
}

func count(hs []realcli.Hook, event string) int {
	n := 0
	for _, h := range hs {
		if h.Event == event {
			n++
		}
	}
	return n
}

func last(hs []realcli.Hook, event string) realcli.Hook {
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Event == event {
			return hs[i]
		}
	}
	return realcli.Hook{}
}

// waitHook waits until event has fired more than n times and returns the
// latest call.
func (sc *scenario) waitHook(event string, n int) realcli.Hook {
	sc.t.Helper()
	var hs []realcli.Hook
	sc.p.waitFor(event+" hook", turnTimeout, func() bool {
		hs = sc.hooks()
		return count(hs, event) > n
	})
	return last(hs, event)
}

// submit types prompt and presses Enter until the CLI accepts it (its
// submit hook fires). A CLI that is still starting can drop keys (Gemini
// CLI clears its input box when it loads a resumed chat), and Codex takes
// an Enter that follows typing too closely for part of a paste; so the
// prompt is retyped when it is not in the input box, and Enter waits
// until the text shows.
func (sc *scenario) submit(prompt string) {
	sc.t.Helper()
	before := count(sc.hooks(), sc.prof.submitHook)
	accepted := func() bool { return count(sc.hooks(), sc.prof.submitHook) > before }
	for attempt := 1; attempt <= 4; attempt++ {
		if !strings.Contains(sc.p.visible(), prompt) {
			sc.p.text(prompt)
			if !poll(10*time.Second, func() bool { return strings.Contains(sc.p.visible(), prompt) }) {
				continue
			}
		}
		time.Sleep(300 * time.Millisecond)
		sc.p.keys("Enter")
		if poll(20*time.Second, accepted) {
			if attempt > 1 {
				sc.t.Logf("%s: prompt %q was accepted on attempt %d", sc.cli, prompt, attempt)
			}
			return
		}
	}
	sc.t.Fatalf("%s never accepted the prompt %q; screen:\n%s", sc.cli, prompt, sc.p.visible())
}

func poll(timeout time.Duration, cond func() bool) bool {
	return testpoll.Until(timeout, cond)
}

// lastTurn returns the newest model turn request the server received.
func (sc *scenario) lastTurn() fakemodel.Request {
	sc.t.Helper()
	turns := sc.s.Server.Turns()
	if len(turns) == 0 {
		sc.t.Fatal("the fake model server received no model turn")
	}
	return turns[len(turns)-1]
}

func runScenario(t *testing.T, cli realcli.CLI) {
	sc := &scenario{t: t, cli: cli, prof: profiles[cli]}
	sc.s = realcli.New(t, cli, realcli.Options{HookLog: true})
	sc.ts = newTmux(t, sc.s)
	defer func() {
		var lines []string
		for _, h := range sc.hooks() {
			line := h.Event
			for _, f := range []string{"source", "reason", "notification_type", "tool_name", "error"} {
				if v := h.Field(f); v != "" {
					line += " " + f + "=" + v
				}
			}
			lines = append(lines, line)
		}
		t.Logf("%s hooks in order:\n  %s", cli, strings.Join(lines, "\n  "))
		t.Logf("%s timings: %s", cli, strings.Join(sc.times, "; "))
		var reqs []string
		for _, r := range sc.s.Server.Requests() {
			line := r.Method + " " + r.Path + " " + string(r.Reply)
			if r.Turn {
				p := r.Prompt()
				if len(p) > 40 {
					p = p[:40] + "…"
				}
				line += " prompt=" + strconvQuote(p)
				if _, ok := r.ToolOutput(); ok {
					line += " +tool_result"
				}
			}
			reqs = append(reqs, line)
		}
		t.Logf("%s requests to the fake model:\n  %s", cli, strings.Join(reqs, "\n  "))
		if hs := sc.hooks(); len(hs) > 0 {
			var keys []string
			for k := range hs[0].Env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			t.Logf("%s hook environment: %v", cli, keys)
		}
		var tmp []string
		for _, pat := range []string{"*", "*/*"} {
			m, _ := filepath.Glob(filepath.Join(sc.s.TmpDir, pat))
			for _, f := range m {
				tmp = append(tmp, strings.TrimPrefix(f, sc.s.TmpDir+"/"))
			}
		}
		t.Logf("%s wrote under TMPDIR: %v", cli, tmp)
	}()

	// Launch.
	var id string
	if cli != realcli.Codex {
		id = uuid.NewString()
	}
	args, err := sc.s.NewArgs(id)
	if err != nil {
		t.Fatal(err)
	}
	sc.p = sc.ts.start(sc.s.Command(args...)...)
	sc.took("launch", sc.p.waitFor("the idle input box", launchTimeout, func() bool { return strings.Contains(sc.p.visible(), sc.prof.idle) }))
	if sc.prof.startHook != "" {
		start := time.Now()
		h := sc.waitHook(sc.prof.startHook, 0)
		sc.took("SessionStart", time.Since(start))
		if h.Field("session_id") != id || h.Field("source") != "startup" {
			t.Errorf("%s payload %s, want session_id %s and source startup", h.Event, h.Payload, id)
		}
	}

	if cli == realcli.Claude {
		// Claude Code keeps per-session state under $TMPDIR/claude-<uid>;
		// with TMPDIR set it stays inside the Setup.
		dir := filepath.Join(sc.s.TmpDir, "claude-"+strconv.Itoa(os.Getuid()), dashed(sc.s.Dir), id)
		sc.p.waitFor(dir, turnTimeout, func() bool { _, err := os.Stat(dir); return err == nil })
	}

	transcript := sc.textTurn(&id)
	sc.permissionTurn()
	sc.failedTurn()

	// Hang up, as a pane manager that stops does, then resume.
	sizeBefore := fileSize(t, transcript)
	if left := sc.p.hangUp(); len(left) > 0 {
		t.Logf("%s: processes that outlived the hangup by 10 s (killed): %v", cli, left)
	}
	sc.resume(id, transcript, sizeBefore)
}

// textTurn sends a prompt that gets a plain text reply. For Codex it learns
// the session id from the first hooks. It returns the transcript path.
func (sc *scenario) textTurn(id *string) string {
	t := sc.t
	hs0 := len(sc.hooks())
	sc.enqueue(fakemodel.Text("first reply from the fake " + string(sc.cli)))
	start := time.Now()
	sc.submit("say hello")
	sc.p.waitScreen("first reply from the fake", turnTimeout)
	done := sc.waitHook(sc.prof.doneHook, count(sc.hooks()[:hs0], sc.prof.doneHook))
	sc.took("text turn", time.Since(start))

	if got := sc.lastTurn().Prompt(); got != "say hello" {
		t.Errorf("the model got prompt %q, want %q", got, "say hello")
	}
	hs := sc.hooks()[hs0:]
	if sc.cli == realcli.Codex {
		// Codex fires SessionStart with the first prompt, and its payload
		// is the only place the session id shows.
		start := last(hs, "SessionStart")
		if start.Field("source") != "startup" || uuid.Validate(start.Field("session_id")) != nil {
			t.Fatalf("Codex SessionStart with the first prompt = %s, want source startup and a UUID session_id", start.Payload)
		}
		*id = start.Field("session_id")
	}
	submit := last(hs, sc.prof.submitHook)
	if submit.Field("prompt") != "say hello" {
		t.Errorf("%s payload %s, want prompt %q", sc.prof.submitHook, submit.Payload, "say hello")
	}
	for _, h := range hs {
		if got := h.Field("session_id"); got != *id {
			t.Errorf("%s has session_id %q, want %q", h.Event, got, *id)
		}
	}
	order := realcli.Events(hs)
	if i, j := slices.Index(order, sc.prof.submitHook), slices.Index(order, sc.prof.doneHook); i < 0 || j < i {
		t.Errorf("hooks of a text turn: %v, want %s before %s", order, sc.prof.submitHook, sc.prof.doneHook)
	}
	path := done.Field("transcript_path")
	if !strings.HasPrefix(path, sc.s.Home+"/") {
		t.Fatalf("transcript_path %q is not under HOME %s", path, sc.s.Home)
	}
	// Under load the transcript can trail the hook that names it.
	sc.p.waitFor("the transcript "+path, turnTimeout, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
	return path
}

// permissionTurn sends a prompt whose reply is a shell call that needs the
// user's approval, approves it by keys, and checks that the command ran.
func (sc *scenario) permissionTurn() {
	t := sc.t
	marker := filepath.Join(sc.s.Dir, "approved.txt")
	hs0 := sc.hooks()
	sc.enqueue(
		fakemodel.Shell("touch approved.txt && echo tool-ran-"+string(sc.cli)),
		fakemodel.Text("second reply after the tool"),
	)
	start := time.Now()
	sc.submit("make a file")
	sc.p.waitScreen(sc.prof.approval, turnTimeout)
	sc.took("prompt to approval dialog", time.Since(start))
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the shell command ran before it was approved")
	}
	var perm realcli.Hook
	sc.p.waitFor(sc.prof.permissionHook+" hook for the dialog", turnTimeout, func() bool {
		for _, h := range sc.hooks()[len(hs0):] {
			if h.Event == sc.prof.permissionHook && h.Field(sc.prof.permissionField) == sc.prof.permissionValue {
				perm = h
				return true
			}
		}
		return false
	})
	t.Logf("%s: %s when the dialog opened: %s", sc.cli, perm.Event, perm.Payload)

	// A dialog that has just opened can miss a key (seen with Claude Code
	// under load), so press again while it is still there.
	approved := time.Now()
	for attempt := 1; ; attempt++ {
		sc.p.keys(sc.prof.approveKeys...)
		if poll(10*time.Second, func() bool { return !strings.Contains(sc.p.visible(), sc.prof.approval) }) {
			if attempt > 1 {
				t.Logf("%s: the approval dialog took the keys on attempt %d", sc.cli, attempt)
			}
			break
		}
		if attempt == 4 {
			t.Fatalf("%s: the approval dialog stayed after %v was pressed %d times; screen:\n%s", sc.cli, sc.prof.approveKeys, attempt, sc.p.visible())
		}
	}
	sc.p.waitScreen("second reply after the tool", turnTimeout)
	sc.waitHook(sc.prof.doneHook, count(hs0, sc.prof.doneHook))
	sc.took("approval to reply", time.Since(approved))
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the approved shell command did not run: %v", err)
	}
	out, ok := sc.lastTurn().ToolOutput()
	if !ok || !strings.Contains(out, "tool-ran-"+string(sc.cli)) {
		t.Errorf("the model got tool output %q (present %v), want the command's output", out, ok)
	}
}

// failedTurn sends a prompt the fake server fails with HTTP 400.
func (sc *scenario) failedTurn() {
	t := sc.t
	hs0 := sc.hooks()
	turns0 := len(sc.s.Server.Turns())
	msg := "scripted failure for " + string(sc.cli)
	sc.enqueue(fakemodel.Fail(400, msg))
	start := time.Now()
	sc.submit("please fail")
	sc.p.waitScreen(msg, turnTimeout)
	attempts := 0
	for _, r := range sc.s.Server.Turns()[turns0:] {
		if r.Reply == fakemodel.KindFail {
			attempts++
		}
	}
	if sc.prof.failHook != "" {
		h := sc.waitHook(sc.prof.failHook, count(hs0, sc.prof.failHook))
		sc.took("failed turn", time.Since(start))
		t.Logf("%s: %d failed attempts; %s: %s", sc.cli, attempts, h.Event, h.Payload)
		switch sc.cli {
		case realcli.Claude:
			if !strings.Contains(h.Field("last_assistant_message"), msg) {
				t.Errorf("StopFailure payload %s, want the API error", h.Payload)
			}
		case realcli.Gemini:
			if h.Field("prompt") != "please fail" || h.Field("prompt_response") != "[no response text]" {
				t.Errorf("AfterAgent after an error: %s", h.Payload)
			}
		}
		return
	}
	sc.took("failed turn", time.Since(start))
	t.Logf("%s: %d failed attempts, no hook for the failure", sc.cli, attempts)
	// Codex fires no hook for a failed turn; its rollout records it.
	path := last(sc.hooks(), "SessionStart").Field("transcript_path")
	sc.p.waitFor("the failure in the rollout", turnTimeout, func() bool {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"task_complete"`) && strings.Contains(line, `"error"`) && strings.Contains(line, msg) {
				return true
			}
		}
		return false
	})
}

// resume relaunches the CLI with its resume command and checks that the
// conversation goes on.
func (sc *scenario) resume(id, transcript string, sizeBefore int64) {
	t := sc.t
	hs0 := sc.hooks()
	if n := count(hs0, "Stop") - count(hs0, "UserPromptSubmit"); sc.cli == realcli.Codex && n != -1 {
		t.Errorf("Codex: %d Stop hooks for %d prompts, want one fewer (none for the failed turn): %v",
			count(hs0, "Stop"), count(hs0, "UserPromptSubmit"), realcli.Events(hs0))
	}
	args, err := sc.s.ResumeArgs(id)
	if err != nil {
		t.Fatal(err)
	}
	sc.p = sc.ts.start(sc.s.Command(args...)...)
	sc.took("resume to history shown", sc.p.waitFor("the resumed conversation", launchTimeout, func() bool {
		v := sc.p.screen()
		return strings.Contains(v, "second reply after the tool") && strings.Contains(v, sc.prof.idle)
	}))
	var resumeStart realcli.Hook
	if sc.prof.startHook != "" {
		resumeStart = sc.waitHook(sc.prof.startHook, count(hs0, sc.prof.startHook))
	}
	sc.enqueue(fakemodel.Text("third reply after resume"))
	start := time.Now()
	sc.submit("after resume")
	sc.p.waitScreen("third reply after resume", turnTimeout)
	sc.waitHook(sc.prof.doneHook, count(hs0, sc.prof.doneHook))
	sc.took("turn after resume", time.Since(start))
	if sc.prof.startHook == "" {
		resumeStart = last(sc.hooks()[len(hs0):], "SessionStart")
	}
	if resumeStart.Field("source") != "resume" || resumeStart.Field("session_id") != id {
		t.Errorf("SessionStart on resume = %s, want source resume and session_id %s", resumeStart.Payload, id)
	}
	// The model sees the earlier conversation.
	if body := string(sc.lastTurn().Body); !strings.Contains(body, "say hello") || !strings.Contains(body, "first reply from the fake") {
		t.Errorf("the first request after resume does not carry the earlier conversation")
	}
	newPath := resumeStart.Field("transcript_path")
	switch sc.cli {
	case realcli.Claude, realcli.Codex:
		if newPath != transcript {
			t.Errorf("transcript_path on resume = %q, want the same file %q", newPath, transcript)
		}
		// The transcript can trail the Stop hook a little.
		sc.p.waitFor("the resumed turn in "+transcript, turnTimeout, func() bool {
			return fileContains(t, transcript, "third reply after resume")
		})
		if size := fileSize(t, transcript); size <= sizeBefore {
			t.Errorf("the transcript did not grow with the resumed turn (%d → %d bytes)", sizeBefore, size)
		}
	case realcli.Gemini:
		// Gemini starts a new chat file for the same session id and points
		// SessionStart at it, but keeps writing the conversation to the
		// file it resumed.
		id8 := id[:8]
		if !strings.HasSuffix(newPath, "-"+id8+".jsonl") {
			t.Errorf("Gemini transcript_path on resume = %q, want a chat file ending -%s.jsonl", newPath, id8)
		}
		var files, with []string
		sc.p.waitFor("a chat file with the resumed turn", turnTimeout, func() bool {
			files, _ = filepath.Glob(filepath.Join(filepath.Dir(transcript), "session-*-"+id8+".jsonl"))
			with = nil
			for _, f := range files {
				if fileContains(t, f, "third reply after resume") {
					with = append(with, filepath.Base(f))
				}
			}
			return len(with) > 0
		})
		t.Logf("Gemini chat files for the session: %d; with the resumed turn: %v (resumed file %s, SessionStart names %s)",
			len(files), with, filepath.Base(transcript), filepath.Base(newPath))
		// Chat files are named by the minute the chat started: a resume
		// within the same minute names the very file it resumes.
		if !slices.ContainsFunc(files, func(f string) bool {
			return fileContains(t, f, "say hello") && fileContains(t, f, "second reply after the tool")
		}) {
			t.Errorf("no chat file of session %s still holds the conversation before the resume", id)
		}
	}
}

// dashed is a path as Claude Code spells it in directory names.
func dashed(path string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, path)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func fileContains(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), s)
}
