package realcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func TestCodexHookHash(t *testing.T) {
	// Hashes that Codex 0.169.0 itself accepted or wrote for the hook
	// logger's commands in a scratch home (see README.md): the SessionEnd
	// one is what "Trust all" recorded for a 30 s timeout, clamped to 3 s.
	tests := []struct {
		name, label string
		handler     map[string]any
		want        string
	}{
		{"session start", "session_start",
			map[string]any{"type": "command", "command": "/tmp/rcx/bin/hooklog /tmp/rcx/x1/hooks SessionStart", "timeout": 30.0},
			"sha256:b941a201c422ee573feb501140b3dc0aee78a9f76e3e0b3c370b5278ea876aa0"},
		{"session end clamped", "session_end",
			map[string]any{"type": "command", "command": "/tmp/rcx/bin/hooklog /tmp/rcx/x1/hooks SessionEnd", "timeout": 30.0},
			"sha256:9b11ca3e300a1948ff05da23eb6758d5227afbbc5a513b608b4a3ec6a9ae61b2"},
		{"session end at the limit", "session_end",
			map[string]any{"type": "command", "command": "/tmp/rcx/bin/hooklog /tmp/rcx/x1/hooks SessionEnd", "timeout": 3.0, "async": false},
			"sha256:9b11ca3e300a1948ff05da23eb6758d5227afbbc5a513b608b4a3ec6a9ae61b2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codexHookHash(tt.label, tt.handler)
			if err != nil || got != tt.want {
				t.Errorf("codexHookHash = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCodexHookHashRefuses(t *testing.T) {
	tests := []struct {
		name    string
		handler map[string]any
		want    string
	}{
		{"prompt hook", map[string]any{"type": "prompt", "command": "x"}, "only command"},
		{"empty command", map[string]any{"type": "command", "command": " "}, "missing or empty"},
		{"fractional timeout", map[string]any{"type": "command", "command": "x", "timeout": 1.5}, "whole number"},
		{"string async", map[string]any{"type": "command", "command": "x", "async": "no"}, "not a boolean"},
		{"status message", map[string]any{"type": "command", "command": "x", "statusMessage": "hi"}, `"statusMessage" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := codexHookHash("stop", tt.handler); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("codexHookHash error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestTrustCodexHooks(t *testing.T) {
	home := t.TempDir()
	hooks := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"},{"type":"command","command":"b","timeout":5}]}],
		"PreToolUse":[{"hooks":[{"type":"command","command":"c"}]}]}}`
	if err := os.WriteFile(filepath.Join(home, "hooks.json"), []byte(hooks), 0o644); err != nil {
		t.Fatal(err)
	}
	config := "model = \"m\"\n\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/old:stop:0:0\"]\ntrusted_hash = \"sha256:old\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := TrustCodexHooks(home); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model    string
		Projects map[string]map[string]string
		Hooks    struct {
			State map[string]map[string]string
		}
	}
	if err := toml.Unmarshal(b, &got); err != nil {
		t.Fatalf("config.toml after trusting is not TOML: %v\n%s", err, b)
	}
	if got.Model != "m" || got.Projects["/w"]["trust_level"] != "trusted" {
		t.Errorf("trusting lost other settings:\n%s", b)
	}
	src := filepath.Join(home, "hooks.json")
	for _, c := range []struct{ key, label, command string }{
		{src + ":stop:0:0", "stop", "a"},
		{src + ":stop:0:1", "stop", "b"},
		{src + ":pre_tool_use:0:0", "pre_tool_use", "c"},
	} {
		h := map[string]any{"type": "command", "command": c.command}
		if c.command == "b" {
			h["timeout"] = 5.0
		}
		want, _ := codexHookHash(c.label, h)
		if got.Hooks.State[c.key]["trusted_hash"] != want {
			t.Errorf("hooks.state[%q] = %v, want %s", c.key, got.Hooks.State[c.key], want)
		}
	}
	if got.Hooks.State["/old:stop:0:0"]["trusted_hash"] != "sha256:old" {
		t.Errorf("trusting dropped an existing trust entry:\n%s", b)
	}
}

func TestTrustCodexHooksRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, hooks, config, want string
	}{
		{"no hooks.json", "", "", "no such file"},
		{"not json", "{", "", "parse"},
		{"matcher", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`, "", `"matcher" is not supported`},
		{"bad config", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}`, "= nope", "parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.hooks != "" {
				os.WriteFile(filepath.Join(home, "hooks.json"), []byte(tt.hooks), 0o644)
			}
			if tt.config != "" {
				os.WriteFile(filepath.Join(home, "config.toml"), []byte(tt.config), 0o644)
			}
			err := TrustCodexHooks(home)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "trust codex hooks: ") {
				t.Fatalf("TrustCodexHooks error = %v, want one containing %q", err, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != tt.config {
				t.Errorf("a refused trust changed config.toml to %q", b)
			}
		})
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"PreToolUse": "pre_tool_use", "Stop": "stop", "SessionEnd": "session_end", "UserPromptSubmit": "user_prompt_submit"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		cli           CLI
		id            string
		newArgs, resu string
		newErr        string
	}{
		{Claude, "u1", "--session-id u1", "--resume u1", ""},
		{Gemini, "u1", "--session-id u1", "--resume u1", ""},
		{Codex, "", "--no-daemon", "", ""},
		{Codex, "u1", "", "--no-daemon resume u1", "cannot take a session id"},
		{Claude, "", "", "", "a session id is required"},
	}
	for _, tt := range tests {
		t.Run(string(tt.cli)+"/"+tt.id, func(t *testing.T) {
			s := &Setup{CLI: tt.cli}
			args, err := s.NewArgs(tt.id)
			if tt.newErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.newErr) {
					t.Errorf("NewArgs(%q) error = %v, want %q", tt.id, err, tt.newErr)
				}
			} else if err != nil || strings.Join(args, " ") != tt.newArgs {
				t.Errorf("NewArgs(%q) = %q, %v; want %q", tt.id, args, err, tt.newArgs)
			}
			if tt.resu != "" {
				if args, err := s.ResumeArgs(tt.id); err != nil || strings.Join(args, " ") != tt.resu {
					t.Errorf("ResumeArgs(%q) = %q, %v; want %q", tt.id, args, err, tt.resu)
				}
			}
			if _, err := s.ResumeArgs(""); err == nil {
				t.Error("ResumeArgs(\"\") succeeded")
			}
		})
	}
	if _, err := (&Setup{CLI: "vim"}).NewArgs("x"); err == nil {
		t.Error("NewArgs for an unknown CLI succeeded")
	}
}

