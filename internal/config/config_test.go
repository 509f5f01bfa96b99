package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in      string
		c0      byte
		wantErr string
	}{
		{`ctrl-\`, 0x1c, ""},
		{"ctrl-]", 0x1d, ""},
		{"C-a", 0x01, ""},
		{"^B", 0x02, ""},
		{"ctrl-1", 0, "no control code"},
		{"alt-x", 0, "want ctrl-X"},
		{"ctrl-ab", 0, "single character"},
	} {
		k, err := ParseKey(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseKey(%q) err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || k.Sequences[0][0] != tc.c0 {
			t.Errorf("ParseKey(%q) = %v, %v", tc.in, k, err)
		}
	}
	k, _ := ParseKey(`ctrl-\`)
	for _, in := range []string{"ab\x1ccd", "ab\x1b[92;5ucd", "ab\x1b[27;5;92~cd"} {
		if i, n := k.Find([]byte(in)); i != 2 || in[i+n:] != "cd" {
			t.Errorf("Find(%q) = %d, %d", in, i, n)
		}
	}
	if i, _ := k.Find([]byte("plain \x1b[A text")); i != -1 {
		t.Errorf("found a detach key in plain input")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	c, err := Load(path)
	if err != nil || c.Keys.Detach != DefaultDetachKey || c.Term != "xterm-256color" {
		t.Fatalf("missing file: %+v, %v", c, err)
	}
	os.WriteFile(path, []byte("term = \"screen-256color\"\n[keys]\ndetach = \"ctrl-]\"\n[[launcher]]\nname = \"aider\"\ncommand = \"aider\"\nresume = \"aider --restore {session_id}\"\n"), 0o600)
	c, err = Load(path)
	if err != nil || c.Term != "screen-256color" || c.Keys.Detach != "ctrl-]" || len(c.Launchers) != 1 || c.Launchers[0].Resume == "" {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	os.WriteFile(path, []byte("term = [\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "config.toml:") {
		t.Errorf("broken file: err = %v, want a position", err)
	}
	os.WriteFile(path, []byte("[keys]\ndetach = \"alt-x\"\n"), 0o600)
	if _, err := Load(path); err == nil {
		t.Errorf("bad detach key accepted")
	}
	if c, _ := Load(path + ".none"); c.Keys.Copy != DefaultCopyKey {
		t.Errorf("default copy key %q", c.Keys.Copy)
	}
	os.WriteFile(path, []byte("[keys]\ncopy = \"alt-c\"\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "keys.copy") {
		t.Errorf("bad copy key: %v", err)
	}
	os.WriteFile(path, []byte("window_size = \"smallest\"\n"), 0o600)
	if c, err := Load(path); err != nil || c.WindowSize != "smallest" {
		t.Errorf("window_size smallest: %+v, %v", c, err)
	}
	os.WriteFile(path, []byte("window_size = \"widest\"\n"), 0o600)
	if c, err := Load(path); err == nil || !strings.Contains(err.Error(), "window_size") || c.WindowSize != "latest" {
		t.Errorf("bad window_size: %+v, %v", c, err)
	}
}

func TestNotify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	load := func(text string) (Config, error) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(path)
	}
	c, err := load("")
	if err != nil || c.NotifyArgv() != nil || !c.NotifyBell() || !c.NotifyMessage() || c.NoticeSeconds() != DefaultNoticeSeconds || c.NotifyTerminal() != "" {
		t.Fatalf("defaults: argv %q bell %v message %v seconds %d terminal %q, %v",
			c.NotifyArgv(), c.NotifyBell(), c.NotifyMessage(), c.NoticeSeconds(), c.NotifyTerminal(), err)
	}
	for _, tc := range []struct {
		text string
		argv []string
	}{
		{"[notify]\ncommand = 'notify-send \"$MUSTER_TITLE\"'\n", []string{"/bin/sh", "-c", `notify-send "$MUSTER_TITLE"`}},
		{"[notify]\ncommand = \"none\"\n", []string{}},
		{"notify_command = [\"none\"]\n", []string{}},
		{"notify_command = [\"logger\", \"{title}\"]\n", []string{"logger", "{title}"}},
	} {
		c, err := load(tc.text)
		if err != nil || strings.Join(c.NotifyArgv(), "\x00") != strings.Join(tc.argv, "\x00") || (c.NotifyArgv() == nil) != (tc.argv == nil) {
			t.Errorf("%q: argv %q, %v; want %q", tc.text, c.NotifyArgv(), err, tc.argv)
		}
	}
	c, err = load("[notify]\nbell = false\nmessage = false\nmessage_seconds = 600\nterminal = \"osc777\"\n")
	if err != nil || c.NotifyBell() || c.NotifyMessage() || c.NoticeSeconds() != 60 || c.NotifyTerminal() != "osc777" {
		t.Errorf("all set: %+v, %v", c.Notify, err)
	}
	for text, want := range map[string]string{
		"notify_command = [\"a\"]\n[notify]\ncommand = \"b\"\n": "both notify.command and notify_command",
		"[notify]\nterminal = \"osc99\"\n":                      "notify.terminal",
		"[notify]\nmessage_seconds = -1\n":                      "notify.message_seconds",
	} {
		if _, err := load(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
}

func TestLimits(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (Config, error) {
		p := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	c, err := load("")
	if err != nil || c.Limits != (Limits{DefaultPanesPerPane, DefaultEmulatorCells}) {
		t.Errorf("no [limits]: %+v, %v; want the defaults", c.Limits, err)
	}
	c, err = load("[limits]\npanes_per_pane = 3\nemulator_cells = 100000\n")
	if err != nil || c.Limits != (Limits{3, 100000}) {
		t.Errorf("set limits: %+v, %v", c.Limits, err)
	}
	for _, body := range []string{"[limits]\npanes_per_pane = -1\n", "[limits]\nemulator_cells = -5\n"} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), "want a count of 1 or more") {
			t.Errorf("%q: err = %v, want a refusal", body, err)
		}
	}
}

func TestCost(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (Config, error) {
		p := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	c, err := load("")
	if err != nil || c.Cost.IntervalDuration != DefaultCostInterval || c.Cost.MemoryCeilingBytes != 0 || c.Cost.SessionCeilings != nil {
		t.Errorf("no [cost]: %+v, %v; want the default interval and no ceiling", c.Cost, err)
	}
	c, err = load("[cost]\ninterval = \"2s\"\nmemory_ceiling = \"2GiB\"\n[cost.sessions]\napi = \"1500MB\"\n")
	if err != nil || c.Cost.IntervalDuration != 2*time.Second || c.Cost.MemoryCeilingBytes != 2<<30 || c.Cost.SessionCeilings["api"] != 1500e6 {
		t.Errorf("set cost: %+v, %v", c.Cost, err)
	}
	if c, err = load("[cost]\ninterval = \"off\"\n"); err != nil || c.Cost.IntervalDuration != 0 {
		t.Errorf("interval off: %+v, %v; want 0", c.Cost, err)
	}
	for body, want := range map[string]string{
		"[cost]\ninterval = \"10ms\"\n":               "want a duration of 1s or more",
		"[cost]\nmemory_ceiling = \"lots\"\n":         "want a number of bytes",
		"[cost]\nmemory_ceiling = \"2PB\"\n":          "unknown unit",
		"[cost]\nmemory_ceiling = \"0\"\n":            "want more than 0 bytes",
		"[cost.sessions]\napi = \"99999999999TiB\"\n": "cost.sessions.api",
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

func TestWorktreeDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", "/home/u")
	p := filepath.Join(dir, "config.toml")
	for body, want := range map[string]string{
		"":                                   "",
		"[worktree]\ndir = \"/wt/{repo}\"\n": "/wt/{repo}",
		"[worktree]\ndir = \"~/wt\"\n":       "/home/u/wt",
	} {
		os.WriteFile(p, []byte(body), 0o600)
		if c, err := Load(p); err != nil || c.Worktree.Dir != want {
			t.Errorf("%q: dir %q, %v; want %q", body, c.Worktree.Dir, err, want)
		}
	}
	os.WriteFile(p, []byte("[worktree]\ndir = \"wt\"\n"), 0o600)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "want an absolute path") {
		t.Errorf("a relative dir: %v", err)
	}
}

func TestUsageLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	load := func(body string) (Config, error) {
		os.WriteFile(p, []byte(body), 0o600)
		return Load(p)
	}
	if c, err := load(""); err != nil || c.UsageLimit.Continue || c.UsageLimit.SkewDuration != DefaultLimitSkew {
		t.Errorf("no [usage_limit]: %+v, %v", c.UsageLimit, err)
	}
	if c, err := load("[usage_limit]\ncontinue = true\nskew = \"2s\"\n"); err != nil || !c.UsageLimit.Continue || c.UsageLimit.SkewDuration != 2*time.Second {
		t.Errorf("set: %+v, %v", c.UsageLimit, err)
	}
	for _, bad := range []string{"[usage_limit]\nskew = \"soon\"\n", "[usage_limit]\nskew = \"-1s\"\n", "[usage_limit]\nskew = \"2h\"\n"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "usage_limit.skew") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
