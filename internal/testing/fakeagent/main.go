package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

func main() { os.Exit(run(os.Args)) }

// relaunchedEnv marks the child of Gemini CLI's self-relaunch, which must
// not log the invocation a second time.
const relaunchedEnv = "FAKEAGENT_RELAUNCHED"

// exitError is a refusal to start: the message goes to stderr as is, and
// the process exits with code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func refuse(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// invocation is one line of $FAKEAGENT_LOG.
type invocation struct {
	Persona string            `json:"persona"`
	Argv    []string          `json:"argv"`
	Cwd     string            `json:"cwd"`
	PID     int               `json:"pid"`
	PPID    int               `json:"ppid"`
	Env     map[string]string `json:"env"`
}

// personaOf picks the persona from --persona NAME (or --persona=NAME),
// removed from the arguments, or from the base name of argv[0].
func personaOf(argv []string) (string, []string, error) {
	name := ""
	var rest []string
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			rest = append(rest, argv[i:]...)
			i = len(argv)
		case a == "--persona":
			if i+1 >= len(argv) {
				return "", nil, errors.New("fakeagent: --persona needs a value (claude, codex, gemini or custom)")
			}
			name = argv[i+1]
			i++
		case strings.HasPrefix(a, "--persona="):
			name = strings.TrimPrefix(a, "--persona=")
		default:
			rest = append(rest, a)
		}
	}
	if name == "" {
		name = filepath.Base(argv[0])
		switch name {
		case "claude", "codex", "gemini":
		default:
			name = "custom"
		}
	}
	switch name {
	case "claude", "codex", "gemini", "custom":
		return name, rest, nil
	}
	return "", nil, fmt.Errorf("fakeagent: unknown persona %q (claude, codex, gemini or custom)", name)
}

func run(argv []string) int {
	name, args, err := personaOf(argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return 1
	}
	daemon := name == "codex" && slices.Equal(args, daemonArgs)
	if cfg.log != "" && os.Getenv(relaunchedEnv) == "" && !daemon {
		appendLine(cfg.log, mustJSON(invocation{
			Persona: name, Argv: argv, Cwd: cwd, PID: os.Getpid(), PPID: os.Getppid(), Env: musterEnv(),
		}))
	}
	if cfg.exitAtStart && !daemon {
		fmt.Fprintln(os.Stderr, "fakeagent: exiting at start (FAKEAGENT_EXIT_AT_START)")
		return 1
	}
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return 1
	}
	env := runEnv{home: home, cwd: cwd, getenv: os.Getenv, cfg: cfg}
	if daemon {
		return runCodexDaemon(env)
	}
	var p persona
	switch name {
	case "claude":
		p, err = newClaude(args, env)
	case "codex":
		p, err = newCodex(args, env)
	case "gemini":
		p, err = newGemini(args, env)
	default:
		p, err = newCustom(args, env)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, ee.msg)
			}
			return ee.code
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if name == "gemini" && os.Getenv("GEMINI_CLI_NO_RELAUNCH") != "true" {
		return relaunch(argv)
	}
	if s, ok := p.(interface{ script() string }); ok && s.script() != "" {
		cfg.script = s.script()
	}
	if c, ok := p.(interface{ chdir() string }); ok && c.chdir() != "" {
		cwd = c.chdir()
	}
	a := &agent{p: p, cfg: cfg, cwd: cwd, home: home, pid: os.Getpid(), sig: make(chan os.Signal, 4)}
	if l, ok := p.(interface {
		loadHooks() ([]hookHandler, []string)
	}); ok && !cfg.noHooks {
		hs, warnings := l.loadHooks()
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, w)
		}
		a.hooks = byEvent(hs)
	}
	if q, ok := p.(interface{ initialPrompt() string }); ok && q.initialPrompt() != "" {
		a.queue = append(a.queue, q.initialPrompt())
	}
	a.tty = openTTY(os.Stdin, os.Stdout)
	defer a.tty.restore()
	signal.Notify(a.sig, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	go a.tty.readKeys()
	return a.run()
}

func isInterrupt(s os.Signal) bool { return s == syscall.SIGINT }

// musterEnv returns the MUSTER_* variables.
func musterEnv() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "MUSTER_") {
			m[k] = v
		}
	}
	return m
}

// relaunch mimics Gemini CLI, which re-executes itself as a child (with
// GEMINI_CLI_NO_RELAUNCH=true and a larger heap) and waits for it: the
// hooks are then children of the child, not of the process the pane
// started.
func relaunch(argv []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return 1
	}
	cmd := exec.Command(exe, argv[1:]...)
	cmd.Args = argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "GEMINI_CLI_NO_RELAUNCH=true", relaunchedEnv+"=1")
	// The child gets the terminal's signals itself (same process group);
	// the parent only waits, and forwards what is sent to it alone.
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: relaunch: %v\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGTERM {
				_ = cmd.Process.Signal(s)
			}
		case err := <-done:
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return ee.ExitCode()
			}
			if err != nil {
				return 1
			}
			return 0
		}
	}
}

// runEnv is what a persona needs to know at construction.
type runEnv struct {
	home   string
	cwd    string
	getenv func(string) string
	cfg    config
}
