package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Gemini CLI 0.61.0, as observed in research/real-cli/gemini.
const (
	geminiVersion = "0.61.0"
	geminiModel   = "gemini-3.1-pro-preview"
	geminiAPIErr  = "[API Error: exception TypeError: fetch failed sending request]"
	// geminiRetries is how many BeforeModel/BeforeToolSelection pairs the
	// real CLI fired during a failing turn.
	geminiRetries = 10
)

type gemini struct {
	env  runEnv
	base string // $GEMINI_CLI_HOME, else ~
	dir  string // base/.gemini
	slug string // the project's id in projects.json
	// newSlug is set when the project is not registered yet.
	newSlug bool

	// flags
	sessionFlag  string
	resumeFlag   string
	model        string
	prompt       string
	listSessions bool

	// session
	sessionID string
	source    string
	resumed   string // the chat file resumed, if any
	startPath string // the chat file created at startup
	chat      string // the chat file being written (transcript_path)
	folder    string
}

var geminiValueFlags = map[string]bool{
	"--session-id": true, "-r": true, "--resume": true, "-m": true, "--model": true,
	"-i": true, "--prompt-interactive": true, "--approval-mode": true, "-e": true, "--extensions": true,
	"--include-directories": true, "--policy": true, "--admin-policy": true, "--allowed-tools": true,
	"--allowed-mcp-server-names": true, "-o": true, "--output-format": true, "--delete-session": true,
}

var geminiBoolFlags = map[string]bool{
	"--skip-trust": true, "-y": true, "--yolo": true, "-d": true, "--debug": true, "-s": true,
	"--sandbox": true, "--screen-reader": true, "--raw-output": true, "--accept-raw-output-risk": true,
	"--acp": true, "--experimental-acp": true, "--list-sessions": true, "-l": true, "--list-extensions": true,
}

var geminiIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func newGemini(args []string, env runEnv) (persona, error) {
	g := &gemini{env: env, model: geminiModel, source: "startup", folder: filepath.Base(env.cwd)}
	g.base = env.getenv("GEMINI_CLI_HOME")
	if g.base == "" {
		g.base = env.home
	}
	g.dir = filepath.Join(g.base, ".gemini")
	var unknown []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return nil, refuse(1, "fakeagent: gemini with a query runs non-interactively, which is not supported (use -i)")
		}
		name, val, hasVal := strings.Cut(arg, "=")
		switch {
		case name == "-h" || name == "--help":
			return nil, refuse(0, "Usage: gemini [options] [command]\n\nGemini CLI (fakeagent) - Launch an interactive CLI, use -p/--prompt for non-interactive mode")
		case name == "-v" || name == "--version":
			return nil, refuse(0, geminiVersion)
		case name == "-p" || name == "--prompt":
			return nil, refuse(1, "fakeagent: gemini --prompt runs non-interactively, which is not supported")
		case geminiValueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return nil, refuse(1, "Not enough arguments following: %s", strings.TrimLeft(name, "-"))
				}
				val = args[i+1]
				i++
			}
			switch name {
			case "--session-id":
				g.sessionFlag = val
			case "-r", "--resume":
				g.resumeFlag = val
			case "-m", "--model":
				g.model = val
			case "-i", "--prompt-interactive":
				g.prompt = val
			case "--delete-session":
				return nil, refuse(1, "fakeagent: gemini --delete-session is not supported")
			}
		case geminiBoolFlags[name]:
			if name == "--list-sessions" {
				g.listSessions = true
			}
		default:
			unknown = append(unknown, strings.TrimLeft(name, "-"))
		}
	}
	if len(unknown) == 1 {
		return nil, refuse(1, "Unknown argument: %s", unknown[0])
	}
	if len(unknown) > 1 {
		return nil, refuse(1, "Unknown arguments: %s", strings.Join(unknown, ", "))
	}
	g.slug, g.newSlug = g.projectSlug()
	if g.listSessions {
		return nil, refuse(0, "%s", g.sessionList())
	}
	if g.sessionFlag != "" && g.resumeFlag != "" {
		return nil, refuse(1, "fakeagent: gemini --session-id cannot be combined with --resume")
	}
	if g.sessionFlag != "" && !geminiIDRe.MatchString(g.sessionFlag) {
		return nil, refuse(1, "Invalid session ID %q: use letters, digits, '-' and '_' only.", g.sessionFlag)
	}
	if g.resumeFlag != "" {
		chats := g.chats()
		if len(chats) == 0 {
			return nil, refuse(1, "Error resuming session: No previous sessions found for this project.")
		}
		c := pickChat(chats, g.resumeFlag)
		if c == nil {
			return nil, refuse(1, "Error resuming session: Invalid session identifier %q.", g.resumeFlag)
		}
		g.resumed, g.sessionID, g.source = c.path, c.sessionID, "resume"
	} else {
		g.sessionID = g.sessionFlag
		if g.sessionID == "" {
			g.sessionID = newUUID()
		}
	}
	return g, nil
}

