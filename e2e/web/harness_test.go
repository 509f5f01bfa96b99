// The tests of package web: see doc.go.
package web_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/testbin"
)

var musterBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e/web drives real daemons, servers and Chromium: skipped under -short")
		os.Exit(0)
	}
	bin, err := testbin.BuildMuster()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = bin
	os.Exit(m.Run())
}

// env is one isolated Muster home with its daemon.
type env struct {
	t    *testing.T
	home string
	vars []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Socket paths must stay short, so not t.TempDir().
	home, err := os.MkdirTemp("/tmp", "mw")
	if err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	e := &env{t: t, home: home}
	e.vars = append(os.Environ(), "MUSTER_HOME="+home, "HOME="+user,
		"XDG_CONFIG_HOME="+filepath.Join(user, ".config"), "XDG_STATE_HOME="+filepath.Join(user, ".state"),
		"XDG_DATA_HOME="+filepath.Join(user, ".local", "share"), "XDG_RUNTIME_DIR=",
		"CLAUDE_CONFIG_DIR="+filepath.Join(user, ".claude"), "CODEX_HOME="+filepath.Join(user, ".codex"),
		"GEMINI_CLI_HOME="+user, "SHELL=/bin/bash", "TMUX=", "TMUX_PANE=")
	t.Cleanup(func() {
		e.run("daemon", "stop")
		os.RemoveAll(home)
	})
	return e
}

func (e *env) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, musterBin, args...)
	cmd.Env = e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("muster %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

func (e *env) must(args ...string) string {
	e.t.Helper()
	out, err := e.run(args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// shell starts a bash pane named name.
func (e *env) shell(name string) {
	e.t.Helper()
	e.must("new", "--name", name, "--detach", "--cmd", "bash --norc --noprofile")
}

// waitScreen polls capture until the pane's screen holds want.
func (e *env) waitScreen(name, want string) string {
	e.t.Helper()
	var last string
	poll.Wait(e.t, 20*time.Second, func() bool {
		last, _ = e.run("capture", name)
		return strings.Contains(last, want)
	}, func() string { return fmt.Sprintf("%s's screen to show %q; last:\n%s", name, want, last) })
	return last
}

// server is a running `muster serve`.
type server struct {
	cmd   *exec.Cmd
	url   *url.URL // the printed one-time URL
	token string
	base  string // http://HOST:PORT
}

// serve starts `muster serve` with args and reads the URL it prints.
func (e *env) serve(args ...string) *server {
	e.t.Helper()
	cmd := exec.Command(musterBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = e.vars
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		e.t.Fatal("serve printed nothing")
	}
	first := lines.Text()
	go io.Copy(io.Discard, stderr)
	i := strings.Index(first, "http://")
	if i < 0 {
		e.t.Fatalf("serve printed %q", first)
	}
	raw, _, _ := strings.Cut(first[i:], " ")
	u, err := url.Parse(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	return &server{cmd: cmd, url: u, token: u.Query().Get("token"), base: "http://" + u.Host}
}

// proxy forwards TCP connections to a server and can drop them all and
// refuse new ones: a lost network, as the page sees it.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close() }()
	io.Copy(c, s)
	c.Close()
}

// setDown drops every connection and refuses new ones (true), or lets
// them through again (false).
func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }

// gitRepo makes a repository with one commit in a temp dir, git's
// identity and config kept in the env's own home.
func (e *env) gitRepo() string {
	e.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		e.t.Skip("no git here")
	}
	e.vars = append(e.vars, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	repo := filepath.Join(e.t.TempDir(), "app")
	e.git("", "init", "-q", "-b", "main", repo)
	if err := writeFile(filepath.Join(repo, "README"), []byte("hi\n")); err != nil {
		e.t.Fatal(err)
	}
	e.git(repo, "add", ".")
	e.git(repo, "commit", "-q", "-m", "first")
	return repo
}

func (e *env) git(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, e.vars
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
