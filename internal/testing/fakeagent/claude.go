package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Claude Code 2.1.328, as observed in research/real-cli/claude.
const (
	claudeVersion = "2.1.328"
	claudeModel   = "claude-opus-5-5"
	claudeAPIErr  = "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)"
	// claudeLimitMsg is the plan's usage limit as Claude Code words it
	// (issue 25 quotes "5-hour limit reached ∙ resets 3pm").
	claudeLimitMsg = "5-hour limit reached ∙ resets 3pm (UTC)"
	claudeDenied   = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."
)

type claude struct {
	env       runEnv
	configDir string
	projDir   string

	// flags
	sessionFlag    string
	resumeFlag     string
	continueFlag   bool
	fork           bool
	settings       []string
	bare           bool
	permissionMode string
	model          string
	prompt         string
	extraFlags     []string // non-default flags, repeated in the exit banner

	// session
	sessionID  string
	resumed    bool // resumed at launch (SessionStart source resume)
	source     string
	transcript string
	f          *os.File
	promptID   string
	lastUUID   string
	promptIdx  int
	lastPrompt string
	envFileN   int
}

// claudeValueFlags take a value; claudeBoolFlags do not. Anything else
// starting with '-' is refused as Claude Code's commander does.
var claudeValueFlags = map[string]bool{
	"--session-id": true, "--settings": true, "--permission-mode": true, "--model": true,
	"-n": true, "--name": true, "--add-dir": true, "--agent": true, "--agents": true,
	"--append-system-prompt": true, "--system-prompt": true, "--allowedTools": true,
	"--allowed-tools": true, "--disallowedTools": true, "--disallowed-tools": true,
	"--mcp-config": true, "--fallback-model": true, "--effort": true, "--output-format": true,
	"--input-format": true, "--plugin-dir": true, "--setting-sources": true, "--debug-file": true,
	"--tools": true, "--betas": true, "--max-budget-usd": true, "--json-schema": true,
	"--permission-prompt-tool": true, "--autocompact": true,
}

var claudeBoolFlags = map[string]bool{
	"-c": true, "--continue": true, "--fork-session": true, "--bare": true,
	"--dangerously-skip-permissions": true, "--allow-dangerously-skip-permissions": true,
	"--verbose": true, "--ide": true, "--strict-mcp-config": true, "--safe-mode": true,
	"--chrome": true, "--no-chrome": true, "--brief": true, "-d": true, "--debug": true,
	"--disable-slash-commands": true, "--ax-screen-reader": true,
}

