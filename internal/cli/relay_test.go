package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/testbin"
)

// TestRelayPipesToTheDaemon runs the real `muster relay` with no daemon
// running: it starts one, and the control protocol piped into it (hello,
// then ls) comes back answered, the session made before listed; stdin's
// end ends it with status 0. A home it cannot use is one line on stderr
// and status 1.
func TestRelayPipesToTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	bin := testbin.Muster(t)
	home, err := os.MkdirTemp("/tmp", "mrl")
	if err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	env := []string{"MUSTER_HOME=" + home, "HOME=" + userHome, "SHELL=/bin/sh", "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(userHome, ".config"), "XDG_STATE_HOME=" + filepath.Join(userHome, ".state"),
		"XDG_DATA_HOME=" + filepath.Join(userHome, ".local", "share"), "XDG_RUNTIME_DIR="}
	muster := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, userHome
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	t.Cleanup(func() {
		muster("", "daemon", "stop", "--force")
		os.RemoveAll(home)
	})

	requests := fmt.Sprintf("{\"op\":%q,\"args\":{\"protocol\":%d,\"version\":\"test\"}}\n{\"op\":%q}\n", proto.OpHello, proto.ControlVersion, proto.OpList)
	out, stderr, err := muster(requests, "relay")
	if err != nil {
		t.Fatalf("relay with no daemon: %v\n%s", err, stderr)
	}
	if strings.Count(out, `{"ok":true`) != 2 {
		t.Fatalf("relay with no daemon answered %q, want hello and ls answered", out)
	}
	if _, _, err := muster("", "new", "--name", "relayed", "--detach", "--cmd", "cat"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = muster(requests, "relay")
	if err != nil {
		t.Fatalf("relay: %v\n%s", err, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var answers []proto.Response
	for sc.Scan() {
		var r proto.Response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("relay wrote a line that is no response: %q", sc.Text())
		}
		answers = append(answers, r)
	}
	if len(answers) != 2 || !answers[0].OK || !answers[1].OK {
		t.Fatalf("relay answered %q, want hello and ls answered", out)
	}
	var hello proto.HelloResult
	json.Unmarshal(answers[0].Result, &hello)
	var list []proto.SessionInfo
	json.Unmarshal(answers[1].Result, &list)
	if hello.Protocol != proto.ControlVersion || len(list) != 1 || list[0].Name != "relayed" {
		t.Errorf("hello = %+v, ls = %+v; want protocol %d and the session relayed", hello, list, proto.ControlVersion)
	}

	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	env[0] = "MUSTER_HOME=" + file
	_, stderr, err = muster(requests, "relay")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("relay on a home that is a file: %v, want exit status 1", err)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "muster: relay: ") {
		t.Errorf("relay on a home that is a file said %q, want one line", stderr)
	}
}
