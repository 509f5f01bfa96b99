package hookinstall

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/provider/codex"
)

const musterBin = "/opt/muster/bin/muster"

// testEnv returns an Env whose home and provider homes are temp dirs.
func testEnv(t *testing.T, vars map[string]string) Env {
	t.Helper()
	home := t.TempDir()
	return Env{Home: home, Getenv: func(k string) string { return vars[k] }}
}

func mustPath(t *testing.T, env Env, provider string) string {
	t.Helper()
	p, err := ConfigPath(env, provider)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readOrNil(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dirNames lists a directory, to catch leftover temp files.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		original []byte // nil: the file does not exist
		mode     fs.FileMode
	}{
		{"claude realistic", "claude", fixture(t, "claude-settings.json"), 0o600},
		{"claude crlf", "claude", fixture(t, "claude-settings-crlf.json"), 0o644},
		{"claude compact", "claude", fixture(t, "claude-compact.json"), 0o644},
		{"claude empty hooks object", "claude", fixture(t, "claude-empty-hooks.json"), 0o644},
		{"claude empty object", "claude", []byte("{}"), 0o644},
		{"claude empty file", "claude", []byte{}, 0o644},
		{"claude blank file", "claude", []byte("\n\n"), 0o644},
		{"claude missing file", "claude", nil, 0},
		{"codex other hooks", "codex", fixture(t, "codex-hooks.json"), 0o644},
		{"codex missing file", "codex", nil, 0},
		{"gemini jsonc", "gemini", fixture(t, "gemini-settings.jsonc"), 0o644},
		{"gemini missing file", "gemini", nil, 0},
		{"cursor tabs", "cursor", fixture(t, "cursor-hooks.json"), 0o644},
		{"cursor without version", "cursor", []byte(`{"hooks": {}}`), 0o644},
		{"cursor missing file", "cursor", nil, 0},
		{"opencode missing file", "opencode", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, nil)
			path := mustPath(t, env, tt.provider)
			if tt.original != nil {
				writeFile(t, path, tt.original, tt.mode)
			}
			if got := Status(env, tt.provider, musterBin); got.State != NotInstalled {
				t.Fatalf("status before setup = %+v", got)
			}

			r, err := Setup(env, tt.provider, musterBin)
			if err != nil {
				t.Fatalf("setup: %v", err)
			}
			if !r.Changed || r.Created != (tt.original == nil) {
				t.Errorf("setup result = %+v", r)
			}
			first := readOrNil(t, path)
			if first == nil {
				t.Fatal("setup wrote nothing")
			}
			if tt.provider != "opencode" {
				var v map[string]any
				if err := json.Unmarshal([]byte(mustClean(t, first, tt.provider == "gemini")), &v); err != nil {
					t.Fatalf("setup wrote invalid JSON: %v\n%s", err, first)
				}
				if !strings.Contains(string(first), CaptureCommand(musterBin, tt.provider)[:20]) {
					t.Errorf("no capture command in\n%s", first)
				}
			}
			if tt.original != nil {
				if r.Backup != path+BackupSuffix {
					t.Errorf("backup = %q", r.Backup)
				}
				if b := readOrNil(t, path+BackupSuffix); string(b) != string(tt.original) {
					t.Errorf("backup holds %q, want the original", b)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tt.mode {
					t.Errorf("mode after setup = %v, %v; want %v", fi.Mode().Perm(), err, tt.mode)
				}
				if strings.Contains(string(tt.original), "\r\n") && strings.Count(string(first), "\n") != strings.Count(string(first), "\r\n") {
					t.Errorf("CRLF file got bare LF lines:\n%q", first)
				}
			}
			if got := Status(env, tt.provider, musterBin); got.State != Installed || got.Version != MarkerVersion {
				t.Errorf("status after setup = %+v", got)
			}

			r2, err := Setup(env, tt.provider, musterBin)
			if err != nil {
				t.Fatalf("second setup: %v", err)
			}
			if r2.Changed || r2.Backup != "" {
				t.Errorf("second setup result = %+v", r2)
			}
			if second := readOrNil(t, path); string(second) != string(first) {
				t.Errorf("second setup changed bytes:\n%s", cmp.Diff(string(first), string(second)))
			}

			rr, err := Remove(env, tt.provider)
			if err != nil {
				t.Fatalf("remove: %v", err)
			}
			if !rr.Changed || rr.Deleted != (tt.original == nil) {
				t.Errorf("remove result = %+v", rr)
			}
			after := readOrNil(t, path)
			if tt.original == nil {
				if after != nil {
					t.Errorf("remove left a file we created:\n%s", after)
				}
			} else if string(after) != string(tt.original) {
				t.Errorf("remove did not restore the original (-want +got):\n%s", cmp.Diff(string(tt.original), string(after)))
			}
			if got := Status(env, tt.provider, musterBin); got.State != NotInstalled {
				t.Errorf("status after remove = %+v", got)
			}
			if rr, err := Remove(env, tt.provider); err != nil || rr.Changed {
				t.Errorf("second remove = %+v, %v", rr, err)
			}
			for _, n := range dirNames(t, filepath.Dir(path)) {
				if strings.Contains(n, ".muster-") && !strings.HasSuffix(n, BackupSuffix) {
					t.Errorf("leftover temp file %s", n)
				}
			}
		})
	}
}