func newClaude(args []string, env runEnv) (persona, error) {
	c := &claude{env: env, permissionMode: "default", model: claudeModel}
	c.configDir = env.getenv("CLAUDE_CONFIG_DIR")
	if c.configDir == "" {
		c.configDir = filepath.Join(env.home, ".claude")
	}
	c.projDir = filepath.Join(c.configDir, "projects", claudeProjectDir(env.cwd))
	resumeGiven := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, val, hasVal := strings.Cut(arg, "=")
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if c.prompt == "" {
				c.prompt = arg
				continue
			}
			return nil, refuse(1, "error: too many arguments. Expected 1 argument but got %d.", 2)
		}
		if arg == "--" {
			if i+1 < len(args) && c.prompt == "" {
				c.prompt = args[i+1]
			}
			break
		}
		if !strings.HasPrefix(arg, "--") {
			name, hasVal = arg, false
		}
		switch {
		case name == "-h" || name == "--help":
			return nil, refuse(0, "Usage: claude [options] [command] [prompt]\n\nClaude Code (fakeagent) - starts an interactive session by default")
		case name == "-v" || name == "--version":
			return nil, refuse(0, claudeVersion+" (Claude Code)")
		case name == "-p" || name == "--print":
			return nil, refuse(1, "fakeagent: claude --print is not supported (interactive sessions only)")
		case name == "-r" || name == "--resume":
			resumeGiven = true
			switch {
			case hasVal:
				c.resumeFlag = val
			case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
				c.resumeFlag = args[i+1]
				i++
			default:
				return nil, refuse(1, "fakeagent: claude --resume without an id opens a picker, which is not supported")
			}
		case claudeValueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, refuse(1, "error: option '%s' argument missing", name)
				}
				val = args[i+1]
				i++
			}
			switch name {
			case "--session-id":
				c.sessionFlag = val
			case "--settings":
				c.settings = append(c.settings, val)
			case "--permission-mode":
				c.permissionMode = val
				c.extraFlags = append(c.extraFlags, name, val)
			case "--model":
				c.model = val
				c.extraFlags = append(c.extraFlags, name, val)
			}
		case claudeBoolFlags[name]:
			switch name {
			case "-c", "--continue":
				c.continueFlag = true
			case "--fork-session":
				c.fork = true
			case "--bare":
				c.bare = true
			case "--dangerously-skip-permissions":
				c.permissionMode = "bypassPermissions"
			}
		default:
			return nil, refuse(1, "error: unknown option '%s'", name)
		}
	}
	switch c.permissionMode {
	case "default", "acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan":
	default:
		return nil, refuse(1, "error: option '--permission-mode <mode>' argument '%s' is invalid. Allowed choices are acceptEdits, auto, bypassPermissions, manual, dontAsk, plan.", c.permissionMode)
	}
	if c.sessionFlag != "" {
		if _, err := uuid.Parse(c.sessionFlag); err != nil || len(c.sessionFlag) != 36 {
			return nil, refuse(1, "Error: Invalid session ID. Must be a valid UUID.")
		}
		if (resumeGiven || c.continueFlag) && !c.fork {
			return nil, refuse(1, "Error: --session-id can only be used with --continue or --resume if --fork-session is also specified.")
		}
	}
	switch {
	case resumeGiven:
		if _, err := os.Stat(c.pathOf(c.resumeFlag)); err != nil || !validSessionName(c.resumeFlag) {
			return nil, refuse(1, "No conversation found with session ID: %s", c.resumeFlag)
		}
		c.sessionID, c.resumed = c.resumeFlag, true
	case c.continueFlag:
		id := latestClaudeSession(c.projDir)
		if id == "" {
			return nil, refuse(1, "No conversation found to continue")
		}
		c.sessionID, c.resumed = id, true
	}
	if c.resumed && c.fork {
		// --fork-session: a copy of the conversation under a new id.
		from := c.sessionID
		c.sessionID = c.sessionFlag
		if c.sessionID == "" {
			c.sessionID = newUUID()
		}
		c.forkFrom(from)
	}
	if c.sessionID == "" {
		c.sessionID = c.sessionFlag
		if c.sessionID == "" {
			c.sessionID = newUUID()
		}
		if _, err := os.Stat(c.pathOf(c.sessionID)); err == nil {
			return nil, refuse(1, "Error: Session ID %s is already in use.", c.sessionID)
		}
	}
	c.transcript = c.pathOf(c.sessionID)
	c.source = "startup"
	if c.resumed {
		c.source = "resume"
	}
	return c, nil
}

// validSessionName keeps an id from naming a file outside the project
// directory.
func validSessionName(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".."
}

// claudeProjectDir is Claude Code's project directory name: every character
// that is not an ASCII letter or digit becomes '-' (one per UTF-16 unit).
func claudeProjectDir(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func (c *claude) pathOf(id string) string { return filepath.Join(c.projDir, id+".jsonl") }

// latestClaudeSession returns the most recently written session of the
// project directory.
func latestClaudeSession(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var best string
	var bestT time.Time
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if best == "" || info.ModTime().After(bestT) {
			best, bestT = strings.TrimSuffix(e.Name(), ".jsonl"), info.ModTime()
		}
	}
	return best
}

func (c *claude) forkFrom(from string) {
	data, err := os.ReadFile(c.pathOf(from))
	if err != nil {
		return
	}
	if err := os.WriteFile(c.pathOf(c.sessionID), data, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
	}
}

func (c *claude) name() string { return "claude" }

func (c *claude) initialPrompt() string { return c.prompt }

