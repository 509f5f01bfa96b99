package realcli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// API returns the wire format of c's model server.
func (c CLI) API() fakemodel.API {
	switch c {
	case Claude:
		return fakemodel.Anthropic
	case Codex:
		return fakemodel.OpenAI
	case Gemini:
		return fakemodel.Gemini
	}
	return 0
}

// APIKey is the fake API key every CLI is given. It is at most 20
// characters, so Claude Code's record of approved keys (the last 20
// characters of each) holds it whole.
const APIKey = "sk-fake-realcli-key"

// Options changes what New sets up.
type Options struct {
	// HookLog installs a hook command on the CLI's main events (HookEvents)
	// that records each payload under Setup.HookDir; Setup.Hooks reads them.
	HookLog bool
	// APIRetries, when above zero, is how many times the CLI sends a
	// failed model request again before it gives up on the turn. Claude
	// Code 2.1.332 reads CLAUDE_CODE_MAX_RETRIES for it (default 10, with
	// a backoff from 0.5 s doubling to 32 s: about 3 minutes for a 429 the
	// API does not mark x-should-retry: false); the other CLIs are left at
	// their own defaults.
	APIRetries int
}

// Setup is a hermetic world for running one CLI: everything it reads or
// writes lives under Root, and its model API is Server.
type Setup struct {
	CLI CLI
	// Bin is the CLI's executable.
	Bin string
	// Env is the whole environment to run the CLI (or Muster, which passes
	// it on) with; it inherits nothing else from the test process but PATH,
	// USER and LOGNAME.
	Env []string
	// Root holds everything below; it is removed when the test ends.
	Root string
	// Home is $HOME, with the CLI's first-run state in it.
	Home string
	// TmpDir is $TMPDIR; the CLIs keep sockets and lock files there.
	TmpDir string
	// Dir is the working directory to start the CLI in; the CLI trusts it.
	Dir string
	// MusterHome is $MUSTER_HOME, short enough for Unix socket paths.
	MusterHome string
	// Server is the fake model server the CLI calls.
	Server *fakemodel.Server
	// HookDir is where the hook logger writes, or "" without Options.HookLog.
	HookDir string

	mu sync.Mutex
	// answered lists the dialogs AnswerDialog answered, one per key.
	answered []string
}