func (g *gemini) name() string { return "gemini" }

func (g *gemini) initialPrompt() string { return g.prompt }

// projectSlug returns the project's id from projects.json, or a new one:
// the lower-case base name of the directory, made unique.
func (g *gemini) projectSlug() (string, bool) {
	reg := g.projects()
	if s, ok := reg[g.env.cwd]; ok && s != "" && validSessionName(s) {
		return s, false
	}
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, filepath.Base(g.env.cwd))
	if base == "" || base == "." || base == ".." || base == "-" {
		base = "project"
	}
	taken := map[string]bool{}
	for _, s := range reg {
		taken[s] = true
	}
	slug := base
	for n := 1; taken[slug]; n++ {
		slug = base + "-" + strconv.Itoa(n)
	}
	return slug, true
}

func (g *gemini) projects() map[string]string {
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	data, err := os.ReadFile(filepath.Join(g.dir, "projects.json"))
	if err == nil {
		_ = json.Unmarshal(data, &reg)
	}
	if reg.Projects == nil {
		reg.Projects = map[string]string{}
	}
	return reg.Projects
}

func (g *gemini) tmpDir() string   { return filepath.Join(g.dir, "tmp", g.slug) }
func (g *gemini) chatsDir() string { return filepath.Join(g.tmpDir(), "chats") }

type chatFile struct {
	path      string
	sessionID string
	startTime string
}

// chats lists the project's chat files, oldest first.
func (g *gemini) chats() []chatFile {
	ents, err := os.ReadDir(g.chatsDir())
	if err != nil {
		return nil
	}
	var out []chatFile
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "session-") || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(g.chatsDir(), e.Name())
		meta := readGeminiMeta(p)
		if meta.SessionID == "" {
			continue
		}
		out = append(out, chatFile{path: p, sessionID: meta.SessionID, startTime: meta.StartTime})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].startTime < out[j].startTime })
	return out
}

// pickChat resolves "latest", a 1-based index or a session id. A session
// with several files (a resumed one) resolves to its oldest, which holds
// the conversation.
func pickChat(chats []chatFile, ident string) *chatFile {
	if ident == "latest" {
		last := chats[len(chats)-1]
		return pickChat(chats, last.sessionID)
	}
	if n, err := strconv.Atoi(ident); err == nil {
		if n >= 1 && n <= len(chats) {
			return &chats[n-1]
		}
		return nil
	}
	for i := range chats {
		if chats[i].sessionID == ident {
			return &chats[i]
		}
	}
	return nil
}

