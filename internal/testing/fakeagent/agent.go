package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// persona is one CLI's behaviour; the agent drives the terminal, the prompt
// and the hook runner, and asks the persona what to do.
type persona interface {
	name() string
	// start runs before the first prompt (banner, launch hooks). An error
	// is printed and the process exits 1, like a CLI that refuses to start.
	start(a *agent) error
	// turn runs one prompt line.
	turn(a *agent, line string, c command)
	// clear is /clear.
	clear(a *agent)
	// end runs the exit hooks; hangup distinguishes a lost terminal or a
	// signal from a typed exit.
	end(a *agent, hangup bool)
	// idle runs when the agent has waited for input for cfg.idleDelay
	// after a turn.
	idle(a *agent)
	// matches applies the CLI's matcher rule to a hook and the event's
	// match target.
	matches(h hookHandler, target string) bool
	// hookEnv is the environment the CLI adds for a hook of event.
	hookEnv(event string) []string
	// hookDone reports a hook result on screen the way the CLI does.
	hookDone(a *agent, r hookResult)
}

// config is what the environment tells the fake.
type config struct {
	log         string
	hookLog     string
	exitAtStart bool
	noHooks     bool
	notifyDelay time.Duration
	idleDelay   time.Duration // 0: never
	script      string
	codexTrust  bool
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		log:         getenv("FAKEAGENT_LOG"),
		hookLog:     getenv("FAKEAGENT_HOOK_LOG"),
		exitAtStart: truthy(getenv("FAKEAGENT_EXIT_AT_START")),
		noHooks:     truthy(getenv("FAKEAGENT_NO_HOOKS")),
		notifyDelay: 200 * time.Millisecond,
		idleDelay:   60 * time.Second,
		script:      getenv("FAKEAGENT_SCRIPT"),
		codexTrust:  truthy(getenv("FAKEAGENT_CODEX_HOOK_TRUST")),
	}
	var err error
	if v := getenv("FAKEAGENT_NOTIFY_DELAY"); v != "" {
		if c.notifyDelay, err = parseDelay(v); err != nil {
			return c, fmt.Errorf("FAKEAGENT_NOTIFY_DELAY: %w", err)
		}
	}
	if v := getenv("FAKEAGENT_IDLE_DELAY"); v != "" {
		if v == "off" {
			c.idleDelay = 0
		} else if c.idleDelay, err = parseDelay(v); err != nil {
			return c, fmt.Errorf("FAKEAGENT_IDLE_DELAY: %w", err)
		}
	}
	return c, nil
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// parseDelay reads a Go duration or a number of milliseconds.
func parseDelay(v string) (time.Duration, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("negative delay %q", v)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration or a number of milliseconds: %q", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative delay %q", v)
	}
	return d, nil
}

// command is one parsed prompt line.
type command struct {
	verb string // reply, tool, run, fail, sleep, clear, exit
	arg  string // the reply text or the tool command
	ms   int    // how long sleep, or the tool call, takes
}

// parseCommand reads the prompt language of the package doc. A line that
// is not a well-formed command is a plain prompt answered "ok".
func parseCommand(line string) command {
	line = strings.TrimSpace(line)
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "reply", "tool", "run":
		if arg != "" {
			return command{verb: verb, arg: arg}
		}
	case "fail":
		if arg == "" {
			return command{verb: "fail"}
		}
	case "limit":
		if arg == "" {
			// The personas without a limit turn answer it as a prompt.
			return command{verb: "limit", arg: "ok"}
		}
	case "sleep":
		if n, err := strconv.Atoi(arg); err == nil && n >= 0 {
			return command{verb: "sleep", ms: n, arg: "ok"}
		}
	case "slow":
		ms, cmd, _ := strings.Cut(arg, " ")
		cmd = strings.TrimSpace(cmd)
		if n, err := strconv.Atoi(ms); err == nil && n >= 0 && cmd != "" {
			return command{verb: "run", arg: cmd, ms: n}
		}
	case "clear", "/clear":
		if arg == "" {
			return command{verb: "clear"}
		}
	case "exit", "/exit", "/quit", "quit":
		if arg == "" {
			return command{verb: "exit"}
		}
	}
	return command{verb: "reply", arg: "ok"}
}

// waitResult is how a wait inside a turn ended.
type waitResult int

const (
	waitDone        waitResult = iota
	waitInterrupted            // Esc or Ctrl-C
	waitHangup                 // the terminal or the process is going away
)

// agent is the running fake: terminal, hooks, and the persona.
type agent struct {
	p      persona
	cfg    config
	cwd    string
	home   string
	pid    int
	tty    *tty
	sig    chan os.Signal
	hooks  map[string][]hookHandler
	hungUp bool
	logMu  sync.Mutex
	queue  []string // lines to run before reading the keyboard
	line   []rune   // the line being typed
}

// write prints to the terminal.
func (a *agent) write(s string) { a.tty.write(s) }

// println prints s and a line end.
func (a *agent) println(s string) { a.tty.write(s + "\n") }

// next waits for a key, a signal, or timer (which may be nil).
func (a *agent) next(timer <-chan time.Time) key {
	if a.hungUp {
		return key{kind: kHangup}
	}
	select {
	case k := <-a.tty.keys:
		if k.kind == kEOF {
			a.hungUp = true
		}
		return k
	case s := <-a.sig:
		if isInterrupt(s) {
			return key{kind: kCtrlC}
		}
		a.hungUp = true
		return key{kind: kHangup}
	case <-timer:
		return key{kind: kTimer}
	}
}