func TestPackages(t *testing.T) {
	for _, c := range CLIs {
		p, err := c.Package()
		if err != nil || p.Name == "" || p.Version == "" || p.Bin != string(c) || c.API() == 0 {
			t.Errorf("%s: package %+v, %v; API %v", c, p, err, c.API())
		}
	}
	if _, err := CLI("cursor").Package(); err == nil {
		t.Error("Package for an unknown CLI succeeded")
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "rel/cache")
	got, err := CacheDir()
	if err != nil || !filepath.IsAbs(got) || !strings.HasSuffix(got, "rel/cache") {
		t.Errorf("CacheDir() with %s=rel/cache = %q, %v; want it made absolute", CacheEnv, got, err)
	}
	t.Setenv(CacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got, err := CacheDir(); err != nil || got != "/x/cache/muster-realcli" {
		t.Errorf("CacheDir() = %q, %v; want /x/cache/muster-realcli", got, err)
	}
}

func TestInstallFailsClearlyWithoutNPM(t *testing.T) {
	installMu.Lock()
	saved, had := installDone[Claude]
	installMu.Unlock()
	defer func() {
		if had {
			installMu.Lock()
			installDone[Claude] = saved
			installMu.Unlock()
		}
	}()
	pkg, _ := Claude.Package()
	tests := []struct {
		name        string
		warm        bool     // the cache already holds the package
		tools       []string // executables on PATH
		wantMissing string
	}{
		{"nothing", false, nil, "npm"},
		{"warm cache without npm", true, nil, "npm"},
		{"npm without node", false, []string{"npm"}, "node"},
		{"warm cache without node", true, []string{"npm"}, "node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache, path := t.TempDir(), t.TempDir()
			t.Setenv(CacheEnv, cache)
			t.Setenv("PATH", path)
			for _, tool := range tt.tools {
				os.WriteFile(filepath.Join(path, tool), []byte("#!/bin/sh\nexit 1\n"), 0o755)
			}
			if tt.warm {
				dir := filepath.Join(cache, filepath.FromSlash(pkg.Spec()))
				os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755)
				os.WriteFile(filepath.Join(dir, "node_modules", ".bin", pkg.Bin), nil, 0o755)
				os.WriteFile(filepath.Join(dir, completeMarker), nil, 0o644)
			}
			installMu.Lock()
			delete(installDone, Claude)
			installMu.Unlock()
			_, err := install(t.Context(), Claude, t.Logf)
			if err == nil || !strings.Contains(err.Error(), tt.wantMissing+" not found on PATH") || !strings.Contains(err.Error(), SkipEnv+"=1") {
				t.Fatalf("install: %v, want a clear error naming %s and %s", err, tt.wantMissing, SkipEnv)
			}
		})
	}
}

