package hookevent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// Pane environment variables (DESIGN §3).
const (
	EnvEventSocket     = "MUSTER_EVENT_SOCKET"
	EnvSurfaceID       = "MUSTER_SURFACE_ID"
	EnvEventCapability = "MUSTER_EVENT_CAPABILITY"
	EnvAgentSessionID  = "MUSTER_AGENT_SESSION_ID"
	// EnvDebug=1 makes the helper say on stderr what it sent or why not.
	EnvDebug = "MUSTER_HOOK_DEBUG"
)

// Options are one invocation's surroundings; zero fields mean the process's
// own (os.Stdin, os.Stdout, os.Stderr, os.Getenv, time.Now) and the default
// timeouts.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Now    func() time.Time
	// Timeout bounds each connection attempt and each exchange (default 1 s).
	Timeout time.Duration
	// StdinTimeout is how long the payload may stall before it is given
	// up (default 2 s); readPayload bounds the whole read as well.
	StdinTimeout time.Duration
}

func (o *Options) defaults() {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.StdinTimeout <= 0 {
		o.StdinTimeout = 2 * time.Second
	}
}

// Main runs `muster hook event` on the process's own streams. args are the
// words after `event`. It always returns 0: a hook that fails or exits 2
// would disturb or even block the agent.
func Main(args []string) int { return Run(args, Options{}) }

// Run handles one hook invocation and returns the exit status, always 0.
// It reads the payload, maps it, and sends the resulting events to the
// events socket of the pane environment. It is silent when there is no pane
// environment (hooks installed globally also fire outside Muster) and when
// the daemon is down; a payload it cannot read gets one warning line on
// stderr. Stdout stays empty except for the `{}` that Cursor and Gemini
// require on every path.
func Run(args []string, o Options) int {
	o.defaults()
	// Options are not defined: ignore them rather than fail the hook. So is
	// a trailing shell comment (the installer's "# muster-hooks:v1" marker),
	// in case a provider runs the command without a shell.
	if i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "#") }); i >= 0 {
		args = args[:i]
	}
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-") })
	if len(args) != 1 || !KnownProvider(args[0]) {
		drain(o.Stdin, o.StdinTimeout)
		if len(args) == 1 {
			warn(o.Stderr, "unknown provider %q (want one of %s)", args[0], strings.Join(Providers(), ", "))
		} else {
			warn(o.Stderr, "usage: muster hook event PROVIDER (one of %s)", strings.Join(Providers(), ", "))
		}
		return 0
	}
	provider := args[0]
	if NeedsJSONReply(provider) {
		defer io.WriteString(o.Stdout, "{}\n")
	}
	debug := o.Getenv(EnvDebug) == "1"

	socket := o.Getenv(EnvEventSocket)
	capability := o.Getenv(EnvEventCapability)
	surface := o.Getenv(EnvSurfaceID)
	if socket == "" || capability == "" || surface == "" {
		if !routedBySession(provider) {
			// Not in a Muster pane: nothing to report, nothing to say.
			drain(o.Stdin, o.StdinTimeout)
			if debug {
				warn(o.Stderr, "no pane environment; nothing sent")
			}
			return 0
		}
		// Codex hooks run in a shared process whose environment may belong
		// to another pane or to none; the daemon routes them by session.
		if socket == "" {
			dirs, err := paths.Resolve(o.Getenv)
			if err != nil {
				drain(o.Stdin, o.StdinTimeout)
				if debug {
					warn(o.Stderr, "%v", err)
				}
				return 0
			}
			socket = dirs.EventSocket()
		}
	}

	payload, err := readPayload(o.Stdin, o.StdinTimeout)
	if err != nil {
		warn(o.Stderr, "%s hook payload: %v", provider, err)
		return 0
	}
	in, err := parse(provider, payload)
	if err != nil {
		warn(o.Stderr, "%s hook payload: %v", provider, err)
		return 0
	}
	now := o.Now()

	var st *State
	var sf *stateFile
	if in.Session != "" {
		sf, err = openState(StateDir(socket), provider, in.Session)
		if err == nil {
			st = sf.load(in.Session)
		} else if debug {
			warn(o.Stderr, "%v; continuing without state", err)
		}
	}
	res := apply(provider, in, payload, st, now)
	// The state is written after the events are sent, with the lock held
	// all along: it records what the daemon was told, so an event the
	// daemon refuses (forbidden, over quota, malformed) must leave it as it
	// was, or the next hook would be mapped against a turn the daemon never
	// saw (a repeat dropped, a run id reused).
	refused := send(o, debug, provider, socket, capability, surface, res)
	if sf != nil {
		switch {
		case refused:
		case res.Drop:
			err = sf.remove()
		case res.State != nil:
			err = sf.save(res.State)
		}
		if err != nil && debug {
			warn(o.Stderr, "%v", err)
		}
		sf.Close()
	}
	return 0
}