func (g *gemini) sessionList() string {
	chats := g.chats()
	if len(chats) == 0 {
		return "No previous sessions found for this project."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Available sessions for this project (%d):\n", len(chats))
	for i, c := range chats {
		fmt.Fprintf(&b, "  %d. %s [%s]\n", i+1, c.startTime, c.sessionID)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

type geminiMeta struct {
	SessionID string `json:"sessionId"`
	StartTime string `json:"startTime"`
}

func readGeminiMeta(path string) geminiMeta {
	var m geminiMeta
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	_ = json.Unmarshal([]byte(line), &m)
	return m
}

// geminiPatchLog rebuilds the message list of a chat recording: message
// lines are upserted by id, {"$set":{"messages":[…]}} replaces the list,
// {"$rewindTo":id} drops that message and everything after it.
func geminiPatchLog(data []byte) []json.RawMessage {
	var msgs []json.RawMessage
	var ids []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 || line == "" {
			continue // the first line is the session metadata
		}
		var rec struct {
			Set *struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"$set"`
			Rewind *string `json:"$rewindTo"`
			ID     string  `json:"id"`
			Type   string  `json:"type"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch {
		case rec.Set != nil:
			if rec.Set.Messages != nil {
				msgs, ids = nil, nil
				for _, m := range rec.Set.Messages {
					var h struct {
						ID string `json:"id"`
					}
					_ = json.Unmarshal(m, &h)
					msgs, ids = append(msgs, m), append(ids, h.ID)
				}
			}
		case rec.Rewind != nil:
			for j, id := range ids {
				if id == *rec.Rewind {
					msgs, ids = msgs[:j], ids[:j]
					break
				}
			}
		case rec.ID != "" && rec.Type != "":
			found := false
			for j, id := range ids {
				if id == rec.ID {
					msgs[j] = json.RawMessage(line)
					found = true
				}
			}
			if !found {
				msgs, ids = append(msgs, json.RawMessage(line)), append(ids, rec.ID)
			}
		}
	}
	return msgs
}

// geminiText is the text of a message's content, "" when it has none.
func geminiText(m json.RawMessage) (typ, text string) {
	var rec struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(m, &rec) != nil {
		return "", ""
	}
	var s string
	if json.Unmarshal(rec.Content, &s) == nil {
		return rec.Type, s
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(rec.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Text != nil {
				b.WriteString(*p.Text)
			}
		}
		return rec.Type, b.String()
	}
	return rec.Type, ""
}

func (g *gemini) loadHooks() ([]hookHandler, []string) {
	var all []hookHandler
	var warnings []string
	enabled := true
	disabled := map[string]bool{}
	paths := []string{filepath.Join(g.dir, "settings.json")}
	if ws := filepath.Join(g.env.cwd, ".gemini", "settings.json"); ws != paths[0] {
		paths = append(paths, ws)
	}
	if sys := g.env.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); sys != "" {
		paths = append(paths, sys)
	}
	for _, p := range paths {
		hs, doc, err := loadHookFile(p, time.Millisecond, 60*time.Second, true)
		if err != nil {
			warnings = append(warnings, "Error in "+p+": "+err.Error())
			continue
		}
		if doc.HooksConfig.Enabled != nil && !*doc.HooksConfig.Enabled {
			enabled = false
		}
		for _, n := range doc.HooksConfig.Disabled {
			disabled[n] = true
		}
		all = append(all, hs...)
	}
	if !enabled {
		return nil, warnings
	}
	var out []hookHandler
	for _, h := range all {
		if h.name == "" || !disabled[h.name] {
			out = append(out, h)
		}
	}
	return out, warnings
}

func (g *gemini) matches(h hookHandler, target string) bool {
	switch h.event {
	case "BeforeTool", "AfterTool":
		return matchRegexp(h.matcher, target)
	case "SessionStart", "SessionEnd", "Notification", "PreCompress":
		return matchExact(h.matcher, target)
	}
	return true
}

func (g *gemini) hookEnv(string) []string {
	return []string{
		"GEMINI_SESSION_ID=" + g.sessionID,
		"GEMINI_PROJECT_DIR=" + g.env.cwd,
		"GEMINI_CWD=" + g.env.cwd,
		"GEMINI_PLANS_DIR=" + filepath.Join(g.tmpDir(), g.sessionID, "plans"),
		"CLAUDE_PROJECT_DIR=" + g.env.cwd,
	}
}

// hookDone warns about output that is not JSON: Gemini CLI reads a hook's
// stdout as its JSON decision.
func (g *gemini) hookDone(a *agent, r hookResult) {
	out := strings.TrimSpace(string(r.stdout))
	if out != "" && !json.Valid([]byte(out)) {
		a.println(fmt.Sprintf("Warning: hook %q (%s) printed output that is not JSON", r.h.name, r.h.event))
	}
	if r.err != nil && r.exitCode != 0 {
		a.println(fmt.Sprintf("Hook execution for %s: hook %q failed: %v", r.h.event, r.h.name, r.err))
	}
}

func (g *gemini) fire(a *agent, event string, p obj) {
	target := ""
	for _, k := range []string{"tool_name", "source", "reason", "notification_type", "trigger"} {
		if v, ok := p.get(k); ok {
			target, _ = v.(string)
		}
	}
	a.fire(event, p, target)
}

func (g *gemini) base0(event string) obj {
	return o("session_id", g.sessionID, "transcript_path", g.chat, "cwd", g.env.cwd,
		"hook_event_name", event, "timestamp", isoMillis(time.Now()))
}

// title sets Gemini CLI's window title: an icon, a state word and the
// folder, padded with spaces to 80 columns.
func (g *gemini) title(a *agent, icon, state string) {
	t := icon + "  " + state + " (" + g.folder + ")"
	if n := 80 - len([]rune(t)); n > 0 {
		t += strings.Repeat(" ", n)
	}
	a.write("\x1b]0;" + t + "\x07")
}

func (g *gemini) sessionContext() string {
	return "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n" +
		"Today's date is " + time.Now().Format("Monday, January 2, 2006") + ".\n" +
		"The project's temporary directory is: " + g.tmpDir() + "\n- **Workspace Directories:**\n  - " +
		g.env.cwd + "\n</session_context>"
}

// newChat creates the chat file of a session with its metadata and
// session context. A file of the same name (same minute, same id) is kept
// and written to.
func (g *gemini) newChat(now time.Time) error {
	if err := os.MkdirAll(g.chatsDir(), 0o700); err != nil {
		return fmt.Errorf("create chats dir: %w", err)
	}
	id8 := g.sessionID
	if len(id8) > 8 {
		id8 = id8[:8]
	}
	g.chat = filepath.Join(g.chatsDir(), "session-"+now.UTC().Format("2006-01-02T15-04")+"-"+id8+".jsonl")
	if fileExists(g.chat) {
		return nil
	}
	sum := sha256.Sum256([]byte(g.env.cwd))
	ts := isoMillis(now)
	g.append(o("sessionId", g.sessionID, "projectHash", hex.EncodeToString(sum[:]), "startTime", ts,
		"lastUpdated", ts, "kind", "main"))
	ctx := o("id", randHex(16), "timestamp", ts, "type", "user", "content", []obj{o("text", g.sessionContext())})
	g.append(o("$set", o("messages", []obj{ctx}, "lastUpdated", ts)))
	return nil
}

func (g *gemini) append(r obj) {
	appendLine(g.chat, mustJSON(r))
}

func (g *gemini) touch() { g.append(o("$set", o("lastUpdated", isoMillis(time.Now())))) }

func (g *gemini) start(a *agent) error {
	if g.newSlug {
		if err := g.register(); err != nil {
			return err
		}
	}
	a.write(modesOn)
	a.println(" ███ GEMINI (fakeagent " + geminiVersion + ")")
	a.println("")
	if err := g.newChat(time.Now()); err != nil {
		return err
	}
	g.startPath = g.chat
	g.fire(a, "SessionStart", g.base0("SessionStart").with("source", g.source))
	if g.resumed != "" {
		// The resumed conversation is loaded into the old file, which is
		// written from now on (and named by later hooks).
		data, err := os.ReadFile(g.resumed)
		if err != nil {
			return fmt.Errorf("Error resuming session: %w", err)
		}
		msgs := geminiPatchLog(data)
		g.chat = g.resumed
		g.append(o("$set", o("sessionId", g.sessionID)))
		g.append(o("$set", o("messages", msgs, "lastUpdated", isoMillis(time.Now()))))
		for _, m := range msgs {
			switch typ, text := geminiText(m); {
			case text == "" || strings.HasPrefix(text, "<session_context>"):
			case typ == "user":
				a.println("> " + text)
			case typ == "gemini":
				a.println("✦ " + text)
			}
		}
	}
	g.title(a, "◇", "Ready")
	return nil
}

// register adds the project to projects.json.
func (g *gemini) register() error {
	reg := g.projects()
	reg[g.env.cwd] = g.slug
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return fmt.Errorf("register project: %w", err)
	}
	data, _ := json.MarshalIndent(map[string]any{"projects": reg}, "", "  ")
	if err := os.WriteFile(filepath.Join(g.dir, "projects.json"), data, 0o600); err != nil {
		return fmt.Errorf("register project: %w", err)
	}
	g.newSlug = false
	return nil
}

// logPrompt appends the prompt to tmp/<project>/logs.json.
func (g *gemini) logPrompt(line string) {
	p := filepath.Join(g.tmpDir(), "logs.json")
	var entries []json.RawMessage
	if data, err := os.ReadFile(p); err == nil {
		_ = json.Unmarshal(data, &entries)
	}
	n := 0
	for _, e := range entries {
		var h struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(e, &h) == nil && h.SessionID == g.sessionID {
			n++
		}
	}
	entries = append(entries, mustJSON(o("sessionId", g.sessionID, "messageId", n, "type", "user",
		"message", line, "timestamp", isoMillis(time.Now()))))
	data, _ := json.MarshalIndent(entries, "", "  ")
	_ = os.WriteFile(p, data, 0o600)
}

// llmRequest is the request the BeforeModel hooks see: the text messages
// of the conversation.
func (g *gemini) llmRequest() obj {
	var msgs []obj
	if data, err := os.ReadFile(g.chat); err == nil {
		for _, m := range geminiPatchLog(data) {
			typ, text := geminiText(m)
			if text == "" {
				continue
			}
			role := "user"
			if typ == "gemini" {
				role = "model"
			} else if typ != "user" {
				continue
			}
			// Consecutive turns of one role reach the model as one message.
			if n := len(msgs); n > 0 {
				if r, _ := msgs[n-1].get("role"); r == role {
					prev, _ := msgs[n-1].get("content")
					msgs[n-1].set("content", prev.(string)+"\n"+text)
					continue
				}
			}
			msgs = append(msgs, o("role", role, "content", text))
		}
	}
	return o("model", g.model, "messages", msgs, "config", o("temperature", 1, "topP", 0.95, "topK", 64))
}

func llmResponse(text string) obj {
	parts := []any{}
	if text != "" {
		parts = append(parts, text)
	}
	return o("text", text, "candidates", []obj{o("content", o("role", "model", "parts", parts),
		"finishReason", "STOP", "index", 0)},
		"usageMetadata", o("promptTokenCount", 10, "candidatesTokenCount", 2, "totalTokenCount", 12))
}

func geminiTokens() obj {
	return o("input", 10, "output", 2, "cached", 0, "thoughts", 0, "tool", 0, "total", 12)
}

// modelCall fires BeforeModel and BeforeToolSelection, then AfterModel.
func (g *gemini) modelCall(a *agent, text string) {
	req := g.llmRequest()
	g.fire(a, "BeforeModel", g.base0("BeforeModel").with("llm_request", req))
	g.fire(a, "BeforeToolSelection", g.base0("BeforeToolSelection").with("llm_request", req))
	g.fire(a, "AfterModel", g.base0("AfterModel").with("llm_request", req, "llm_response", llmResponse(text)))
}

func (g *gemini) turn(a *agent, line string, cmd command) {
	g.fire(a, "BeforeAgent", g.base0("BeforeAgent").with("prompt", line))
	g.logPrompt(line)
	g.append(o("id", newUUID(), "timestamp", isoMillis(time.Now()), "type", "user", "content", []obj{o("text", line)}))
	g.touch()
	g.fire(a, "PreCompress", g.base0("PreCompress").with("trigger", "auto"))
	g.title(a, "✦", "Working…")
	defer g.title(a, "◇", "Ready")
	switch cmd.verb {
	case "fail":
		for range geminiRetries {
			req := g.llmRequest()
			g.fire(a, "BeforeModel", g.base0("BeforeModel").with("llm_request", req))
			g.fire(a, "BeforeToolSelection", g.base0("BeforeToolSelection").with("llm_request", req))
			if r := a.pause(5 * time.Millisecond); r != waitDone {
				g.cancelled(a, r)
				return
			}
		}
		g.append(o("id", newUUID(), "timestamp", isoMillis(time.Now()), "type", "error", "content", geminiAPIErr))
		a.println("✕ " + geminiAPIErr)
		g.fire(a, "AfterAgent", g.base0("AfterAgent").with("prompt", line, "prompt_response", "[no response text]",
			"stop_hook_active", false))
		return
	case "sleep":
		req := g.llmRequest()
		g.fire(a, "BeforeModel", g.base0("BeforeModel").with("llm_request", req))
		g.fire(a, "BeforeToolSelection", g.base0("BeforeToolSelection").with("llm_request", req))
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			g.cancelled(a, r)
			return
		}
		g.fire(a, "AfterModel", g.base0("AfterModel").with("llm_request", req, "llm_response", llmResponse(cmd.arg)))
	case "tool", "run":
		if !g.tool(a, cmd) {
			return
		}
		cmd.arg = "ok"
		g.fire(a, "PreCompress", g.base0("PreCompress").with("trigger", "auto"))
		g.modelCall(a, cmd.arg)
	default:
		g.modelCall(a, cmd.arg)
	}
	g.append(o("id", newUUID(), "timestamp", isoMillis(time.Now()), "type", "gemini", "content", cmd.arg,
		"thoughts", []any{}, "tokens", geminiTokens(), "model", g.model))
	g.touch()
	a.println("✦ " + cmd.arg)
	g.fire(a, "AfterAgent", g.base0("AfterAgent").with("prompt", line, "prompt_response", cmd.arg,
		"stop_hook_active", false))
}