func mustClean(t *testing.T, b []byte, jsonc bool) string {
	t.Helper()
	if !jsonc {
		return string(b)
	}
	s, err := blankComments(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSetupGolden pins the exact text inserted into a realistic file.
func TestSetupGolden(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "cursor")
	writeFile(t, path, fixture(t, "cursor-hooks.json"), 0o644)
	if _, err := Setup(env, "cursor", musterBin); err != nil {
		t.Fatal(err)
	}
	got := string(readOrNil(t, path))
	want := "{\n\t\"version\": 1,\n\t\"hooks\": {\n\t\t\"afterFileEdit\": [\n\t\t\t{\n\t\t\t\t\"command\": \"./hooks/format.sh\"\n\t\t\t}\n\t\t],\n" +
		"\t\t\"stop\": [\n\t\t\t{\n\t\t\t\t\"command\": \"./hooks/notify.sh\"\n\t\t\t},\n" +
		"\t\t\t{\n\t\t\t\t\"command\": \"/opt/muster/bin/muster hook event cursor # muster-hooks:v1\"\n\t\t\t}\n\t\t],\n" +
		"\t\t\"sessionStart\": [\n" +
		"\t\t\t{\n\t\t\t\t\"command\": \"/opt/muster/bin/muster hook capture --provider cursor --process-id \\\"$PPID\\\" # muster-hooks:v1\"\n\t\t\t},\n" +
		"\t\t\t{\n\t\t\t\t\"command\": \"/opt/muster/bin/muster hook event cursor # muster-hooks:v1\"\n\t\t\t}\n\t\t],\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("setup output does not start as expected (-want +got):\n%s", cmp.Diff(want, got[:min(len(got), len(want))]))
	}
}

