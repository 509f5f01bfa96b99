package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Codex CLI 0.169.0, as observed in research/real-cli/codex.
const (
	codexVersion = "0.169.0"
	codexModel   = "gpt-6.1-sol"
)

type codex struct {
	env  runEnv
	home string // $CODEX_HOME

	// flags
	noDaemon    bool
	noAltScreen bool
	bypassTrust bool
	resume      bool
	resumeID    string
	resumeLast  bool
	resumeAll   bool
	model       string
	prompt      string
	cd          string

	// session
	sessionID   string
	launched    time.Time
	rollout     string
	f           *os.File     // the rollout, with --no-daemon
	daemon      *codexClient // the app-server daemon, without --no-daemon
	open        bool         // the rollout is open (here or in the daemon)
	isDaemon    bool         // this process is the daemon
	ordinal     int
	started     bool   // SessionStart fired for this thread
	source      string // SessionStart source: startup, resume, clear
	folder      string
	lastMessage string
}

var codexValueFlags = map[string]bool{
	"-c": true, "--config": true, "--enable": true, "--disable": true, "-m": true, "--model": true,
	"-p": true, "--profile": true, "-s": true, "--sandbox": true, "-a": true, "--ask-for-approval": true,
	"-C": true, "--cd": true, "--add-dir": true, "-i": true, "--image": true, "--remote": true,
	"--remote-auth-token-env": true, "--local-provider": true,
}

var codexBoolFlags = map[string]bool{
	"--no-daemon": true, "--no-alt-screen": true, "--dangerously-bypass-hook-trust": true,
	"--dangerously-bypass-approvals-and-sandbox": true, "--search": true, "--oss": true,
	"--strict-config": true, "--last": true, "--all": true, "--include-non-interactive": true,
	"--worktree": true, "--approve-for-me": true,
}

var codexSubcommands = map[string]bool{
	"agents": true, "exec": true, "e": true, "review": true, "login": true, "logout": true, "mcp": true,
	"plugin": true, "app-server": true, "remote-control": true, "completion": true, "update": true,
	"doctor": true, "sandbox": true, "debug": true, "apply": true, "a": true, "queue": true,
	"archive": true, "delete": true, "migrate-rollouts": true, "migrate-nfs-db": true,
	"unarchive": true, "fork": true, "cloud": true, "exec-server": true, "features": true, "help": true,
}

func codexUnexpected(arg string) error {
	return refuse(2, "error: unexpected argument '%s' found\n\n  tip: to pass '%s' as a value, use '-- %s'\n\nUsage: codex [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.", arg, arg, arg)
}