// loadHooks merges the hooks of every settings source Claude Code reads:
// the user settings, the project's .claude/settings.json and
// settings.local.json, and each --settings (a file or inline JSON).
func (c *claude) loadHooks() ([]hookHandler, []string) {
	if c.bare {
		return nil, nil
	}
	var all []hookHandler
	var warnings []string
	disabled := false
	add := func(hs []hookHandler, doc hookDoc, err error) {
		if err != nil {
			warnings = append(warnings, "Settings Error: "+err.Error())
			return
		}
		disabled = disabled || doc.DisableAllHooks
		all = append(all, hs...)
	}
	const def = 600 * time.Second
	add(loadHookFile(filepath.Join(c.configDir, "settings.json"), time.Second, def, false))
	add(loadHookFile(filepath.Join(c.env.cwd, ".claude", "settings.json"), time.Second, def, false))
	add(loadHookFile(filepath.Join(c.env.cwd, ".claude", "settings.local.json"), time.Second, def, false))
	for _, s := range c.settings {
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
			add(parseHooks([]byte(t), "--settings", time.Second, def))
			continue
		}
		data, err := os.ReadFile(s)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("Error: Settings file not found: %s", s))
			continue
		}
		add(parseHooks(data, s, time.Second, def))
	}
	if disabled {
		return nil, warnings
	}
	return all, warnings
}

// claudeMatchTarget is the payload field each event's matcher tests.
func claudeMatchTarget(event string, p obj) string {
	var k string
	switch event {
	case "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied":
		k = "tool_name"
	case "Notification":
		k = "notification_type"
	case "SessionStart":
		k = "source"
	case "SessionEnd":
		k = "reason"
	case "PreCompact", "PostCompact":
		k = "trigger"
	case "StopFailure":
		k = "error"
	default:
		return ""
	}
	v, _ := p.get(k)
	s, _ := v.(string)
	return s
}

func (c *claude) matches(h hookHandler, target string) bool {
	switch h.event {
	case "UserPromptSubmit", "Stop", "PostToolBatch", "MessageDisplay":
		return true // no matcher for these events
	}
	return matchClaude(h.matcher, target)
}

func (c *claude) hookEnv(event string) []string {
	env := []string{
		"CLAUDECODE=1",
		"CLAUDE_CODE_ENTRYPOINT=cli",
		"CLAUDE_CODE_SESSION_ATTENDED=1",
		"CLAUDE_CODE_SESSION_ID=" + c.sessionID,
		"CLAUDE_PID=" + strconv.Itoa(os.Getpid()),
		"CLAUDE_PROJECT_DIR=" + c.env.cwd,
	}
	switch event {
	case "SessionStart":
		env = append(env, "CLAUDE_ENV_FILE="+filepath.Join(c.configDir, "session-env", c.sessionID,
			fmt.Sprintf("sessionstart-hook-%d.sh", c.envFileN)))
		c.envFileN++
	case "PreToolUse", "PostToolUse", "PostToolBatch", "PermissionRequest", "Stop", "StopFailure":
		env = append(env, "CLAUDE_EFFORT=medium")
	}
	return env
}

func (c *claude) hookDone(a *agent, r hookResult) {
	if r.err == nil {
		return
	}
	msg := r.err.Error()
	if r.exitCode > 0 {
		msg = strings.TrimSpace(string(r.stderr))
		if msg == "" {
			msg = "exit code " + strconv.Itoa(r.exitCode)
		}
	}
	a.println(fmt.Sprintf("  ⎿  %s hook error: %s", r.h.event, msg))
}

// fire runs the hooks of event with Claude's matcher target.
func (c *claude) fire(a *agent, event string, p obj) {
	a.fire(event, p, claudeMatchTarget(event, p))
}

func (c *claude) base() obj {
	return o("session_id", c.sessionID, "transcript_path", c.transcript, "cwd", c.env.cwd)
}

func (c *claude) effort() obj { return o("level", "medium") }

func (c *claude) start(a *agent) error {
	a.write("\x1b]0;✳ Claude Code\x07" + modesOn)
	a.println(" ✻ Claude Code v" + claudeVersion)
	a.println("   Opus 5.5 · API Usage Billing")
	a.println("   " + c.env.cwd)
	a.println("")
	if c.resumed {
		c.appendRecords(
			o("type", "mode", "mode", "normal", "sessionId", c.sessionID),
			o("type", "permission-mode", "permissionMode", c.permissionMode, "sessionId", c.sessionID),
		)
	}
	p := c.base().with("hook_event_name", "SessionStart", "source", c.source)
	if c.source == "startup" {
		p.set("model", c.model)
	}
	c.fire(a, "SessionStart", p)
	c.progress(a, false)
	return nil
}