func TestHookRecords(t *testing.T) {
	dir := t.TempDir()
	s := &Setup{HookDir: dir}
	write := func(name, payload, env string) {
		os.WriteFile(filepath.Join(dir, name+".json"), []byte(payload), 0o644)
		os.WriteFile(filepath.Join(dir, name+".env"), []byte(env), 0o644)
	}
	write("1796037007546546561-8952-Stop", `{"session_id":"s1","n":1}`, "CLAUDE_PID=7\nTMUX_PANE=%0\n")
	write("1796037005434665069-8891-SessionStart", `{"session_id":"s1","source":"startup"}`, "")
	os.WriteFile(filepath.Join(dir, "1796037009000000000-9000-Stop.tmp"), []byte("{"), 0o644)
	hs, err := s.Hooks()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Events(hs), " "); got != "SessionStart Stop" {
		t.Fatalf("events %q, want them in time order without the partial record", got)
	}
	if hs[0].Field("source") != "startup" || hs[1].Field("n") != "" || hs[1].PID != 8952 || hs[1].Env["TMUX_PANE"] != "%0" {
		t.Errorf("hooks = %+v", hs)
	}
	write("17960370-bad", `{}`, "")
	if _, err := s.Hooks(); err == nil || !strings.Contains(err.Error(), "not <ns>-<pid>-<event>") {
		t.Errorf("a malformed record name: %v", err)
	}
	if _, err := (&Setup{}).Hooks(); err == nil {
		t.Error("Hooks without the logger succeeded")
	}
}

func TestHookLoggerScript(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "hooklog")
	if err := writeHookLogger(bin); err != nil {
		t.Fatal(err)
	}
	s := &Setup{Root: dir, HookDir: filepath.Join(dir, "hooks")}
	os.MkdirAll(s.HookDir, 0o755)
	cmd := s.hookCommand("PreToolUse")
	if !strings.HasPrefix(cmd, "'"+bin+"' '") || !strings.HasSuffix(cmd, "' PreToolUse") {
		t.Errorf("hook command %q", cmd)
	}
	if out, err := runShell(cmd, `{"tool_name":"Bash"}`, "CLAUDE_PID=42"); err != nil || out != "" {
		t.Fatalf("hook logger: %v, stdout %q (want none)", err, out)
	}
	hs, err := s.Hooks()
	if err != nil || len(hs) != 1 || hs[0].Event != "PreToolUse" || hs[0].Field("tool_name") != "Bash" || hs[0].Env["CLAUDE_PID"] != "42" {
		t.Errorf("recorded %+v, %v", hs, err)
	}
}

func TestVersionsOverride(t *testing.T) {
	t.Setenv(VersionsEnv, "codex@0.169.0, claude@2.1.328")
	for c, want := range map[CLI]string{Codex: "0.169.0", Claude: "2.1.328", Gemini: packages[Gemini].Version} {
		if p, err := c.Package(); err != nil || p.Version != want {
			t.Errorf("%s with %s set: %+v, %v; want version %s", c, VersionsEnv, p, err, want)
		}
	}
	for _, bad := range []string{"codex", "codex@", "@1.0", "vim@1.0", "codex@1.0,codex@2.0", "codex@../../x", "codex@-rf", "codex@1 0"} {
		if _, err := ParseVersions(bad); err == nil {
			t.Errorf("ParseVersions(%q) succeeded", bad)
		}
		t.Setenv(VersionsEnv, bad)
		if _, err := Codex.Package(); err == nil {
			t.Errorf("Package with %s=%q succeeded", VersionsEnv, bad)
		}
	}
}