func TestSetupKeepsLaterUserEdits(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "claude")
	writeFile(t, path, fixture(t, "claude-settings.json"), 0o644)
	if _, err := Setup(env, "claude", musterBin); err != nil {
		t.Fatal(err)
	}
	// The user adds a key and their own SessionStart hook after setup.
	b := string(readOrNil(t, path))
	b = strings.Replace(b, `"model": "opus",`, `"model": "opus", "verbose": true,`, 1)
	b = strings.Replace(b, `"SessionStart": [`, `"SessionStart": [{"hooks":[{"type":"command","command":"echo mine"}]},`, 1)
	writeFile(t, path, []byte(b), 0o644)
	if st := Status(env, "claude", musterBin); st.State != Installed {
		t.Errorf("status = %+v", st)
	}
	if r, err := Setup(env, "claude", musterBin); err != nil || r.Changed {
		t.Errorf("setup after user edit = %+v, %v; want unchanged", r, err)
	}
	if _, err := Remove(env, "claude"); err != nil {
		t.Fatal(err)
	}
	got := string(readOrNil(t, path))
	if strings.Contains(got, "muster") {
		t.Errorf("remove left muster entries:\n%s", got)
	}
	for _, keep := range []string{`"verbose": true`, `"command":"echo mine"`, `"Stop": []`, `"futureSetting"`} {
		if !strings.Contains(got, keep) {
			t.Errorf("remove lost %s:\n%s", keep, got)
		}
	}
	var gv, wv map[string]any
	if err := json.Unmarshal([]byte(got), &gv); err != nil {
		t.Fatal(err)
	}
	hooks := gv["hooks"].(map[string]any)
	if len(hooks["SessionStart"].([]any)) != 1 {
		t.Errorf("SessionStart = %v, want the user's entry only", hooks["SessionStart"])
	}
	delete(hooks, "SessionStart")
	if err := json.Unmarshal(fixture(t, "claude-settings.json"), &wv); err != nil {
		t.Fatal(err)
	}
	wv["verbose"] = true
	if diff := cmp.Diff(wv, gv); diff != "" {
		t.Errorf("remove result differs from original plus user edits (-want +got):\n%s", diff)
	}
}

func TestOutdated(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "claude")
	original := fixture(t, "claude-settings.json")
	writeFile(t, path, original, 0o644)
	if _, err := Setup(env, "claude", "/old/place/muster"); err != nil {
		t.Fatal(err)
	}
	st := Status(env, "claude", musterBin)
	if st.State != Outdated || !strings.Contains(st.Detail, "/old/place/muster") {
		t.Errorf("status with another binary = %+v", st)
	}
	r, err := Setup(env, "claude", musterBin)
	if err != nil || !r.Changed || r.Backup != "" {
		t.Fatalf("setup over outdated = %+v, %v", r, err)
	}
	b := readOrNil(t, path)
	if strings.Contains(string(b), "/old/place") {
		t.Errorf("outdated entries kept:\n%s", b)
	}
	if st := Status(env, "claude", musterBin); st.State != Installed {
		t.Errorf("status after update = %+v", st)
	}
	// An older marker version is outdated too.
	writeFile(t, path, []byte(strings.ReplaceAll(string(b), Marker, "# muster-hooks:v0")), 0o644)
	if st := Status(env, "claude", musterBin); st.State != Outdated || !strings.Contains(st.Detail, "older muster") {
		t.Errorf("status with v0 marker = %+v", st)
	}
	// A missing event is outdated, and setup adds it back.
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["hooks"].(map[string]any), "Stop")
	partial, _ := json.Marshal(doc)
	writeFile(t, path, partial, 0o644)
	if st := Status(env, "claude", musterBin); st.State != Outdated || st.Detail != "missing Stop" {
		t.Errorf("status without Stop = %+v", st)
	}
	writeFile(t, path, b, 0o644)
	if _, err := Remove(env, "claude"); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != string(original) {
		t.Errorf("remove after update did not restore the original:\n%s", cmp.Diff(string(original), string(got)))
	}
}