// open creates the transcript at the first prompt (Claude Code writes
// nothing for a session without a message) or opens it for appending.
func (c *claude) open() error {
	if c.f != nil {
		return nil
	}
	if err := os.MkdirAll(c.projDir, 0o700); err != nil {
		return fmt.Errorf("create transcript dir: %w", err)
	}
	_, statErr := os.Stat(c.transcript)
	f, err := os.OpenFile(c.transcript, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open transcript: %w", err)
	}
	c.f = f
	if errors.Is(statErr, os.ErrNotExist) {
		c.write(o("type", "mode", "mode", "normal", "sessionId", c.sessionID))
		c.write(o("type", "permission-mode", "permissionMode", c.permissionMode, "sessionId", c.sessionID))
	}
	return nil
}

func (c *claude) write(r obj) {
	if c.f == nil {
		return
	}
	if _, err := c.f.Write(append(mustJSON(r), '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: write transcript: %v\n", err)
	}
}

// appendRecords appends to an existing transcript without keeping it open.
func (c *claude) appendRecords(rs ...obj) {
	f, err := os.OpenFile(c.transcript, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	for _, r := range rs {
		_, _ = f.Write(append(mustJSON(r), '\n'))
	}
}

func (c *claude) common() obj {
	return o("userType", "external", "entrypoint", "cli", "cwd", c.env.cwd, "sessionId", c.sessionID,
		"version", claudeVersion, "gitBranch", "")
}

// chain returns the parent uuid for a new record and makes u the last.
func (c *claude) chain(u string) any {
	var parent any
	if c.lastUUID != "" {
		parent = c.lastUUID
	}
	c.lastUUID = u
	return parent
}

func (c *claude) userRecord(prompt string) {
	u := newUUID()
	now := isoMillis(time.Now())
	c.write(o("type", "file-history-snapshot", "messageId", u,
		"snapshot", o("messageId", u, "trackedFileBackups", o(), "timestamp", now), "isSnapshotUpdate", false))
	r := o("parentUuid", c.chain(u), "isSidechain", false, "promptId", c.promptID, "type", "user",
		"message", o("role", "user", "content", prompt), "uuid", u, "timestamp", now,
		"permissionMode", c.permissionMode, "origin", o("kind", "human"), "promptSource", "typed",
		"turnOrigin", "human", "turnPosition", o("promptIndex", c.promptIdx, "turnIndex", c.promptIdx))
	c.write(append(r, c.common()...))
}

func claudeUsage() obj {
	return o("input_tokens", 10, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0,
		"output_tokens", 5, "output_tokens_details", o("thinking_tokens", 0),
		"server_tool_use", o("web_search_requests", 0, "web_fetch_requests", 0),
		"service_tier", "standard", "cache_creation", o("ephemeral_1h_input_tokens", 0, "ephemeral_5m_input_tokens", 0))
}

// assistantRecord writes one content block of an assistant message and
// returns the record's uuid.
func (c *claude) assistantRecord(msgID string, block obj, stopReason string) string {
	u := newUUID()
	r := o("parentUuid", c.chain(u), "isSidechain", false,
		"message", o("id", msgID, "type", "message", "role", "assistant", "model", c.model,
			"content", []obj{block}, "stop_reason", stopReason, "stop_sequence", nil, "usage", claudeUsage()),
		"requestId", "req_"+randHex(12), "type", "assistant", "uuid", u, "timestamp", isoMillis(time.Now()))
	c.write(append(r, c.common()...))
	return u
}

func (c *claude) userText(text string) {
	u := newUUID()
	r := o("parentUuid", c.chain(u), "isSidechain", false, "promptId", c.promptID, "type", "user",
		"message", o("role", "user", "content", []obj{o("type", "text", "text", text)}),
		"uuid", u, "timestamp", isoMillis(time.Now()))
	c.write(append(r, c.common()...))
}

func (c *claude) turnDuration(start time.Time) {
	u := newUUID()
	r := o("parentUuid", c.chain(u), "isSidechain", false, "type", "system", "subtype", "turn_duration",
		"durationMs", time.Since(start).Milliseconds(), "timestamp", isoMillis(time.Now()), "uuid", u, "isMeta", false)
	c.write(append(r, c.common()...))
}

// history appends the prompt to ~/.claude/history.jsonl.
func (c *claude) history(prompt string) {
	if err := os.MkdirAll(c.configDir, 0o700); err != nil {
		return
	}
	appendLine(filepath.Join(c.configDir, "history.jsonl"), mustJSON(o("display", prompt, "pastedContents", o(),
		"timestamp", time.Now().UnixMilli(), "project", c.env.cwd, "sessionId", c.sessionID)))
}

// progress sends OSC 9;4 where Claude Code does (TERM_PROGRAM=ghostty).
func (c *claude) progress(a *agent, working bool) {
	if c.env.getenv("TERM_PROGRAM") != "ghostty" {
		return
	}
	if working {
		a.write(c.passthrough("\x1b]9;4;3;\x07"))
	} else {
		a.write(c.passthrough("\x1b]9;4;0;\x07"))
	}
}

// notifyOSC sends the desktop notification sequence Claude Code picks by
// TERM_PROGRAM (preferredNotifChannel "auto"); plain terminals get none.
func (c *claude) notifyOSC(a *agent, msg string) {
	switch c.env.getenv("TERM_PROGRAM") {
	case "ghostty":
		a.write(c.passthrough("\x1b]777;notify;Claude Code;" + msg + "\x07"))
	case "iTerm.app":
		a.write(c.passthrough("\x1b]9;" + msg + "\x07"))
	case "kitty":
		id := strconv.Itoa(os.Getpid())
		a.write(c.passthrough("\x1b]99;i=" + id + ":d=0:p=title;Claude Code\x1b\\"))
		a.write(c.passthrough("\x1b]99;i=" + id + ":p=body;" + msg + "\x1b\\"))
		a.write(c.passthrough("\x1b]99;i=" + id + ":d=1:a=focus;\x1b\\"))
	}
}

// passthrough wraps a sequence for tmux when TMUX is set, as Claude Code
// does.
func (c *claude) passthrough(seq string) string {
	if c.env.getenv("TMUX") == "" {
		return seq
	}
	return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

func (c *claude) turn(a *agent, line string, cmd command) {
	start := time.Now()
	if err := c.open(); err != nil {
		a.println("  ⎿  " + err.Error())
		return
	}
	c.promptID = newUUID()
	c.promptIdx++
	c.lastPrompt = line
	c.history(line)
	c.userRecord(line)
	c.progress(a, true)
	defer c.progress(a, false)
	c.fire(a, "UserPromptSubmit", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
		"hook_event_name", "UserPromptSubmit", "prompt", line))
	turnID := newUUID()
	switch cmd.verb {
	case "fail", "limit":
		if r := a.pause(50 * time.Millisecond); r != waitDone {
			c.interrupted(a, r)
			return
		}
		errType, text := "server_error", claudeAPIErr
		if cmd.verb == "limit" {
			errType, text = "rate_limit", claudeLimitMsg
			if at := c.env.getenv("FAKEAGENT_LIMIT_RESETS"); at != "" {
				text = "5-hour limit reached ∙ resets " + at
			}
		}
		u := newUUID()
		r := o("parentUuid", c.chain(u), "isSidechain", false, "type", "assistant", "uuid", u,
			"timestamp", isoMillis(time.Now()),
			"message", o("id", newUUID(), "model", "<synthetic>", "role", "assistant", "stop_reason", "stop_sequence",
				"stop_sequence", "", "type", "message", "usage", o("input_tokens", 0, "output_tokens", 0),
				"content", []obj{o("type", "text", "text", text)}))
		if cmd.verb == "fail" {
			r = r.with("apiError", "connection_failed")
		}
		r = r.with("error", errType, "isApiErrorMessage", true)
		c.write(append(r, c.common()...))
		a.println("● " + text)
		c.fire(a, "StopFailure", c.base().with("prompt_id", c.promptID, "effort", c.effort(),
			"hook_event_name", "StopFailure", "error", errType, "last_assistant_message", text))
		return
	case "sleep":
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			c.interrupted(a, r)
			return
		}
	case "tool", "run":
		if !c.tool(a, cmd, turnID) {
			return
		}
		cmd.arg = "ok"
	}
	c.reply(a, cmd.arg, turnID)
	c.turnDuration(start)
	c.fire(a, "Stop", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
		"effort", c.effort(), "hook_event_name", "Stop", "stop_hook_active", false,
		"last_assistant_message", cmd.arg, "background_tasks", []any{}, "session_crons", []any{}))
}

