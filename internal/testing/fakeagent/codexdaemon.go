package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Codex without --no-daemon: the TUI hands its thread to a shared,
// detached app-server daemon (started by the first TUI, with that TUI's
// environment, and left running). The daemon writes the rollout and runs
// the hooks, so a hook's parent is the daemon, not the pane's codex, and
// its environment (MUSTER_* included) is the first pane's. This is what
// research/real-cli/REPORT.md §2 saw, and why Muster launches --no-daemon.
//
// The fake daemon serves newline-delimited JSON requests on
// $CODEX_HOME/app-server-control/app-server-control.sock and, unlike the
// real one, exits after FAKEAGENT_CODEX_DAEMON_IDLE (default 5s) without
// clients, so that tests leave nothing behind.

// daemonArgs are the arguments the daemon runs with (as the real one).
var daemonArgs = []string{"app-server", "--listen", "unix://", "--managed-daemon"}

type daemonReq struct {
	Op      string          `json:"op"` // open, write, hook, end
	Path    string          `json:"path,omitempty"`
	Create  bool            `json:"create,omitempty"`
	Data    string          `json:"data,omitempty"`
	Event   string          `json:"event,omitempty"`
	Target  string          `json:"target,omitempty"`
	Cwd     string          `json:"cwd,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

type daemonResp struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func daemonSocket(home string) string {
	return filepath.Join(home, "app-server-control", "app-server-control.sock")
}

// codexClient is the TUI's connection to the daemon.
type codexClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialDaemon connects to the daemon, starting it first if none answers.
func dialDaemon(home string) (*codexClient, error) {
	sock := daemonSocket(home)
	if c, err := net.Dial("unix", sock); err == nil {
		return &codexClient{conn: c, r: bufio.NewReader(c)}, nil
	}
	if err := startDaemon(home); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			return &codexClient{conn: c, r: bufio.NewReader(c)}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to the app-server daemon: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startDaemon starts a detached daemon with this process's environment.
func startDaemon(home string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start the app-server daemon: %w", err)
	}
	// Run it as "codex" (the link next to the binary) when there is one.
	path, args := exe, append([]string{"codex", "--persona", "codex"}, daemonArgs...)
	if link := filepath.Join(filepath.Dir(exe), "codex"); fileExists(link) {
		path, args = link, append([]string{"codex"}, daemonArgs...)
	}
	logDir := filepath.Join(home, "app-server-daemon")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return fmt.Errorf("start the app-server daemon: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(logDir, "daemon.stderr.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("start the app-server daemon: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(path, args[1:]...)
	cmd.Args = args
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the app-server daemon: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

func (c *codexClient) call(req daemonReq) error {
	if _, err := c.conn.Write(append(mustJSON(req), '\n')); err != nil {
		return fmt.Errorf("app-server daemon: %w", err)
	}
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("app-server daemon: %w", err)
	}
	var resp daemonResp
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("app-server daemon: %w", err)
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	return nil
}

func (c *codexClient) close() { _ = c.conn.Close() }

// runCodexDaemon serves TUIs until it has had none for the idle time.
func runCodexDaemon(env runEnv) int {
	home := env.getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(env.home, ".codex")
	}
	idle := 5 * time.Second
	if v := env.getenv("FAKEAGENT_CODEX_DAEMON_IDLE"); v != "" {
		d, err := parseDelay(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeagent: FAKEAGENT_CODEX_DAEMON_IDLE: %v\n", err)
			return 2
		}
		idle = d
	}
	sock := daemonSocket(home)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent daemon: %v\n", err)
		return 1
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		if c, derr := net.Dial("unix", sock); derr == nil {
			_ = c.Close()
			return 0 // another daemon serves
		}
		_ = os.Remove(sock)
		if ln, err = net.Listen("unix", sock); err != nil {
			fmt.Fprintf(os.Stderr, "fakeagent daemon: %v\n", err)
			return 1
		}
	}
	pidFile := filepath.Join(home, "app-server-daemon", "daemon.pid")
	_ = os.MkdirAll(filepath.Dir(pidFile), 0o700)
	_ = os.WriteFile(pidFile, mustJSON(o("pid", os.Getpid(), "version", codexVersion)), 0o600)
	defer os.Remove(pidFile)
	defer os.Remove(sock)

	p := &codex{env: env, home: home, isDaemon: true}
	a := &agent{p: p, cfg: env.cfg, home: env.home, pid: os.Getpid()}
	hooks, warnings := p.loadHooks()
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, w)
	}
	a.hooks = byEvent(hooks)

	d := &daemon{a: a, active: make(chan int, 64)}
	go d.accept(ln)
	d.active <- 0
	n := 0
	timer := time.NewTimer(idle)
	for {
		select {
		case delta := <-d.active:
			n += delta
			if n > 0 {
				timer.Stop()
			} else {
				timer.Reset(idle)
			}
		case <-timer.C:
			_ = ln.Close()
			d.wg.Wait()
			return 0
		}
	}
}

type daemon struct {
	a      *agent
	hookMu sync.Mutex // one hook batch at a time: the agent's cwd is shared
	active chan int   // +1/-1 for clients and pending work
	wg     sync.WaitGroup
}

func (d *daemon) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		d.active <- 1
		d.wg.Add(1)
		go d.serve(c)
	}
}

func (d *daemon) hook(event, target, cwd string, payload json.RawMessage) {
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	d.a.cwd = cwd
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		d.a.cwd = "/"
	}
	d.a.fire(event, rawObj(payload), target)
}

// serve handles one TUI: its rollout files stay open in the daemon until
// it disconnects.
func (d *daemon) serve(c net.Conn) {
	defer d.wg.Done()
	defer func() { d.active <- -1 }()
	defer c.Close()
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req daemonReq
		resp := daemonResp{OK: true}
		if err := json.Unmarshal(line, &req); err != nil {
			resp = daemonResp{Error: "bad request: " + err.Error()}
		} else {
			switch req.Op {
			case "open":
				flags := os.O_WRONLY | os.O_APPEND
				if req.Create {
					flags |= os.O_CREATE | os.O_EXCL
				}
				if err := os.MkdirAll(filepath.Dir(req.Path), 0o700); err != nil {
					resp = daemonResp{Error: err.Error()}
				} else if f, err := os.OpenFile(req.Path, flags, 0o600); err != nil {
					resp = daemonResp{Error: err.Error()}
				} else {
					files[req.Path] = f
				}
			case "write":
				f := files[req.Path]
				if f == nil {
					resp = daemonResp{Error: "not open: " + req.Path}
				} else if _, err := f.WriteString(req.Data); err != nil {
					resp = daemonResp{Error: err.Error()}
				}
			case "close":
				if f := files[req.Path]; f != nil {
					_ = f.Close()
					delete(files, req.Path)
				}
			case "hook":
				d.hook(req.Event, req.Target, req.Cwd, req.Payload)
			case "end":
				// The thread ends a little after the TUI leaves.
				d.active <- 1
				go func() {
					defer func() { d.active <- -1 }()
					time.Sleep(300 * time.Millisecond)
					d.hook("SessionEnd", "", req.Cwd, req.Payload)
				}()
			default:
				resp = daemonResp{Error: "unknown op " + req.Op}
			}
		}
		if _, err := c.Write(append(mustJSON(resp), '\n')); err != nil {
			return
		}
	}
}

// rawObj keeps a payload's bytes and key order as they came.
type rawObj json.RawMessage

func (r rawObj) MarshalJSON() ([]byte, error) { return r, nil }