func newCodex(args []string, env runEnv) (persona, error) {
	c := &codex{env: env, model: codexModel, launched: time.Now(), source: "startup"}
	c.home = env.getenv("CODEX_HOME")
	if c.home == "" {
		c.home = filepath.Join(env.home, ".codex")
	}
	var positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if len(positional) == 0 && !c.resume && arg == "resume" {
				c.resume = true
				continue
			}
			if len(positional) == 0 && !c.resume && codexSubcommands[arg] {
				return nil, refuse(2, "fakeagent: codex %s is not supported (interactive sessions and resume only)", arg)
			}
			positional = append(positional, arg)
			continue
		}
		name, val, hasVal := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "--") {
			name, hasVal = arg, false
		}
		switch {
		case name == "-h" || name == "--help":
			return nil, refuse(0, "Codex CLI (fakeagent)\n\nUsage: codex [OPTIONS] [PROMPT]\n       codex [OPTIONS] <COMMAND> [ARGS]")
		case name == "-V" || name == "--version":
			return nil, refuse(0, "codex-cli "+codexVersion)
		case codexValueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, refuse(2, "error: a value is required for '%s <VALUE>' but none was supplied\n\nFor more information, try '--help'.", name)
				}
				val = args[i+1]
				i++
			}
			switch name {
			case "-c", "--config":
				k, v, ok := strings.Cut(val, "=")
				if ok && strings.TrimSpace(k) == "model" {
					c.model = strings.Trim(strings.TrimSpace(v), `"'`)
				}
			case "-m", "--model":
				c.model = val
			case "-C", "--cd":
				c.cd = val
			}
		case codexBoolFlags[name]:
			switch name {
			case "--no-daemon":
				c.noDaemon = true
			case "--no-alt-screen":
				c.noAltScreen = true
			case "--dangerously-bypass-hook-trust":
				c.bypassTrust = true
			case "--last":
				c.resumeLast = true
			case "--all":
				c.resumeAll = true
			}
			if !c.resume && (name == "--last" || name == "--all" || name == "--include-non-interactive") {
				return nil, codexUnexpected(name) // resume's own flags
			}
		default:
			return nil, codexUnexpected(name)
		}
	}
	if c.cd != "" {
		if !filepath.IsAbs(c.cd) {
			c.cd = filepath.Join(env.cwd, c.cd)
		}
		if st, err := os.Stat(c.cd); err != nil || !st.IsDir() {
			return nil, refuse(1, "Error: failed to change directory to %s: No such file or directory (os error 2)", c.cd)
		}
		c.env.cwd = c.cd
	}
	c.folder = filepath.Base(c.env.cwd)
	if c.resume {
		if len(positional) > 0 && !c.resumeLast {
			c.resumeID = positional[0]
			positional = positional[1:]
		}
		if len(positional) > 1 {
			return nil, codexUnexpected(positional[1])
		}
		if len(positional) == 1 {
			c.prompt = positional[0]
		}
		switch {
		case c.resumeLast:
			c.rollout = c.latestRollout()
			if c.rollout == "" {
				return nil, refuse(1, "ERROR: No saved session found.")
			}
		case c.resumeID != "":
			c.rollout = findCodexRollout(filepath.Join(c.home, "sessions"), c.resumeID)
			if c.rollout == "" {
				return nil, refuse(1, "ERROR: No saved session found with ID %s. Run `codex resume` without an ID to choose from existing sessions.", c.resumeID)
			}
		default:
			return nil, refuse(1, "fakeagent: the codex resume picker is not supported; pass a session id or --last")
		}
		meta := readCodexMeta(c.rollout)
		c.sessionID = meta.ID
		if c.sessionID == "" {
			return nil, refuse(1, "ERROR: No saved session found with ID %s. Run `codex resume` without an ID to choose from existing sessions.", c.resumeID)
		}
		c.source = "resume"
	} else {
		if len(positional) > 1 {
			return nil, codexUnexpected(positional[1])
		}
		if len(positional) == 1 {
			c.prompt = positional[0]
		}
		c.sessionID = newUUIDv7()
	}
	return c, nil
}

func (c *codex) chdir() string { return c.cd }

func (c *codex) name() string { return "codex" }

func (c *codex) initialPrompt() string { return c.prompt }

// findCodexRollout finds sessions/YYYY/MM/DD/rollout-*-<id>.jsonl.
func findCodexRollout(dir, id string) string {
	if !validSessionName(id) || strings.ContainsAny(id, "*?[") {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "rollout-*-"+id+".jsonl"))
	sort.Strings(matches)
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

type codexMeta struct {
	ID  string `json:"id"`
	CWD string `json:"cwd"`
}