// pause waits d during a turn. Esc or Ctrl-C interrupts it; typed text is
// kept for the next prompt (Enter queues it, as the real CLIs queue
// messages typed during a turn).
func (a *agent) pause(d time.Duration) waitResult {
	if a.hungUp {
		return waitHangup
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		switch k := a.next(t.C); k.kind {
		case kTimer:
			return waitDone
		case kEsc, kCtrlC:
			return waitInterrupted
		case kHangup, kEOF:
			return waitHangup
		default:
			a.typeKey(k)
		}
	}
}

// typeKey edits the line being typed while a turn runs.
func (a *agent) typeKey(k key) {
	switch k.kind {
	case kRune:
		a.line = append(a.line, k.r)
	case kBackspace:
		if len(a.line) > 0 {
			a.line = a.line[:len(a.line)-1]
		}
	case kEnter:
		if s := strings.TrimSpace(string(a.line)); s != "" {
			a.queue = append(a.queue, s)
		}
		a.line = nil
	}
}

// approve shows the approval question and waits for the answer: y, 1 or
// Enter approve; n, Esc or Ctrl-C deny. onDelay, when not nil, runs once
// if the question is still open after delay.
func (a *agent) approve(question string, delay time.Duration, onDelay func()) (bool, waitResult) {
	a.write(question)
	var timer <-chan time.Time
	if onDelay != nil {
		t := time.NewTimer(delay)
		defer t.Stop()
		timer = t.C
	}
	for {
		k := a.next(timer)
		switch k.kind {
		case kTimer:
			timer = nil
			onDelay()
		case kRune:
			switch k.r {
			case 'y', 'Y', '1':
				a.println(string(k.r))
				return true, waitDone
			case 'n', 'N':
				a.println(string(k.r))
				return false, waitDone
			}
		case kEnter:
			a.println("")
			return true, waitDone
		case kEsc, kCtrlC:
			a.println("")
			return false, waitDone
		case kHangup, kEOF:
			return false, waitHangup
		}
	}
}

// run is the agent's life: start, then prompts until exit or hangup.
func (a *agent) run() int {
	if err := a.p.start(a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if a.cfg.script != "" {
		lines, err := readScript(a.cfg.script)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
			a.p.end(a, true)
			return 1
		}
		a.queue = append(lines, a.queue...)
	}
	var idle <-chan time.Time
	var idleTimer *time.Timer
	armIdle := func() {
		if a.cfg.idleDelay > 0 {
			idleTimer = time.NewTimer(a.cfg.idleDelay)
			idle = idleTimer.C
		}
	}
	disarmIdle := func() {
		if idleTimer != nil {
			idleTimer.Stop()
		}
		idle = nil
	}
	ctrlC, ctrlD := false, false
	a.write("> ")
	for {
		if len(a.queue) > 0 && !a.hungUp {
			line := a.queue[0]
			a.queue = a.queue[1:]
			a.println(line)
			disarmIdle()
			if a.submit(line) {
				return 0
			}
			if a.hungUp {
				break
			}
			armIdle()
			a.write("> " + string(a.line))
			continue
		}
		k := a.next(idle)
		if k.kind != kCtrlC {
			ctrlC = false
		}
		if k.kind != kCtrlD {
			ctrlD = false
		}
		switch k.kind {
		case kRune:
			a.line = append(a.line, k.r)
			a.write(string(k.r))
		case kBackspace:
			if len(a.line) > 0 {
				a.line = a.line[:len(a.line)-1]
				a.write("\b \b")
			}
		case kEnter:
			line := strings.TrimSpace(string(a.line))
			a.line = nil
			a.println("")
			if line == "" {
				a.write("> ")
				continue
			}
			disarmIdle()
			if a.submit(line) {
				return 0
			}
			if a.hungUp {
				break
			}
			armIdle()
			a.write("> " + string(a.line))
		case kCtrlC:
			if len(a.line) > 0 {
				a.line = nil
				a.write("\r\x1b[2K> ")
				continue
			}
			if ctrlC {
				a.println("")
				a.p.end(a, false)
				return 0
			}
			ctrlC = true
			a.write("\r\x1b[2KPress Ctrl-C again to exit\n> ")
		case kCtrlD:
			if len(a.line) > 0 {
				continue
			}
			if ctrlD {
				a.println("")
				a.p.end(a, false)
				return 0
			}
			ctrlD = true
			a.write("\r\x1b[2KPress Ctrl-D again to exit\n> ")
		case kTimer:
			disarmIdle()
			a.p.idle(a)
		case kHangup, kEOF:
		}
		if a.hungUp {
			break
		}
	}
	disarmIdle()
	a.p.end(a, true)
	return 129
}

// submit runs one prompt line; it reports whether the agent exited.
func (a *agent) submit(line string) bool {
	c := parseCommand(line)
	switch c.verb {
	case "exit":
		a.p.end(a, false)
		return true
	case "clear":
		a.p.clear(a)
		return false
	}
	a.p.turn(a, line, c)
	return false
}

// readScript reads prompt lines from a file; blank lines and lines
// starting with # are skipped.
func readScript(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return lines, nil
}
