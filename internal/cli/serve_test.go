package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/testing/poll"
)

// serveSecrets are written into a Claude transcript; the part after the
// last space of each must never appear in an answer of `muster serve`.
var serveSecrets = []string{
	"password=hunter2hunter2",
	"ANTHROPIC_API_KEY=sk-ant-api03-SECRETSECRETSECRETSECRET01",
	"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
	"mysql -u root -pMyS3cretPw",
	"git remote add o https://me:ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@github.com/x",
}

var serveLeaks = []string{"hunter2hunter2", "SECRETSECRETSECRET", "wJalrXUtnFEMI", "MyS3cretPw", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"}

// startServe runs `muster serve ARGS` until the test ends and returns the
// URL it printed.
func startServe(t *testing.T, e *cliEnv, args ...string) string {
	t.Helper()
	env := map[string]string{"HOME": e.home, "MUSTER_HOME": e.muster, "CLAUDE_CONFIG_DIR": filepath.Join(e.home, ".claude"),
		"CODEX_HOME": filepath.Join(e.home, ".codex"), "GEMINI_CLI_HOME": e.home, "XDG_CONFIG_HOME": filepath.Join(e.home, ".config"),
		"XDG_DATA_HOME": filepath.Join(e.home, ".local", "share"), "MUSE_AGENTS_DIR": filepath.Join(e.home, "agents")}
	return startServeEnv(t, env, args...)
}

// startServeEnv runs `muster serve ARGS` in the environment env until
// the test ends and returns the URL it printed.
func startServeEnv(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	ios, _, out, _ := iostreams.Test()
	ios.ErrOut = pw
	f := &Factory{IO: ios, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, f, append([]string{"serve"}, args...))
		pw.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d: %s", code, out)
		}
	})
	first, ok := <-lines
	if !ok {
		t.Fatal("serve printed nothing")
	}
	if slices.Contains(args, "--public") {
		if warning := <-lines; !strings.Contains(warning, "not shown again") {
			t.Errorf("serve --public printed %q, %q", first, warning)
		}
	}
	go func() {
		for range lines {
		}
	}()
	u, found := strings.CutPrefix(first, "serving on ")
	if !found {
		t.Fatalf("serve printed %q", first)
	}
	u, _, _ = strings.Cut(u, " ")
	return u
}

// serveGet sends one request, following no redirect.
func serveGet(t *testing.T, rawURL string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, leak := range serveLeaks {
		if strings.Contains(string(body), leak) {
			t.Errorf("GET %s shows %q", rawURL, leak)
		}
	}
	return resp, string(body)
}

// writeSecretSession writes a Claude transcript whose prompts, title and
// tool call hold serveSecrets.
func writeSecretSession(t *testing.T, e *cliEnv) {
	t.Helper()
	const id = "eeeeeeee-0000-4000-8000-000000000005"
	t0 := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	n := 0
	line := func(v map[string]any) {
		n++
		v["sessionId"], v["cwd"], v["uuid"] = id, "/src/secret", id[:8]+"-u"+string(rune('a'+n))
		v["timestamp"] = t0.Add(time.Duration(n) * time.Second).Format(time.RFC3339)
		data, _ := json.Marshal(v)
		b.Write(data)
		b.WriteByte('\n')
	}
	all := strings.Join(serveSecrets, "\n")
	line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "deploy with " + all}})
	line(map[string]any{"type": "assistant", "requestId": "req_e1", "message": map[string]any{"id": "msg_e1", "role": "assistant", "model": "claude-sonnet-4-20250514",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_e1", "name": "Bash", "input": map[string]any{"command": all}}},
		"usage":   map[string]any{"input_tokens": 5, "output_tokens": 5}}})
	line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{
		"type": "tool_result", "tool_use_id": "toolu_e1", "content": all}}}})
	line(map[string]any{"type": "summary", "summary": "rotate " + serveSecrets[1]})
	p := filepath.Join(e.dir, "-src-secret", id+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitIndexed polls the history API until the secret session is listed:
// serve indexes in the background as it starts.
func waitIndexed(t *testing.T, base string, hdr map[string]string) string {
	t.Helper()
	var code int
	var body string
	poll.Wait(t, 30*time.Second, func() bool {
		var resp *http.Response
		resp, body = serveGet(t, base+"/api/v1/history?q=eeeeeeee", hdr)
		code = resp.StatusCode
		return code == 200 && strings.Contains(body, "eeeeeeee-0000")
	}, func() string { return fmt.Sprintf("the session to be listed: %d %s", code, body) })
	return body
}

func TestServeLoopback(t *testing.T) {
	e := newCLIEnv(t)
	writeSecretSession(t, e)
	printed := startServe(t, e, "--addr", "127.0.0.1:0")
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatal(err)
	}
	// The token is for terminal views; the other pages need none on
	// loopback.
	if len(u.Query().Get("token")) < 26 {
		t.Errorf("loopback URL %s carries no token for its terminal views", printed)
	}
	base := "http://" + u.Host
	body := waitIndexed(t, base, nil)
	if !strings.Contains(body, "[REDACTED:") {
		t.Errorf("history JSON: %s", body)
	}
	for _, path := range []string{"/", "/?q=deploy", "/session/claude/eeeeeeee-0000-4000-8000-000000000005", "/live"} {
		if resp, body := serveGet(t, base+path, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	// No token on loopback, but the Host check stays (DNS rebinding).
	port := base[strings.LastIndexByte(base, ':')+1:]
	if resp, _ := serveGet(t, base+"/", map[string]string{"Host": "localhost:" + port}); resp.StatusCode != 200 {
		t.Errorf("Host localhost: %d", resp.StatusCode)
	}
	if resp, _ := serveGet(t, base+"/", map[string]string{"Host": "rebind.example:" + port}); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host rebind.example: %d", resp.StatusCode)
	}
}

func TestServePublic(t *testing.T) {
	e := newCLIEnv(t)
	writeSecretSession(t, e)
	printed := startServe(t, e, "--addr", "127.0.0.1:0", "--host", "muster.example", "--public")
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	if len(token) < 26 || u.Path != "/" {
		t.Fatalf("serve --public printed %s: want a URL with a token of 128 bits or more", printed)
	}
	base := "http://" + u.Host
	for _, path := range []string{"/", "/api/v1/history", "/live", "/session/claude/eeeeeeee"} {
		if resp, _ := serveGet(t, base+path, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d", path, resp.StatusCode)
		}
	}
	if resp, _ := serveGet(t, base+"/?token="+strings.ToLower(token), nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", resp.StatusCode)
	}
	resp, _ := serveGet(t, printed, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Header)
	}
	ck := resp.Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Value != token {
		t.Errorf("cookie %s", ck)
	}
	cookie := map[string]string{"Cookie": ck.Name + "=" + ck.Value}
	waitIndexed(t, base, map[string]string{"Authorization": "Bearer " + token})
	for _, path := range []string{"/", "/live", "/session/claude/eeeeeeee-0000-4000-8000-000000000005"} {
		if resp, body := serveGet(t, base+path, cookie); resp.StatusCode != 200 {
			t.Errorf("GET %s with the cookie: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := serveGet(t, base+"/", map[string]string{"Cookie": cookie["Cookie"], "Host": "muster.example"}); resp.StatusCode != 200 {
		t.Errorf("--host name: %d", resp.StatusCode)
	}
	if resp, _ := serveGet(t, base+"/", map[string]string{"Cookie": cookie["Cookie"], "Host": "rebind.example"}); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host rebind.example: %d", resp.StatusCode)
	}
}