func TestMixedGroup(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "codex")
	src := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"},{"type":"command","command":"/x/muster hook event codex # muster-hooks:v1"}]}]}}`
	writeFile(t, path, []byte(src), 0o644)
	if st := Status(env, "codex", "/x/muster"); st.State != Outdated || !strings.Contains(st.Detail, "share a group") {
		t.Errorf("status = %+v", st)
	}
	if _, err := Remove(env, "codex"); err != nil {
		t.Fatal(err)
	}
	want := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}]}}`
	if got := string(readOrNil(t, path)); got != want {
		t.Errorf("remove = %s, want %s", got, want)
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		content  string
		want     string
	}{
		{"invalid json", "claude", `{"model": "opus",}`, "not valid JSON"},
		{"comments in claude", "claude", "{\n  // no\n}", "not valid JSON"},
		{"top level array", "codex", `[]`, "top level is not an object"},
		{"hooks is a list", "claude", `{"hooks": []}`, `"hooks" is an array`},
		{"event is an object", "gemini", `{"hooks": {"SessionStart": {}}}`, `"SessionStart" is an object`},
		{"cursor version 2", "cursor", `{"version": 2, "hooks": {}}`, `"version" is 2`},
		{"unterminated comment", "gemini", "{ /* x", "unterminated /* comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, nil)
			path := mustPath(t, env, tt.provider)
			writeFile(t, path, []byte(tt.content), 0o644)
			_, err := Setup(env, tt.provider, musterBin)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("setup error = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if got := readOrNil(t, path); string(got) != tt.content {
				t.Errorf("file changed to %q", got)
			}
			if _, err := os.Stat(path + BackupSuffix); err == nil {
				t.Error("a refused setup wrote a backup")
			}
			if _, err := Remove(env, tt.provider); err == nil && strings.Contains(tt.want, "JSON") {
				t.Error("remove accepted an unparsable file")
			}
			if st := Status(env, tt.provider, musterBin); tt.want == "not valid JSON" && st.State != Unreadable {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestUnreadable(t *testing.T) {
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads files whatever their mode; the not-a-file case covers the error path")
		}
		env := testEnv(t, nil)
		path := mustPath(t, env, "claude")
		writeFile(t, path, []byte(`{}`), 0o000)
		if _, err := Setup(env, "claude", musterBin); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("setup error = %v", err)
		}
		if st := Status(env, "claude", musterBin); st.State != Unreadable {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		env := testEnv(t, nil)
		path := mustPath(t, env, "claude")
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Setup(env, "claude", musterBin); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("setup error = %v", err)
		}
		if _, err := Remove(env, "claude"); err == nil {
			t.Error("remove accepted a directory")
		}
		if st := Status(env, "claude", musterBin); st.State != Unreadable {
			t.Errorf("status = %+v", st)
		}
	})
}

func TestSymlinkedConfig(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "claude")
	target := filepath.Join(env.Home, "dotfiles", "claude.json")
	original := fixture(t, "claude-settings.json")
	writeFile(t, target, original, 0o644)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(env, "claude", musterBin); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("setup replaced the symlink: %v %v", fi.Mode(), err)
	}
	if !strings.Contains(string(readOrNil(t, target)), "muster hook") {
		t.Error("setup did not edit the symlink target")
	}
	if _, err := Remove(env, "claude"); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, target); string(got) != string(original) {
		t.Errorf("remove through symlink (-want +got):\n%s", cmp.Diff(string(original), string(got)))
	}
}

func TestConfigPath(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		vars     map[string]string
		want     string // relative to home unless absolute
		wantErr  string
	}{
		{"claude default", "claude", nil, ".claude/settings.json", ""},
		{"claude config dir", "claude", map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude"}, "/cfg/claude/settings.json", ""},
		{"claude relative dir", "claude", map[string]string{"CLAUDE_CONFIG_DIR": "cfg"}, "", "not an absolute path"},
		{"codex default", "codex", nil, ".codex/hooks.json", ""},
		{"codex home", "codex", map[string]string{"CODEX_HOME": "/c/x/"}, "/c/x/hooks.json", ""},
		{"gemini default", "gemini", nil, ".gemini/settings.json", ""},
		{"gemini cli home replaces home", "gemini", map[string]string{"GEMINI_CLI_HOME": "/g"}, "/g/.gemini/settings.json", ""},
		{"cursor", "cursor", map[string]string{"CODEX_HOME": "/x"}, ".cursor/hooks.json", ""},
		{"opencode default", "opencode", nil, ".config/opencode/plugins/muster.js", ""},
		{"opencode xdg", "opencode", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/xdg/opencode/plugins/muster.js", ""},
		{"opencode relative xdg ignored", "opencode", map[string]string{"XDG_CONFIG_HOME": "rel"}, ".config/opencode/plugins/muster.js", ""},
		{"unknown", "aider", nil, "", "no hook installer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, tt.vars)
			got, err := ConfigPath(env, tt.provider)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ConfigPath = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			want := tt.want
			if !filepath.IsAbs(want) {
				want = filepath.Join(env.Home, want)
			}
			if err != nil || got != want {
				t.Errorf("ConfigPath = %q, %v; want %q", got, err, want)
			}
		})
	}
	if _, err := ConfigPath(Env{Home: "rel"}, "claude"); err == nil {
		t.Error("relative home accepted")
	}
}

func TestProviderHomesHonoured(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{
		"CLAUDE_CONFIG_DIR": filepath.Join(dir, "claude"),
		"CODEX_HOME":        filepath.Join(dir, "codex"),
		"GEMINI_CLI_HOME":   filepath.Join(dir, "gemini"),
		"XDG_CONFIG_HOME":   filepath.Join(dir, "xdg"),
	}
	env := testEnv(t, vars)
	for _, p := range Providers() {
		if _, err := Setup(env, p, musterBin); err != nil {
			t.Fatalf("setup %s: %v", p, err)
		}
	}
	for _, want := range []string{"claude/settings.json", "codex/hooks.json", "gemini/.gemini/settings.json", "xdg/opencode/plugins/muster.js"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(env.Home, ".cursor", "hooks.json")); err != nil {
		t.Errorf("cursor: %v", err)
	}
	// Nothing else was written to the home directory.
	if names := dirNames(t, env.Home); !cmp.Equal(names, []string{".cursor"}) {
		t.Errorf("home holds %v", names)
	}
}

func TestNotes(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(t, map[string]string{"CODEX_HOME": dir})
	r, err := Setup(env, "codex", musterBin)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(r.Notes, []string{codex.HookTrustNote}) {
		t.Errorf("codex setup notes = %q", r.Notes)
	}
	writeFile(t, filepath.Join(dir, "config.toml"), []byte("# mine\n[features]\nhooks = false\n"), 0o644)
	st := Status(env, "codex", musterBin)
	if st.State != Installed || len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "hooks = false") {
		t.Errorf("codex status = %+v", st)
	}
	claudeEnv := testEnv(t, nil)
	writeFile(t, mustPath(t, claudeEnv, "claude"), []byte(`{"disableAllHooks": true}`), 0o644)
	if st := Status(claudeEnv, "claude", musterBin); len(st.Notes) != 1 {
		t.Errorf("claude status = %+v", st)
	}
	geminiEnv := testEnv(t, nil)
	writeFile(t, mustPath(t, geminiEnv, "gemini"), []byte(`{"hooksConfig": {"enabled": false}}`), 0o644)
	if st := Status(geminiEnv, "gemini", musterBin); len(st.Notes) != 1 {
		t.Errorf("gemini status = %+v", st)
	}
}

func TestBadMusterPath(t *testing.T) {
	env := testEnv(t, nil)
	for _, p := range []string{"", "muster", "/a\nb"} {
		if _, err := Setup(env, "claude", p); err == nil {
			t.Errorf("Setup accepted muster path %q", p)
		}
	}
	if names := dirNames(t, env.Home); len(names) != 0 {
		t.Errorf("a refused setup wrote %v", names)
	}
}

func TestClaudeSettingsJSON(t *testing.T) {
	got := mustSettingsJSON(t, "claude", "/opt/my muster/muster")
	var v struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, got)
	}
	if strings.Contains(got, "\n") {
		t.Error("not compact")
	}
	ss := v.Hooks["SessionStart"]
	if len(ss) != 1 || len(ss[0].Hooks) != 2 || ss[0].Matcher == nil {
		t.Fatalf("SessionStart = %+v", ss)
	}
	wantCapture := `'/opt/my muster/muster' hook capture --provider claude --process-id "$PPID" # muster-hooks:v1`
	if ss[0].Hooks[0].Command != wantCapture {
		t.Errorf("capture command = %q, want %q", ss[0].Hooks[0].Command, wantCapture)
	}
	for _, ev := range []string{"UserPromptSubmit", "PreToolUse", "PermissionRequest", "Notification", "Stop", "StopFailure", "SessionEnd"} {
		g := v.Hooks[ev]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Command != `'/opt/my muster/muster' hook event claude # muster-hooks:v1` {
			t.Errorf("%s = %+v", ev, g)
		}
	}
	// The per-launch settings use the very commands setup installs, so that
	// Claude Code's deduplication of identical commands applies.
	env := testEnv(t, nil)
	if _, err := Setup(env, "claude", "/opt/my muster/muster"); err != nil {
		t.Fatal(err)
	}
	var installed map[string]any
	if err := json.Unmarshal(readOrNil(t, mustPath(t, env, "claude")), &installed); err != nil {
		t.Fatal(err)
	}
	var injected map[string]any
	if err := json.Unmarshal([]byte(got), &injected); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(injected, installed); diff != "" {
		t.Errorf("--settings hooks differ from installed hooks:\n%s", diff)
	}
}