// cancelled ends a turn cut short: no AfterAgent.
func (g *gemini) cancelled(a *agent, r waitResult) {
	g.append(o("id", newUUID(), "timestamp", isoMillis(time.Now()), "type", "info", "content", "Request cancelled."))
	if r == waitInterrupted {
		a.println("ℹ Request cancelled.")
	}
}

// rootCommands lists the first word of each command in a shell line, as
// Gemini CLI's confirmation details do ("touch x && echo y" → "touch, echo").
func rootCommands(line string) string {
	var roots []string
	f := func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }
	for seg := range strings.FieldsFuncSeq(line, f) {
		if w := strings.Fields(seg); len(w) > 0 {
			roots = append(roots, w[0])
		}
	}
	return strings.Join(roots, ", ")
}

// tool runs a run_shell_command call; it reports whether the turn goes on.
func (g *gemini) tool(a *agent, cmd command) bool {
	msgID := newUUID()
	callID := "run_shell_command__run_shell_command_" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "_0"
	input := o("command", cmd.arg, "description", "run a command")
	g.modelCall(a, "")
	g.append(o("id", msgID, "timestamp", isoMillis(time.Now()), "type", "gemini", "content", "",
		"thoughts", []any{}, "tokens", geminiTokens(), "model", g.model))
	g.touch()
	g.fire(a, "BeforeTool", g.base0("BeforeTool").with("tool_name", "run_shell_command", "tool_input", input))
	status := "success"
	if cmd.verb == "tool" {
		g.fire(a, "Notification", g.base0("Notification").with("notification_type", "ToolPermission",
			"message", "Tool Confirm Shell Command requires execution",
			"details", o("type", "exec", "title", "Confirm Shell Command", "command", cmd.arg, "rootCommand", rootCommands(cmd.arg))))
		g.title(a, "✋", "Action Required")
		a.println("╭ Shell " + cmd.arg)
		ok, r := a.approve("│ Allow execution? [y/n] ", 0, nil)
		if r == waitHangup {
			g.cancelled(a, r)
			return false
		}
		g.title(a, "✦", "Working…")
		if !ok {
			status = "cancelled"
		}
	}
	if status == "success" && cmd.ms > 0 {
		if r := a.pause(time.Duration(cmd.ms) * time.Millisecond); r != waitDone {
			g.cancelled(a, r)
			return false
		}
	}
	result := "<untrusted_context>\nOutput: ok\n</untrusted_context>"
	resp := []obj{o("functionResponse", o("id", callID, "name", "run_shell_command", "response", o("output", result)))}
	call := o("id", callID, "name", "run_shell_command", "args", input, "result", resp, "status", status,
		"timestamp", isoMillis(time.Now()), "description", cmd.arg, "displayName", "Shell", "renderOutputAsMarkdown", false)
	g.append(o("id", msgID, "timestamp", isoMillis(time.Now()), "type", "gemini", "content", "",
		"thoughts", []any{}, "tokens", geminiTokens(), "model", g.model, "toolCalls", []obj{call}))
	if status == "cancelled" {
		a.println("ℹ Request cancelled.")
		return false
	}
	a.println("✓ Shell " + cmd.arg)
	g.fire(a, "AfterTool", g.base0("AfterTool").with("tool_name", "run_shell_command", "tool_input", input,
		"tool_response", o("llmContent", result, "returnDisplay", [][]obj{{o("text", "ok", "bold", false,
			"italic", false, "underline", false, "dim", false, "inverse", false, "isUninitialized", true,
			"fg", "", "bg", "")}})))
	g.append(o("id", newUUID(), "timestamp", isoMillis(time.Now()), "type", "user", "content", resp))
	g.touch()
	return true
}

func (g *gemini) clear(a *agent) {
	g.fire(a, "SessionEnd", g.base0("SessionEnd").with("reason", "clear"))
	g.sessionID = newUUID()
	g.resumed = ""
	if err := g.newChat(time.Now()); err != nil {
		a.println("✕ " + err.Error())
	}
	g.fire(a, "SessionStart", g.base0("SessionStart").with("source", "clear"))
	a.println("✦ Chat cleared.")
}

func (g *gemini) idle(*agent) {}

// end fires SessionEnd twice, as Gemini CLI 0.61 does on every exit.
func (g *gemini) end(a *agent, hangup bool) {
	g.fire(a, "SessionEnd", g.base0("SessionEnd").with("reason", "exit"))
	g.fire(a, "SessionEnd", g.base0("SessionEnd").with("reason", "exit"))
	a.write("\x1b]0;\x07" + modesOff)
	if !hangup {
		a.println("Agent powering down. Goodbye!")
		a.println("To resume this session: gemini --resume " + g.sessionID)
	}
}