// send sends the events of res and reports whether the daemon refused one
// of them. An unreachable daemon or a lost answer is no refusal: the event
// may have been recorded, and a daemon that is down records nothing anyway.
func send(o Options, debug bool, provider, socket, capability, surface string, res Result) (refused bool) {
	if len(res.Events) == 0 {
		if debug {
			warn(o.Stderr, "%s %s ignored: %s", provider, res.Hook, res.Ignored)
		}
		return false
	}
	for _, m := range res.Events {
		env := Envelope(m, capability, surface)
		resp, err := Send(socket, env, o.Timeout)
		if debug {
			if err != nil {
				warn(o.Stderr, "%s %s → %s run %s: %v", provider, m.HookName, m.Kind, m.RunID.RawValue, err)
			} else {
				warn(o.Stderr, "%s %s → %s run %s: ok=%t %s", provider, m.HookName, m.Kind, m.RunID.RawValue, resp.OK, resp.Error)
			}
		}
		if err == nil && !resp.OK {
			refused = true
		}
		if errors.Is(err, ErrUnreachable) {
			break // daemon down: do not wait out the retry again
		}
	}
	return refused
}

// Envelope wraps a mapped event for the events socket of the pane whose
// surface and capability are given. The capability never appears anywhere
// but in its own field: it is cut out of the message.
func Envelope(ev proto.Event, capability, surface string) proto.Envelope {
	ev.SurfaceID = proto.RawID{RawValue: surface}
	if capability != "" && strings.Contains(ev.Message, capability) {
		ev.Message = strings.ReplaceAll(ev.Message, capability, "[redacted]")
	}
	return proto.Envelope{SchemaVersion: proto.EventSchemaVersion, Capability: capability, Event: ev}
}

func warn(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "muster hook event: %s\n", fmt.Sprintf(format, args...))
}

// maxPayloadWait bounds the whole read of a payload that keeps arriving:
// the agent waits for its hook, and a writer trickling a byte a second
// must not hold it longer than this.
const maxPayloadWait = 20 * time.Second

// readPayload reads stdin until its end, giving up when the writer sends
// nothing for idle or has not finished within maxPayloadWait. Idle, not a
// total: a 32 MiB payload on a loaded machine can take longer than idle to
// arrive while always making progress. A payload over
// proto.MaxHookPayload has its long strings cut (shrinkPayload) so that
// its event is kept; one over proto.MaxHookPayloadRead is given up.
func readPayload(r io.Reader, idle time.Duration) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	cr := &countingReader{r: r}
	go func() {
		b, err := io.ReadAll(io.LimitReader(cr, proto.MaxHookPayloadRead+1))
		done <- result{b, err}
	}()
	tick := time.NewTicker(idle)
	defer tick.Stop()
	deadline := time.NewTimer(maxPayloadWait)
	defer deadline.Stop()
	var seen int64
	for {
		select {
		case res := <-done:
			if res.err != nil {
				return nil, fmt.Errorf("read stdin: %w", res.err)
			}
			if len(res.b) > proto.MaxHookPayloadRead {
				drain(r, idle)
				return nil, fmt.Errorf("larger than %d bytes", proto.MaxHookPayloadRead)
			}
			if len(res.b) > proto.MaxHookPayload {
				return shrinkPayload(res.b)
			}
			if len(strings.TrimSpace(string(res.b))) == 0 {
				return nil, errors.New("empty")
			}
			return res.b, nil
		case <-tick.C:
			n := cr.n.Load()
			if n == seen {
				return nil, fmt.Errorf("no end of input: nothing read for %v", idle)
			}
			seen = n
		case <-deadline.C:
			return nil, fmt.Errorf("no end of input within %v", maxPayloadWait)
		}
	}
}

// countingReader counts what was read, for readPayload's idle check.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// drain consumes stdin so that a provider writing a large payload never
// sees a broken pipe, giving up after timeout.
func drain(r io.Reader, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, io.LimitReader(r, 64<<20))
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// FastPath reports whether args (the process arguments after the program
// name) are a `muster hook event …` invocation that Main can serve without
// the command tree: agents run it on every hook, and building cobra's tree,
// the signal handler and the terminal probes is time the agent waits for.
// Help requests still go through the command tree, and
// MUSTER_HOOK_FASTPATH=0 forces it (for bench/hook.sh).
func FastPath(args []string, getenv func(string) string) bool {
	if len(args) < 2 || args[0] != "hook" || args[1] != "event" || getenv("MUSTER_HOOK_FASTPATH") == "0" {
		return false
	}
	for _, a := range args[2:] {
		if a == "-h" || a == "--help" || a == "help" {
			return false
		}
	}
	return true
}