func readCodexMeta(path string) codexMeta {
	var m codexMeta
	_ = readJSONL(path, func(line json.RawMessage) {
		if m.ID != "" {
			return
		}
		var rec struct {
			Type    string    `json:"type"`
			Payload codexMeta `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "session_meta" {
			m = rec.Payload
		}
	})
	return m
}

// latestRollout is the newest rollout of this directory (of any with --all).
func (c *codex) latestRollout() string {
	matches, _ := filepath.Glob(filepath.Join(c.home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	sort.Slice(matches, func(i, j int) bool { return filepath.Base(matches[i]) > filepath.Base(matches[j]) })
	for _, m := range matches {
		if c.resumeAll || readCodexMeta(m).CWD == c.env.cwd {
			return m
		}
	}
	return ""
}

// loadHooks reads $CODEX_HOME/hooks.json. With FAKEAGENT_CODEX_HOOK_TRUST=1
// only hooks trusted in config.toml run, as in the real Codex, which asks
// for a review of new or changed hooks in /hooks.
func (c *codex) loadHooks() ([]hookHandler, []string) {
	if !c.noDaemon && !c.isDaemon {
		return nil, nil // the daemon runs them
	}
	path := filepath.Join(c.home, "hooks.json")
	hs, _, err := loadHookFile(path, time.Second, 600*time.Second, false)
	if err != nil {
		return nil, []string{"⚠ " + err.Error()}
	}
	for i := range hs {
		if hs[i].event == "SessionEnd" && hs[i].timeout > 3*time.Second {
			hs[i].timeout = 3 * time.Second // "clamping SessionEnd hook timeout to 3s"
		}
	}
	if !c.env.cfg.codexTrust || c.bypassTrust {
		return hs, nil
	}
	trusted := c.trustedKeys()
	var out []hookHandler
	untrusted := 0
	for _, h := range hs {
		key := fmt.Sprintf("%s:%s:%d:%d", path, snake(h.event), h.group, h.index)
		if trusted[key] {
			out = append(out, h)
		} else {
			untrusted++
		}
	}
	var warn []string
	if untrusted > 0 {
		warn = append(warn, fmt.Sprintf("Hooks need review: %d hooks are new or changed (hooks won't run until trusted in /hooks)", untrusted))
	}
	return out, warn
}

// trustedKeys reads the [hooks.state."<key>"] tables with a trusted_hash.
func (c *codex) trustedKeys() map[string]bool {
	keys := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(c.home, "config.toml"))
	if err != nil {
		return keys
	}
	var cfg struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		return keys
	}
	for k, v := range cfg.Hooks.State {
		if v.TrustedHash != "" {
			keys[k] = true
		}
	}
	return keys
}

func (c *codex) matches(h hookHandler, target string) bool {
	switch h.event {
	case "PreToolUse", "PostToolUse", "PermissionRequest", "SessionStart":
		return matchRegexp(h.matcher, target)
	}
	return true
}

func (c *codex) hookEnv(string) []string { return nil }

func (c *codex) hookDone(a *agent, r hookResult) {
	if r.err != nil {
		a.println(fmt.Sprintf("  ⚠ %s hook failed: %v", r.h.event, r.err))
	}
}

func (c *codex) fire(a *agent, event string, p obj) {
	target := ""
	for _, k := range []string{"tool_name", "source"} {
		if v, ok := p.get(k); ok {
			target, _ = v.(string)
		}
	}
	if c.daemon != nil {
		if err := c.daemon.call(daemonReq{Op: "hook", Event: event, Target: target, Cwd: c.env.cwd, Payload: mustJSON(p)}); err != nil {
			a.println("■ " + err.Error())
		}
		return
	}
	a.fire(event, p, target)
}

// status sends Codex's OSC 7501 agent status.
func (c *codex) status(a *agent, state string) {
	a.write("\x1b]7501;state=" + state + ":app=codex\x1b\\")
}

func (c *codex) title(a *agent, t string) { a.write("\x1b]0;" + t + "\x07") }

func (c *codex) start(a *agent) error {
	if strings.HasPrefix(c.home, os.TempDir()) {
		fmt.Fprintf(os.Stderr, "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir %q (codex_home: AbsolutePathBuf(%q))\n", os.TempDir(), c.home)
	}
	if !c.noDaemon {
		d, err := dialDaemon(c.home)
		if err != nil {
			return fmt.Errorf("ERROR: %w", err)
		}
		c.daemon = d
	}
	if !c.noAltScreen {
		a.write("\x1b[?1049h")
	}
	a.write(modesOn)
	c.title(a, c.folder)
	a.println("  >_ OpenAI Codex (v" + codexVersion + ")")
	a.println("     " + c.env.cwd)
	a.println("")
	if c.resume {
		// The rollout is opened at once and stays open: Muster's Codex
		// routing looks for it in /proc/<pid>/fd.
		if err := c.openRollout(false); err != nil {
			return fmt.Errorf("ERROR: failed to open rollout %s: %w", c.rollout, err)
		}
		c.ordinal = c.countRecords()
		c.redraw(a)
	}
	c.status(a, "idle")
	return nil
}

func (c *codex) countRecords() int {
	n := 0
	_ = readJSONL(c.rollout, func(json.RawMessage) { n++ })
	return n
}

// redraw prints the resumed conversation.
func (c *codex) redraw(a *agent) {
	_ = readJSONL(c.rollout, func(line json.RawMessage) {
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type    string `json:"type"`
				Role    string `json:"role"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "response_item" || rec.Payload.Type != "message" {
			return
		}
		for _, ct := range rec.Payload.Content {
			switch {
			case rec.Payload.Role == "user" && ct.Type == "input_text" && !strings.HasPrefix(ct.Text, "<"):
				a.println("› " + ct.Text)
			case rec.Payload.Role == "assistant" && ct.Type == "output_text":
				a.println("• " + ct.Text)
			}
		}
	})
}

// create starts the rollout of a new thread at its first prompt, as the
// real Codex does, and keeps it open for the life of the process.
func (c *codex) create() error {
	dir := filepath.Join(c.home, "sessions", c.launched.Format("2006"), c.launched.Format("01"), c.launched.Format("02"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create rollout dir: %w", err)
	}
	c.rollout = filepath.Join(dir, "rollout-"+c.launched.Format("2006-01-02T15-04-05")+"-"+c.sessionID+".jsonl")
	if err := c.openRollout(true); err != nil {
		return fmt.Errorf("create rollout: %w", err)
	}
	c.ordinal = 0
	source := "cli"
	if c.daemon != nil {
		source = "vscode" // what 0.169 recorded for threads run by its daemon
	}
	c.rec("session_meta", o("account_scoped", true, "session_id", c.sessionID, "id", c.sessionID,
		"timestamp", isoMillis(c.launched), "cwd", c.env.cwd, "runtime_workspace_roots", []string{c.env.cwd},
		"originator", "codex-tui", "cli_version", codexVersion, "source", source, "thread_source", "user",
		"model_provider", "openai", "base_instructions", o("text", "You are Codex, a coding agent. (fakeagent)"),
		"history_mode", "paginated", "context_window", o("window_id", newUUIDv7())))
	return nil
}

// openRollout opens the rollout for appending, here or in the daemon.
func (c *codex) openRollout(create bool) error {
	if c.daemon != nil {
		if err := c.daemon.call(daemonReq{Op: "open", Path: c.rollout, Create: create}); err != nil {
			return err
		}
		c.open = true
		return nil
	}
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(c.rollout, flags, 0o600)
	if err != nil {
		return err
	}
	c.f, c.open = f, true
	return nil
}

func (c *codex) closeRollout() {
	if c.daemon != nil && c.open {
		_ = c.daemon.call(daemonReq{Op: "close", Path: c.rollout})
	}
	if c.f != nil {
		_ = c.f.Close()
		c.f = nil
	}
	c.open = false
}

// rec appends one rollout record.
func (c *codex) rec(typ string, payload obj) {
	if !c.open {
		return
	}
	line := append(mustJSON(o("timestamp", isoMillis(time.Now()), "ordinal", c.ordinal, "type", typ, "payload", payload)), '\n')
	c.ordinal++
	var err error
	if c.daemon != nil {
		err = c.daemon.call(daemonReq{Op: "write", Path: c.rollout, Data: string(line)})
	} else {
		_, err = c.f.Write(line)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: write rollout: %v\n", err)
	}
}

func (c *codex) event(payload obj) { c.rec("event_msg", payload) }

func (c *codex) base() obj {
	return o("session_id", c.sessionID, "transcript_path", c.rollout, "cwd", c.env.cwd)
}

// turnBase is the common payload of turn-scoped hooks.
func (c *codex) turnBase(turnID, event string) obj {
	return o("session_id", c.sessionID, "turn_id", turnID, "transcript_path", c.rollout, "cwd", c.env.cwd,
		"hook_event_name", event, "model", c.model, "permission_mode", "default")
}

func (c *codex) turn(a *agent, line string, cmd command) {
	if !c.open {
		if err := c.create(); err != nil {
			a.println("■ " + err.Error())
			return
		}
	}
	if !c.started {
		c.started = true
		c.fire(a, "SessionStart", c.base().with("hook_event_name", "SessionStart", "model", c.model,
			"permission_mode", "default", "source", c.source))
	}
	turnID := newUUIDv7()
	now := time.Now()
	c.event(o("type", "task_started", "turn_id", turnID, "root_turn_id", turnID, "started_at", now.Unix(),
		"model_context_window", 258400, "collaboration_mode_kind", "default"))
	c.rec("turn_context", o("turn_id", turnID, "root_turn_id", turnID, "cwd", c.env.cwd,
		"approval_policy", "on-request", "approvals_reviewer", "user", "model", c.model, "summary", "none",
		"sandbox_policy", o("type", "workspace-write", "network_access", false)))
	c.rec("response_item", o("type", "message", "id", "msg_"+newUUIDv7(), "role", "user",
		"content", []obj{o("type", "input_text", "text", line)}))
	c.event(o("type", "item_completed", "thread_id", c.sessionID, "turn_id", turnID,
		"item", o("type", "UserMessage", "id", newUUIDv7(), "content", []obj{o("type", "text", "text", line, "text_elements", []any{})})))
	if err := os.MkdirAll(c.home, 0o700); err == nil {
		appendLine(filepath.Join(c.home, "history.jsonl"), mustJSON(o("session_id", c.sessionID, "ts", now.Unix(), "text", line)))
	}
	c.fire(a, "UserPromptSubmit", c.turnBase(turnID, "UserPromptSubmit").with("prompt", line))
	c.status(a, "working")
	c.title(a, "⠋ "+c.folder)
	switch cmd.verb {
	case "fail":
		if r := a.pause(50 * time.Millisecond); r != waitDone {
			c.aborted(a, turnID, now, r)
			return
		}
		msg := "stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)"
		c.event(o("type", "error", "message", msg))
		a.println("■ " + msg)
		c.status(a, "idle")
		c.title(a, c.folder)
		return
	case "sleep":
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			c.aborted(a, turnID, now, r)
			return
		}
	case "tool", "run":
		if !c.tool(a, cmd, turnID, now) {
			return
		}
		cmd.arg = "ok"
	}
	msgID := "msg_" + randHex(6)
	c.event(o("type", "token_count", "info", o("total_token_usage", codexUsage(), "last_token_usage", codexUsage(),
		"model_context_window", 258400)))
	c.event(o("type", "item_completed", "thread_id", c.sessionID, "turn_id", turnID,
		"item", o("type", "AgentMessage", "id", msgID, "content", []obj{o("type", "Text", "text", cmd.arg)})))
	c.rec("response_item", o("type", "message", "status", "completed", "id", msgID, "role", "assistant",
		"content", []obj{o("type", "output_text", "text", cmd.arg, "annotations", []any{})}))
	c.event(o("type", "task_complete", "root_turn_id", turnID, "turn_id", turnID, "last_agent_message", cmd.arg,
		"started_at", now.Unix(), "completed_at", time.Now().Unix(), "duration_ms", time.Since(now).Milliseconds()))
	a.println("• " + cmd.arg)
	c.lastMessage = cmd.arg
	c.fire(a, "Stop", c.turnBase(turnID, "Stop").with("stop_hook_active", false, "last_assistant_message", cmd.arg))
	c.status(a, "done")
	c.title(a, c.folder)
}

func codexUsage() obj {
	return o("input_tokens", 10, "cached_input_tokens", 0, "cache_write_input_tokens", 0, "output_tokens", 2,
		"reasoning_output_tokens", 0, "total_tokens", 12)
}

// aborted ends an interrupted turn: turn_aborted, no Stop.
func (c *codex) aborted(a *agent, turnID string, began time.Time, r waitResult) {
	c.rec("response_item", o("type", "message", "id", "msg_"+newUUIDv7(), "role", "user",
		"content", []obj{o("type", "input_text", "text", "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>")}))
	c.event(o("type", "turn_aborted", "root_turn_id", turnID, "turn_id", turnID, "reason", "interrupted",
		"started_at", began.Unix(), "completed_at", time.Now().Unix(), "duration_ms", time.Since(began).Milliseconds()))
	if r == waitInterrupted {
		a.println("■ Conversation interrupted - tell the model what to do differently.")
	}
	c.status(a, "idle")
	c.title(a, c.folder)
}

// tool runs an exec_command call; it reports whether the turn goes on.
func (c *codex) tool(a *agent, cmd command, turnID string, began time.Time) bool {
	callID := "call_" + randHex(6)
	ask := cmd.verb == "tool"
	args := o("cmd", cmd.arg)
	if ask {
		args = args.with("sandbox_permissions", "require_escalated", "justification", "run a command")
	}
	c.rec("response_item", o("type", "function_call", "status", "completed", "id", "fc_"+randHex(6),
		"name", "exec_command", "arguments", string(mustJSON(args)), "call_id", callID))
	c.fire(a, "PreToolUse", c.turnBase(turnID, "PreToolUse").with("tool_name", "Bash",
		"tool_input", o("command", cmd.arg), "tool_use_id", callID))
	a.println("• Running " + cmd.arg)
	if ask {
		c.fire(a, "PermissionRequest", c.turnBase(turnID, "PermissionRequest").with("tool_name", "Bash",
			"tool_input", o("command", cmd.arg, "description", "run a command")))
		a.write("\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\")
		c.title(a, "[ ! ] Action Required | "+c.folder)
		a.println("  Would you like to run the following command?")
		a.println("  $ " + cmd.arg)
		ok, r := a.approve("  Allow? [y/n] ", 0, nil)
		if r == waitHangup {
			c.aborted(a, turnID, began, r)
			return false
		}
		if !ok {
			c.rec("response_item", o("type", "function_call_output", "id", "fco_"+newUUIDv7(), "call_id", callID,
				"output", "aborted by user"))
			a.println("✗ You canceled the request to run " + cmd.arg)
			c.aborted(a, turnID, began, waitInterrupted)
			return false
		}
		c.status(a, "working")
	}
	if cmd.ms > 0 {
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			c.rec("response_item", o("type", "function_call_output", "id", "fco_"+newUUIDv7(), "call_id", callID,
				"output", "aborted by user"))
			c.aborted(a, turnID, began, r)
			return false
		}
	}
	out := "ok\n"
	c.event(o("type", "item_completed", "thread_id", c.sessionID, "turn_id", turnID,
		"item", o("type", "CommandExecution", "id", callID, "command", []string{"/bin/bash", "-lc", cmd.arg},
			"cwd", "file://"+c.env.cwd, "status", "completed", "aggregated_output", out, "exit_code", 0)))
	c.rec("response_item", o("type", "function_call_output", "id", "fco_"+newUUIDv7(), "call_id", callID,
		"output", "Process exited with code 0\nOutput:\n"+out))
	a.println("• Ran " + cmd.arg)
	a.println("  └ ok")
	c.fire(a, "PostToolUse", c.turnBase(turnID, "PostToolUse").with("tool_name", "Bash",
		"tool_input", o("command", cmd.arg), "tool_response", out, "tool_use_id", callID))
	return true
}

func (c *codex) clear(a *agent) {
	c.closeRollout()
	c.sessionID = newUUIDv7()
	c.launched = time.Now()
	c.rollout = ""
	c.started = false
	c.source = "clear"
	a.println("• Started a new conversation")
}

func (c *codex) idle(*agent) {}

func (c *codex) end(a *agent, hangup bool) {
	end := c.base().with("hook_event_name", "SessionEnd", "reason", "other")
	switch {
	case c.daemon != nil:
		// The daemon ends the thread a moment after the TUI has gone.
		if c.started {
			_ = c.daemon.call(daemonReq{Op: "end", Cwd: c.env.cwd, Payload: mustJSON(end)})
		}
	case c.started:
		c.fire(a, "SessionEnd", end)
	}
	c.closeRollout()
	if c.daemon != nil {
		c.daemon.close()
	}
	a.write("\x1b]7501;state=clear\x1b\\")
	a.write("\x1b]0;\x07" + modesOff)
	if !c.noAltScreen {
		a.write("\x1b[?1049l")
	}
	switch {
	case hangup || c.rollout == "":
	case c.daemon != nil:
		a.println("Disconnected from this task. Any running work continues.\nTo reconnect, run:\n  codex resume " + c.sessionID)
	default:
		a.println("To continue this session, run codex resume " + c.sessionID)
	}
}