// New installs cli (see Install), starts a fake model server for it and
// builds a hermetic home with the CLI's first-run dialogs answered: Claude
// Code's onboarding, folder trust, API key approval, permission mode and
// its auto mode and fullscreen offers;
// Codex's API key login, model provider, folder trust and hook trust;
// Gemini CLI's folder trust and auth type. Auto-update is off in each. When
// the test ends, New fails it if any process is still running with this
// HOME (after killing them) or if the CLI wrote its state outside Root.
func New(t testing.TB, cli CLI, opts Options) *Setup {
	t.Helper()
	bin := Install(t, cli)
	root, err := os.MkdirTemp("", "rc")
	if err != nil {
		t.Fatal(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	s := &Setup{
		CLI:        cli,
		Bin:        bin,
		Root:       root,
		Home:       filepath.Join(root, "home"),
		TmpDir:     filepath.Join(root, "tmp"),
		Dir:        filepath.Join(root, "work"),
		MusterHome: filepath.Join(root, "m"),
	}
	t.Cleanup(func() {
		if a := s.Answered(); len(a) > 0 {
			t.Logf("realcli: %s put up start-up dialogs that AnswerDialog answered (one line per key): %q", cli, a)
		}
		s.reap(t)
		s.checkOutside(t)
		if err := os.RemoveAll(root); err != nil {
			t.Errorf("realcli: remove %s: %v", root, err)
		}
	})
	for _, d := range []string{s.Home, s.TmpDir, s.Dir, s.MusterHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.Server = fakemodel.Start(t, cli.API())
	if opts.HookLog {
		s.HookDir = filepath.Join(root, "hooks")
		if err := os.MkdirAll(s.HookDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeHookLogger(filepath.Join(root, "bin", "hooklog")); err != nil {
			t.Fatal(err)
		}
	}
	s.Env = s.baseEnv()
	if opts.APIRetries > 0 && cli == Claude {
		s.Env = append(s.Env, fmt.Sprintf("CLAUDE_CODE_MAX_RETRIES=%d", opts.APIRetries))
	}
	var seed error
	switch cli {
	case Claude:
		seed = s.seedClaude()
	case Codex:
		seed = s.seedCodex()
	case Gemini:
		seed = s.seedGemini()
	}
	if seed != nil {
		t.Fatalf("realcli: seed %s home: %v", cli, seed)
	}
	return s
}

func (s *Setup) baseEnv() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Home,
		"TMPDIR=" + s.TmpDir,
		"LANG=C.UTF-8",
		"TERM=xterm-256color",
		"SHELL=/bin/sh",
		"XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"MUSTER_HOME=" + s.MusterHome,
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		env[5] = "SHELL=/bin/bash"
	}
	for _, k := range []string{"USER", "LOGNAME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	switch s.CLI {
	case Claude:
		env = append(env,
			"ANTHROPIC_BASE_URL="+s.Server.URL,
			"ANTHROPIC_API_KEY="+APIKey,
			"DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
		)
	case Codex:
		env = append(env,
			"CODEX_HOME="+filepath.Join(s.Home, ".codex"),
			"OPENAI_API_KEY="+APIKey,
		)
	case Gemini:
		env = append(env,
			"GEMINI_CLI_HOME="+s.Home,
			"GEMINI_API_KEY="+APIKey,
			"GOOGLE_GEMINI_BASE_URL="+s.Server.URL,
		)
	}
	return env
}

// Getenv returns the value of key in s.Env.
func (s *Setup) Getenv(key string) string {
	for _, kv := range s.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Command returns the command line that runs the CLI with args.
func (s *Setup) Command(args ...string) []string {
	return append([]string{s.Bin}, args...)
}

// NewArgs returns the arguments that start a new session. Claude Code and
// Gemini CLI take the session id the caller chose; Codex cannot, and gets
// --no-daemon so that its hooks run as children of the TUI and it exits
// with its pane. id must be "" for Codex.
func (s *Setup) NewArgs(id string) ([]string, error) {
	switch s.CLI {
	case Claude, Gemini:
		if id == "" {
			return nil, fmt.Errorf("%s new session: a session id is required", s.CLI)
		}
		return []string{"--session-id", id}, nil
	case Codex:
		if id != "" {
			return nil, fmt.Errorf("codex new session: codex cannot take a session id (got %q)", id)
		}
		return []string{"--no-daemon"}, nil
	}
	return nil, fmt.Errorf("unknown CLI %q", string(s.CLI))
}

// ResumeArgs returns the arguments that resume session id. Codex keeps
// --no-daemon: without it, resuming starts the detached app-server daemon.
func (s *Setup) ResumeArgs(id string) ([]string, error) {
	if id == "" {
		return nil, fmt.Errorf("%s resume: empty session id", s.CLI)
	}
	switch s.CLI {
	case Claude, Gemini:
		return []string{"--resume", id}, nil
	case Codex:
		return []string{"--no-daemon", "resume", id}, nil
	}
	return nil, fmt.Errorf("unknown CLI %q", string(s.CLI))
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeFile(path, append(b, '\n'), 0o644)
}

func writeFile(path string, b []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, perm)
}

// seedClaude answers Claude Code's first-run questions in ~/.claude.json
// the way Claude records the answers (REPORT.md §1): onboarding done,
// the working folder trusted, the API key approved. Auto-update is off, and
// the permission mode is "default" (shown as "manual"): 2.1.328 defaults to
// auto mode, which runs a harmless Bash command without asking.
//
// Two start-up offers of 2.1.328 are answered too, as the CLI records the
// answer (read in the bundle, bin/claude.exe; verified by running it):
//
//   - "Make auto mode your default permission mode?" The check
//     (shouldShowAutoDefaultNudge) is: hasCompletedOnboarding, no
//     hasSeenAutoDefaultNudge in ~/.claude.json, the feature gate
//     tengu_maple_pier (default on), permissions.defaultMode set in the
//     user settings to anything but "auto" while none of the project,
//     local, flag or policy settings sets it, and auto mode available.
//     Both answers set hasSeenAutoDefaultNudge: true. The offer waits
//     until the session is idle, so it came up some 10 s after the input
//     box, in about 2 of 3 runs. The mode stays in the user settings,
//     where a user keeps it: a project or flag setting would silence the
//     offer too, but the project settings would sit in the folder under
//     test and the flag settings of a Muster pane are Muster's own hook
//     settings (--settings). The key autoModeOptInDismissed seeded before
//     does nothing: the config migration deletes it.
//   - "Try the new fullscreen renderer?" "Not now" sets
//     fullscreenUpsellSeenCount to 3, the count after which it is not
//     offered again.
func (s *Setup) seedClaude() error {
	pkg, _ := Claude.Package()
	key := APIKey
	if len(key) > 20 {
		key = key[len(key)-20:]
	}
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"lastOnboardingVersion":  pkg.Version,
		"theme":                  "dark",
		"autoUpdates":            false,
		// "No, keep manual mode" to the auto mode offer.
		"hasSeenAutoDefaultNudge": true,
		// "Not now" to the fullscreen renderer offer.
		"fullscreenUpsellSeenCount": 3,
		"customApiKeyResponses":     map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects": map[string]any{
			s.Dir: map[string]any{"hasTrustDialogAccepted": true, "allowedTools": []string{}},
		},
	}
	if err := writeJSON(filepath.Join(s.Home, ".claude.json"), state); err != nil {
		return err
	}
	settings := map[string]any{
		"permissions": map[string]any{"defaultMode": "default"},
	}
	if s.HookDir != "" {
		hooks := map[string]any{}
		for _, ev := range HookEvents(Claude) {
			hooks[ev] = []any{map[string]any{
				"matcher": "",
				"hooks":   []any{map[string]any{"type": "command", "command": s.hookCommand(ev)}},
			}}
		}
		settings["hooks"] = hooks
	}
	return writeJSON(filepath.Join(s.Home, ".claude", "settings.json"), settings)
}

