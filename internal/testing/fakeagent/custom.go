package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// custom is an agent that speaks Muster's agent protocol v1 (seed 000)
// instead of a provider's hooks: on a new or resumed session it pipes
// {"version":1,"event":"session_started","session_id":…} to its capture
// command (--hook, or $FAKEAGENT_HOOK), and it reports activity with OSC
// 9;4 progress and OSC 9 notifications.
type custom struct {
	env         runEnv
	home        string
	sessionFlag string
	resumeFlag  string
	hookCmds    []string
	prompt      string
	sessionID   string
	path        string
}

func newCustom(args []string, env runEnv) (persona, error) {
	c := &custom{env: env}
	c.home = env.getenv("FAKEAGENT_HOME")
	if c.home == "" {
		c.home = filepath.Join(env.home, ".fakeagent")
	}
	if h := env.getenv("FAKEAGENT_HOOK"); h != "" {
		c.hookCmds = append(c.hookCmds, h)
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			if c.prompt != "" {
				return nil, refuse(2, "fakeagent: unexpected argument %q", arg)
			}
			c.prompt = arg
			continue
		}
		name, val, hasVal := strings.Cut(arg, "=")
		switch name {
		case "-h", "--help":
			return nil, refuse(0, "usage: fakeagent [--persona NAME] [--session-id ID | --resume ID] [--hook CMD]... [--script FILE] [PROMPT]")
		case "--version":
			return nil, refuse(0, "fakeagent (custom)")
		case "--session-id", "--resume", "--hook", "--script":
			if !hasVal {
				if i+1 >= len(args) {
					return nil, refuse(2, "fakeagent: %s needs a value", name)
				}
				val = args[i+1]
				i++
			}
			switch name {
			case "--session-id":
				c.sessionFlag = val
			case "--resume":
				c.resumeFlag = val
			case "--hook":
				c.hookCmds = append(c.hookCmds, val)
			case "--script":
				c.env.cfg.script = val
			}
		default:
			return nil, refuse(2, "fakeagent: unknown flag %s", name)
		}
	}
	switch {
	case c.sessionFlag != "" && c.resumeFlag != "":
		return nil, refuse(2, "fakeagent: --session-id and --resume exclude each other")
	case c.resumeFlag != "":
		if !validSessionName(c.resumeFlag) || !fileExists(c.pathOf(c.resumeFlag)) {
			return nil, refuse(1, "fakeagent: no session %s to resume", c.resumeFlag)
		}
		c.sessionID = c.resumeFlag
	case c.sessionFlag != "":
		if !validSessionName(c.sessionFlag) {
			return nil, refuse(2, "fakeagent: invalid session id %q", c.sessionFlag)
		}
		c.sessionID = c.sessionFlag
	default:
		c.sessionID = newUUID()
	}
	c.path = c.pathOf(c.sessionID)
	return c, nil
}

func (c *custom) pathOf(id string) string { return filepath.Join(c.home, "sessions", id+".jsonl") }

func (c *custom) name() string { return "custom" }

func (c *custom) initialPrompt() string { return c.prompt }

func (c *custom) script() string { return c.env.cfg.script }

func (c *custom) loadHooks() ([]hookHandler, []string) {
	var hs []hookHandler
	for _, cmd := range c.hookCmds {
		hs = append(hs, hookHandler{event: "session_started", command: cmd, timeout: 10 * time.Second, source: "--hook"})
	}
	return hs, nil
}

func (c *custom) matches(hookHandler, string) bool { return true }

func (c *custom) hookEnv(string) []string { return nil }

func (c *custom) hookDone(a *agent, r hookResult) {
	if r.err != nil {
		a.println(fmt.Sprintf("fakeagent: capture hook failed: %v %s", r.err, strings.TrimSpace(string(r.stderr))))
	}
}

func (c *custom) capture(a *agent) {
	a.fire("session_started", o("version", 1, "event", "session_started", "session_id", c.sessionID), "")
}

func (c *custom) record(typ, text string) {
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return
	}
	appendLine(c.path, mustJSON(o("type", typ, "text", text, "timestamp", isoMillis(time.Now()))))
}

func (c *custom) start(a *agent) error {
	a.write("\x1b]0;fakeagent\x07")
	a.println("fakeagent (custom) session " + c.sessionID)
	c.capture(a)
	a.write("\x1b]9;4;0;\x07")
	return nil
}

func (c *custom) turn(a *agent, line string, cmd command) {
	c.record("user", line)
	a.write("\x1b]9;4;3;\x07")
	defer a.write("\x1b]9;4;0;\x07")
	switch cmd.verb {
	case "fail":
		c.record("error", "the model is unreachable")
		a.write("\x1b]9;4;2;\x07")
		a.println("error: the model is unreachable")
		return
	case "sleep":
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			c.record("info", "interrupted")
			return
		}
	case "tool", "run":
		a.println("$ " + cmd.arg)
		if cmd.verb == "tool" {
			a.write("\x1b]9;fakeagent needs your approval\x07")
			ok, r := a.approve("Allow? [y/n] ", 0, nil)
			if r == waitHangup || !ok {
				c.record("info", "denied")
				return
			}
		}
		if cmd.ms > 0 {
			if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
				c.record("info", "interrupted")
				return
			}
		}
		c.record("tool", cmd.arg)
		cmd.arg = "ok"
	}
	c.record("assistant", cmd.arg)
	a.println(cmd.arg)
}

func (c *custom) clear(a *agent) {
	c.sessionID = newUUID()
	c.path = c.pathOf(c.sessionID)
	a.println("new session " + c.sessionID)
	c.capture(a)
}

func (c *custom) idle(*agent) {}

func (c *custom) end(a *agent, hangup bool) {
	a.write("\x1b]0;\x07")
	if !hangup && fileExists(c.path) {
		a.println("resume with: fakeagent --resume " + c.sessionID)
	}
}