func TestOpenCodePlugin(t *testing.T) {
	env := testEnv(t, nil)
	path := mustPath(t, env, "opencode")
	if _, err := Setup(env, "opencode", musterBin); err != nil {
		t.Fatal(err)
	}
	b := string(readOrNil(t, path))
	for _, want := range []string{`const MUSTER = "/opt/muster/bin/muster";`, `"hook", "capture", "--provider", "opencode"`, `["hook", "event", "opencode"]`, "process.env.MUSTER_AGENT_SESSION_ID", `"session.idle"`, `"permission.asked"`} {
		if !strings.Contains(b, want) {
			t.Errorf("plugin lacks %s", want)
		}
	}
	if st := Status(env, "opencode", "/other/muster"); st.State != Outdated || !strings.Contains(st.Detail, "different muster") {
		t.Errorf("status with another binary = %+v", st)
	}
	if r, err := Setup(env, "opencode", "/other/muster"); err != nil || !r.Changed || r.Created {
		t.Errorf("update = %+v, %v", r, err)
	}
	if r, err := Setup(env, "opencode", "/other/muster"); err != nil || r.Changed {
		t.Errorf("second update = %+v, %v", r, err)
	}
	if _, err := Remove(env, "opencode"); err != nil {
		t.Fatal(err)
	}
	if readOrNil(t, path) != nil {
		t.Error("remove kept the plugin")
	}
	// A muster.js that is not ours is never overwritten or removed.
	writeFile(t, path, []byte("export const Mine = async () => ({})\n"), 0o644)
	if _, err := Setup(env, "opencode", musterBin); err == nil || !strings.Contains(err.Error(), "not written by muster") {
		t.Errorf("setup over a foreign plugin = %v", err)
	}
	if r, err := Remove(env, "opencode"); err != nil || r.Changed {
		t.Errorf("remove of a foreign plugin = %+v, %v", r, err)
	}
	if st := Status(env, "opencode", musterBin); st.State != NotInstalled || st.Detail == "" {
		t.Errorf("status of a foreign plugin = %+v", st)
	}
	if got := string(readOrNil(t, path)); got != "export const Mine = async () => ({})\n" {
		t.Errorf("foreign plugin changed: %q", got)
	}
}