// seedCodex writes ~/.codex: auth.json as `codex login --with-api-key`
// writes it, and a config.toml with the fake model provider, the working
// folder trusted, update checks off, the TUI's one-time notices marked
// seen, and (with the hook logger) hooks.json with each hook trusted the
// way Codex records it when the user picks "Trust all".
func (s *Setup) seedCodex() error {
	home := filepath.Join(s.Home, ".codex")
	if err := writeJSON(filepath.Join(home, "auth.json"), map[string]any{"auth_mode": "apikey", "OPENAI_API_KEY": APIKey}); err != nil {
		return err
	}
	config := fmt.Sprintf(`model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"
supports_websockets = false

[projects.%q]
trust_level = "trusted"

[tui]
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 3
`, s.Server.URL+"/v1", s.Dir)
	if err := writeFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		return err
	}
	if s.HookDir == "" {
		return nil
	}
	hooks := map[string]any{}
	for _, ev := range HookEvents(Codex) {
		timeout := 30
		if ev == "SessionEnd" {
			timeout = codexSessionEndTimeout
		}
		hooks[ev] = []any{map[string]any{
			"hooks": []any{map[string]any{"type": "command", "command": s.hookCommand(ev), "timeout": timeout}},
		}}
	}
	if err := writeJSON(filepath.Join(home, "hooks.json"), map[string]any{"hooks": hooks}); err != nil {
		return err
	}
	return TrustCodexHooks(home)
}

// seedGemini writes ~/.gemini: settings with auto-update and usage
// statistics off and the API key auth type chosen, and the working folder
// in trustedFolders.json as the trust dialog records it.
func (s *Setup) seedGemini() error {
	home := filepath.Join(s.Home, ".gemini")
	settings := map[string]any{
		"general":     map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"security":    map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":     map[string]any{"usageStatisticsEnabled": false},
		"hooksConfig": map[string]any{"enabled": true},
	}
	if s.HookDir != "" {
		hooks := map[string]any{}
		for _, ev := range HookEvents(Gemini) {
			hooks[ev] = []any{map[string]any{
				"matcher": "*",
				"hooks": []any{map[string]any{
					"name": "log-" + ev, "type": "command", "command": s.hookCommand(ev), "timeout": 30000,
				}},
			}}
		}
		settings["hooks"] = hooks
	}
	if err := writeJSON(filepath.Join(home, "settings.json"), settings); err != nil {
		return err
	}
	return writeJSON(filepath.Join(home, "trustedFolders.json"), map[string]string{s.Dir: "TRUST_FOLDER"})
}

// HookEvents returns the events the hook logger records for c: every event
// that fires in a turn, a tool call or a session's start and end. Gemini's
// per-model-call events (BeforeModel, AfterModel, BeforeToolSelection,
// PreCompress) are left out: Gemini runs hooks one after another, and each
// costs a process start on every turn.
func HookEvents(c CLI) []string {
	switch c {
	case Claude:
		return []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification",
			"PostToolUse", "PostToolUseFailure", "PostToolBatch", "Stop", "StopFailure", "SubagentStop",
			"PreCompact", "SessionEnd"}
	case Codex:
		return []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
			"Stop", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "SessionEnd"}
	case Gemini:
		return []string{"SessionStart", "BeforeAgent", "BeforeTool", "Notification", "AfterTool", "AfterAgent", "SessionEnd"}
	}
	return nil
}

// dashed is a path as Claude Code spells it in project directory names.
var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

func dashed(path string) string { return nonAlnum.ReplaceAllString(path, "-") }
