package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutAndRemoveHostKeepTheRestOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	orig := "# my settings\nterm = \"xterm\"\n\n[keys]\ndetach = \"ctrl-]\" # mine\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := PutHost(path, Host{Name: "gpu", Dest: "me@gpu.example"}); err != nil {
		t.Fatal(err)
	}
	if err := PutHost(path, Host{Name: "box", Dest: `ssh://a"b@box:2222`}); err != nil {
		t.Fatal(err)
	}
	if err := PutHost(path, Host{Name: "gpu", Dest: "me@gpu.example", Muster: "/home/me/.local/share/muster/bin/1/muster"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hosts) != 2 || c.Hosts[0].Muster == "" || c.Hosts[1].Dest != `ssh://a"b@box:2222` || c.Keys.Detach != "ctrl-]" {
		t.Fatalf("hosts = %+v, keys = %+v", c.Hosts, c.Keys)
	}
	if err := RemoveHost(path, "gpu"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveHost(path, "box"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if got := strings.TrimRight(string(b), "\n"); got != strings.TrimRight(orig, "\n") {
		t.Fatalf("after add and remove:\n%s\nwant:\n%s", b, orig)
	}
}

func TestBadHostsAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	for _, h := range []Host{{Name: "a:b", Dest: "x"}, {Name: "", Dest: "x"}, {Name: "ok", Dest: "-oProxyCommand=touch /tmp/x"}, {Name: "ok", Dest: "a b"}} {
		if err := PutHost(path, h); err == nil {
			t.Errorf("PutHost(%+v) succeeded", h)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a refused host wrote the file: %v", err)
	}
	os.WriteFile(path, []byte("[[host]]\nname = \"x\"\ndest = \"-oProxyCommand=y\"\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "must not start with '-'") {
		t.Fatalf("Load of a dest starting with '-' = %v", err)
	}
}