// TestOpenCodePluginRuns loads the generated plugin in node (when present)
// with a fake muster and checks what it pipes where.
func TestOpenCodePluginRuns(t *testing.T) {
	node, err := lookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	fake := filepath.Join(dir, "muster")
	writeFile(t, fake, []byte("#!/bin/sh\n{ printf '%s\\n' \"$*\"; cat; printf '\\n'; } >> "+log+"\n"), 0o755)
	plugin := filepath.Join(dir, "muster.mjs")
	writeFile(t, plugin, []byte(pluginSource(t, "opencode", fake)), 0o644)
	driver := filepath.Join(dir, "drive.mjs")
	writeFile(t, driver, []byte(`
import { MusterPlugin } from "./muster.mjs";
const hooks = await MusterPlugin({});
await hooks.event?.({ event: { type: "session.created", properties: { info: { id: "ses_root" } } } });
await hooks.event?.({ event: { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_root" } } } });
await hooks.event?.({ event: { type: "message.updated", properties: {} } });
await hooks.event?.({ event: { type: "session.idle", properties: { sessionID: "ses_root" } } });
`), 0o644)
	out, err := runCmd(dir, []string{"MUSTER_AGENT_SESSION_ID=ms_1"}, node, driver)
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	got := string(waitForLines(t, log, 8))
	want := "hook capture --provider opencode --process-id "
	if !strings.HasPrefix(got, want) {
		t.Fatalf("first call = %q", got)
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 8 {
		t.Fatalf("calls:\n%s", got)
	}
	if lines[1] != `{"version":1,"event":"session_started","session_id":"ses_root"}` {
		t.Errorf("capture payload = %s", lines[1])
	}
	if lines[2] != "hook event opencode" || !strings.Contains(lines[3], `"session.created"`) {
		t.Errorf("event call = %s / %s", lines[2], lines[3])
	}
	if !strings.Contains(lines[5], "ses_child") || !strings.Contains(lines[7], `"session.idle"`) {
		t.Errorf("calls:\n%s", got)
	}
	// Outside Muster the plugin does nothing.
	os.Remove(log)
	if out, err := runCmd(dir, nil, node, driver); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if b := readOrNil(t, log); b != nil {
		t.Errorf("plugin ran muster outside Muster:\n%s", b)
	}
}

func TestMarkerMatchesVersion(t *testing.T) {
	if markerVersion("x "+Marker) != MarkerVersion {
		t.Errorf("Marker %q does not carry MarkerVersion %d", Marker, MarkerVersion)
	}
}

// TestHookHelperBesideMuster: with muster-hook installed beside the muster
// binary, setup installs it for lifecycle events (the capture adapter stays
// `muster hook capture`), an installation made before the helper existed is
// outdated, and remove still restores the original bytes.
func TestHookHelperBesideMuster(t *testing.T) {
	env := testEnv(t, nil)
	bin := t.TempDir()
	muster := filepath.Join(bin, "muster")
	writeFile(t, muster, []byte("#!/bin/sh\n"), 0o755)
	path := mustPath(t, env, "claude")
	original := fixture(t, "claude-settings.json")
	writeFile(t, path, original, 0o644)
	if _, err := Setup(env, "claude", muster); err != nil {
		t.Fatal(err)
	}
	if b := string(readOrNil(t, path)); !strings.Contains(b, "muster' hook event claude") && !strings.Contains(b, "muster hook event claude") {
		t.Fatalf("without the helper, setup did not install `muster hook event`:\n%s", b)
	}
	helper := filepath.Join(bin, "muster-hook")
	writeFile(t, helper, []byte("#!/bin/sh\n"), 0o755)
	if st := Status(env, "claude", muster); st.State != Outdated {
		t.Errorf("status once the helper exists = %+v, want outdated", st)
	}
	if _, err := Setup(env, "claude", muster); err != nil {
		t.Fatal(err)
	}
	b := string(readOrNil(t, path))
	if !strings.Contains(b, "muster-hook event claude") || strings.Contains(b, " hook event claude") {
		t.Errorf("setup did not install muster-hook:\n%s", b)
	}
	if !strings.Contains(b, "hook capture --provider claude") {
		t.Errorf("the capture adapter is gone:\n%s", b)
	}
	if st := Status(env, "claude", muster); st.State != Installed {
		t.Errorf("status after setup = %+v", st)
	}
	if _, err := Remove(env, "claude"); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != string(original) {
		t.Errorf("remove did not restore the original:\n%s", cmp.Diff(string(original), string(got)))
	}
	// A helper that is not executable is not used.
	if err := os.Chmod(helper, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := EventCommand(muster, "claude"); strings.Contains(got, "muster-hook event") {
		t.Errorf("EventCommand used a non-executable helper: %s", got)
	}
}