// reply shows and records the final assistant text.
func (c *claude) reply(a *agent, text, turnID string) {
	msgID := "msg_" + randHex(12)
	c.assistantRecord(msgID, o("type", "text", "text", text), "end_turn")
	a.println("● " + text)
	c.messageDisplay(a, turnID, msgID, text)
}

func (c *claude) messageDisplay(a *agent, turnID, msgID, text string) {
	c.fire(a, "MessageDisplay", c.base().with("prompt_id", c.promptID, "hook_event_name", "MessageDisplay",
		"turn_id", turnID, "message_id", msgID, "index", 0, "final", true, "delta", text))
}

// interrupted ends a turn cut short by Esc or a hangup: no Stop.
func (c *claude) interrupted(a *agent, r waitResult) {
	c.userText("[Request interrupted by user]")
	if r == waitInterrupted {
		a.println("  ⎿  Interrupted · What should Claude do instead?")
	}
}

// tool runs a Bash tool call; it reports whether the turn goes on.
func (c *claude) tool(a *agent, cmd command, turnID string) bool {
	toolID := "toolu_" + randHex(10)
	input := o("command", cmd.arg, "description", "Run a command")
	msgID := "msg_" + randHex(12)
	c.assistantRecord(msgID, o("type", "text", "text", "I'll run a command."), "tool_use")
	toolUUID := c.assistantRecord(msgID, o("type", "tool_use", "id", toolID, "name", "Bash", "input", input), "tool_use")
	a.println("● I'll run a command.")
	a.println("● Bash(" + cmd.arg + ")")
	c.fire(a, "PreToolUse", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
		"effort", c.effort(), "hook_event_name", "PreToolUse", "tool_name", "Bash", "tool_input", input,
		"tool_use_id", toolID))
	c.messageDisplay(a, turnID, msgID, "I'll run a command.")
	ask := cmd.verb == "tool" && c.permissionMode != "bypassPermissions"
	if ask {
		c.fire(a, "PermissionRequest", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
			"effort", c.effort(), "hook_event_name", "PermissionRequest", "tool_name", "Bash", "tool_input", input,
			"permission_suggestions", []obj{
				o("type", "addDirectories", "directories", []string{c.env.cwd}, "destination", "session"),
				o("type", "setMode", "mode", "acceptEdits", "destination", "session"),
			}))
		a.println(" Bash command")
		a.println("   " + cmd.arg)
		ok, r := a.approve(" Do you want to proceed? Allow? [y/n] ", a.cfg.notifyDelay, func() {
			c.notifyOSC(a, "Claude needs your permission")
			c.fire(a, "Notification", c.base().with("prompt_id", c.promptID, "hook_event_name", "Notification",
				"message", "Claude needs your permission", "notification_type", "permission_prompt"))
		})
		if r == waitHangup {
			c.interrupted(a, r)
			return false
		}
		if !ok {
			u := newUUID()
			rec := o("parentUuid", c.chain(u), "isSidechain", false, "promptId", c.promptID, "type", "user",
				"message", o("role", "user", "content", []obj{o("type", "tool_result", "content", claudeDenied,
					"is_error", true, "tool_use_id", toolID)}),
				"uuid", u, "timestamp", isoMillis(time.Now()), "toolUseResult", "User rejected tool use",
				"toolDenialKind", "user-rejected", "toolDenialBeforeRun", true, "sourceToolAssistantUUID", toolUUID)
			c.write(append(rec, c.common()...))
			c.userText("[Request interrupted by user for tool use]")
			a.println("  ⎿  Interrupted · What should Claude do instead?")
			return false
		}
	}
	began := time.Now()
	if cmd.ms > 0 {
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			c.fire(a, "PostToolUseFailure", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
				"effort", c.effort(), "hook_event_name", "PostToolUseFailure", "tool_name", "Bash", "tool_input", input,
				"tool_use_id", toolID, "error", "Command interrupted", "is_interrupt", true,
				"duration_ms", time.Since(began).Milliseconds()))
			c.interrupted(a, r)
			return false
		}
	}
	out := "ok"
	resp := o("stdout", out, "stderr", "", "interrupted", false, "isImage", false, "noOutputExpected", false)
	u := newUUID()
	decision := o("decision", "accept", "source", "user_temporary", "grantScope", "once", "reasonCode", "unknown")
	if !ask {
		decision = o("decision", "accept", "source", "config", "grantScope", "once", "reasonCode", "unknown")
	}
	rec := o("parentUuid", c.chain(u), "isSidechain", false, "promptId", c.promptID, "type", "user",
		"message", o("role", "user", "content", []obj{o("tool_use_id", toolID, "type", "tool_result", "content", out, "is_error", false)}),
		"uuid", u, "timestamp", isoMillis(time.Now()), "toolUseResult", resp, "sandboxed", false,
		"sourceToolAssistantUUID", toolUUID, "permissionDecision", decision)
	c.write(append(rec, c.common()...))
	a.println("  ⎿  " + out)
	c.fire(a, "PostToolUse", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
		"effort", c.effort(), "hook_event_name", "PostToolUse", "tool_name", "Bash", "tool_input", input,
		"tool_response", resp, "tool_use_id", toolID, "duration_ms", time.Since(began).Milliseconds()))
	c.fire(a, "PostToolBatch", c.base().with("prompt_id", c.promptID, "permission_mode", c.permissionMode,
		"effort", c.effort(), "hook_event_name", "PostToolBatch", "tool_calls", []obj{
			o("tool_name", "Bash", "tool_input", input, "tool_use_id", toolID, "tool_response", out),
		}))
	return true
}

