package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
)

// hookHandler is one command hook from a provider configuration.
type hookHandler struct {
	event   string
	matcher string
	command string
	name    string // Gemini's handler name
	timeout time.Duration
	source  string // the file it came from, or "--settings"
	group   int    // index of its group in the event's array
	index   int    // index of the handler in its group
}

// hookDoc is the part of a settings or hooks file that holds hooks; Claude
// Code, Codex and Gemini CLI all use {"hooks":{"Event":[{"matcher",
// "hooks":[{"type":"command","command","timeout"}]}]}}.
type hookDoc struct {
	Hooks           map[string]json.RawMessage `json:"hooks"`
	DisableAllHooks bool                       `json:"disableAllHooks"` // Claude Code
	HooksConfig     struct {
		Enabled  *bool    `json:"enabled"`
		Disabled []string `json:"disabled"`
	} `json:"hooksConfig"` // Gemini CLI
}

type hookGroup struct {
	Matcher *string           `json:"matcher"`
	Hooks   []json.RawMessage `json:"hooks"`
}

type hookEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Name    string   `json:"name"`
	Timeout *float64 `json:"timeout"`
}

// parseHooks reads the command hooks of a settings document. unit is the
// unit of "timeout" (seconds for Claude Code and Codex, milliseconds for
// Gemini CLI) and def the timeout when none is given. A document whose
// "hooks" has the wrong shape is refused as a whole, as the real CLIs
// report a settings error and ignore the file's hooks; entries of other
// types (http, prompt, agent) are skipped.
func parseHooks(data []byte, source string, unit, def time.Duration) ([]hookHandler, hookDoc, error) {
	var doc hookDoc
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, doc, nil
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, doc, fmt.Errorf("parse %s: %w", source, err)
	}
	var out []hookHandler
	for event, raw := range doc.Hooks {
		var groups []hookGroup
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, doc, fmt.Errorf("parse %s: hooks.%s: %w", source, event, err)
		}
		for g, grp := range groups {
			for h, raw := range grp.Hooks {
				var e hookEntry
				if err := json.Unmarshal(raw, &e); err != nil {
					return nil, doc, fmt.Errorf("parse %s: hooks.%s[%d].hooks[%d]: %w", source, event, g, h, err)
				}
				if e.Type != "command" {
					continue
				}
				if strings.TrimSpace(e.Command) == "" {
					return nil, doc, fmt.Errorf("parse %s: hooks.%s[%d].hooks[%d]: empty command", source, event, g, h)
				}
				timeout := def
				if e.Timeout != nil && *e.Timeout > 0 && *e.Timeout < 1e9 {
					timeout = time.Duration(*e.Timeout * float64(unit))
				}
				m := ""
				if grp.Matcher != nil {
					m = *grp.Matcher
				}
				out = append(out, hookHandler{
					event: event, matcher: m, command: e.Command, name: e.Name,
					timeout: timeout, source: source, group: g, index: h,
				})
			}
		}
	}
	return out, doc, nil
}

// stripJSONC removes // and /* */ comments outside strings, as Gemini CLI
// does before parsing settings.json. Line ends are kept so that error
// offsets stay meaningful.
func stripJSONC(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/') {
				if b[i] == '\n' {
					out = append(out, '\n')
				}
				i++
			}
			i++ // the '/' of "*/"
		default:
			out = append(out, c)
		}
	}
	return out
}

var exactMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// matchClaude is Claude Code's matcher rule: empty or "*" matches
// everything, a matcher of letters, digits, '_' and '|' is a list of exact
// alternatives, anything else is a regular expression.
func matchClaude(matcher, value string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	if exactMatcher.MatchString(matcher) {
		for _, alt := range strings.Split(matcher, "|") {
			if alt == value {
				return true
			}
		}
		return false
	}
	return matchRegexp(matcher, value)
}

// matchRegexp is Codex's rule for every matcher and Gemini CLI's for tool
// matchers: empty or "*" matches everything, anything else is a regular
// expression (an invalid one matches nothing).
func matchRegexp(matcher, value string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		return false
	}
	return re.MatchString(value)
}

// matchExact is Gemini CLI's rule for lifecycle matchers.
func matchExact(matcher, value string) bool {
	return matcher == "" || matcher == "*" || matcher == value
}

// snake turns an event name into Codex's snake_case (PreToolUse →
// pre_tool_use), as used in its hook trust keys.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hookRun is one line of $FAKEAGENT_HOOK_LOG.
type hookRun struct {
	Persona  string `json:"persona"`
	Event    string `json:"event"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	Ms       int64  `json:"ms"`
}

// hookResult is what the agent learns from one hook command.
type hookResult struct {
	h        hookHandler
	exitCode int
	stdout   []byte
	stderr   []byte
	err      error
}

// fire runs the hooks configured for event whose matcher accepts target,
// with payload on stdin, as children of this process through sh -c, all at
// once (as the real CLIs do), and waits for them. Identical commands run
// once per event, as Claude Code and Codex deduplicate them.
func (a *agent) fire(event string, payload any, target string) []hookResult {
	if a.cfg.noHooks {
		return nil
	}
	var run []hookHandler
	seen := map[string]bool{}
	for _, h := range a.hooks[event] {
		if !a.p.matches(h, target) || seen[h.command] {
			continue
		}
		seen[h.command] = true
		run = append(run, h)
	}
	if len(run) == 0 {
		return nil
	}
	stdin := mustJSON(payload)
	env := append(os.Environ(), a.p.hookEnv(event)...)
	results := make([]hookResult, len(run))
	var wg sync.WaitGroup
	for i, h := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.runHook(h, stdin, env)
		}()
	}
	wg.Wait()
	for _, r := range results {
		a.p.hookDone(a, r)
	}
	return results
}

func (a *agent) runHook(h hookHandler, stdin []byte, env []string) hookResult {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", h.command)
	cmd.Dir = a.cwd
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	r := hookResult{h: h, stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.exitCode = ee.ExitCode()
	} else if err != nil {
		r.exitCode = -1
	}
	if ctx.Err() != nil {
		r.err = fmt.Errorf("hook timed out after %s", h.timeout)
	}
	a.logHook(hookRun{
		Persona: a.p.name(), Event: h.event, Command: h.command, ExitCode: r.exitCode,
		Stdout: string(r.stdout), Stderr: string(r.stderr), Ms: time.Since(start).Milliseconds(),
	})
	return r
}

func (a *agent) logHook(r hookRun) {
	if a.cfg.hookLog == "" {
		return
	}
	a.logMu.Lock()
	defer a.logMu.Unlock()
	appendLine(a.cfg.hookLog, mustJSON(r))
}

// appendLine appends one line to path in a single write, so that
// concurrent writers do not interleave.
func appendLine(path string, line []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
	}
}

// loadHookFile reads a settings or hooks file; a missing file has no hooks.
func loadHookFile(path string, unit, def time.Duration, jsonc bool) ([]hookHandler, hookDoc, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, hookDoc{}, nil
	}
	if err != nil {
		return nil, hookDoc{}, fmt.Errorf("read hooks: %w", err)
	}
	if jsonc {
		data = stripJSONC(data)
	}
	return parseHooks(data, path, unit, def)
}

// byEvent groups handlers by event, keeping their order.
func byEvent(hs []hookHandler) map[string][]hookHandler {
	m := map[string][]hookHandler{}
	for _, h := range hs {
		m[h.event] = append(m[h.event], h)
	}
	return m
}