func (c *claude) idle(a *agent) {
	c.notifyOSC(a, "Claude is waiting for your input")
	p := c.base()
	if c.promptID != "" {
		p.set("prompt_id", c.promptID)
	}
	c.fire(a, "Notification", p.with("hook_event_name", "Notification",
		"message", "Claude is waiting for your input", "notification_type", "idle_prompt"))
}

// sessionEnd fires SessionEnd and closes the transcript.
func (c *claude) sessionEnd(a *agent, reason string) {
	if c.f != nil && c.lastPrompt != "" {
		c.write(o("type", "last-prompt", "lastPrompt", c.lastPrompt, "leafUuid", c.lastUUID, "sessionId", c.sessionID))
	}
	p := c.base()
	if c.promptID != "" {
		p.set("prompt_id", c.promptID)
	}
	c.fire(a, "SessionEnd", p.with("hook_event_name", "SessionEnd", "reason", reason))
	if c.f != nil {
		_ = c.f.Close()
		c.f = nil
	}
}

func (c *claude) clear(a *agent) {
	c.sessionEnd(a, "clear")
	c.sessionID = newUUID()
	c.transcript = c.pathOf(c.sessionID)
	c.promptID, c.lastUUID, c.lastPrompt, c.promptIdx = "", "", "", 0
	c.source = "clear"
	a.println("  ⎿  (no content)")
	c.fire(a, "SessionStart", c.base().with("hook_event_name", "SessionStart", "source", "clear"))
}

func (c *claude) end(a *agent, hangup bool) {
	reason := "prompt_input_exit"
	if hangup {
		reason = "other"
	}
	hadTranscript := c.f != nil || fileExists(c.transcript)
	c.sessionEnd(a, reason)
	if !hangup && hadTranscript {
		flags := strings.Join(append(append([]string{}, c.extraFlags...), "--resume", c.sessionID), " ")
		a.println("Resume this session with:\nclaude " + flags)
	}
	a.write("\x1b]0;\x07" + modesOff)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readJSONL calls f with each JSON line of path; bad lines are skipped.
func readJSONL(path string, f func(json.RawMessage)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.TrimSpace(line) == "" || !json.Valid([]byte(line)) {
			continue
		}
		f(json.RawMessage(line))
	}
	return nil
}
