// Package host reaches the machines of `[[host]]` in config.toml with the
// user's own ssh: one private ControlMaster per host (its socket in the
// runtime directory, ControlPersist), BatchMode always, so that nothing
// ever prompts from a command or the background; what needs a person (an
// unknown host key, a password, MFA) becomes the needs-attention state with
// the exact ssh command to run once by hand. It installs this muster on a
// host (copied when the OS and architecture match, checked by SHA-256),
// runs the host's own muster for every operation on HOST:NAME (each host's
// daemon owns its panes and handles its own hooks: nothing but the
// commands' answers crosses the network), and remembers when each host was
// last seen. Listing every host's sessions and attention items goes
// through the local daemon, which holds one relay to each host
// (hostcall.go), when it can. It speaks no network protocol of its own and opens no port.
package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/paths"
)

// A host's state, as `muster host ls` shows it.
const (
	Connected      = "connected"
	Connecting     = "connecting"
	Unreachable    = "unreachable"
	NeedsAttention = "needs-attention"
)

// ControlPersist is how long a host's master connection outlives its last
// command, in seconds.
const ControlPersist = 300

// connectTimeout bounds ssh's TCP connect and handshake (ConnectTimeout).
const connectTimeout = 5

// Error is a host that could not be used, and why.
type Error struct {
	Host   string
	State  string // Unreachable, Connecting or NeedsAttention
	Reason string
	// Command, for NeedsAttention, is what to run once by hand.
	Command string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("host %s: %s: %s", e.Host, e.State, e.Reason)
	if e.Command != "" {
		msg += "; run once by hand: " + e.Command
	}
	return msg
}

// Link is the way to one host.
type Link struct {
	Host config.Host
	ssh  config.SSH
	// socket is the ControlMaster's socket; empty when the runtime
	// directory's path is too long for one.
	socket string
	lock   string
}

// maxSocketPath leaves room under the 108 bytes of sun_path for the
// random suffix ssh adds while it creates the socket.
const maxSocketPath = 85

// NewLink returns the link to h, with its master socket under dirs.Runtime.
func NewLink(dirs paths.Dirs, ssh config.SSH, h config.Host) Link {
	l := Link{Host: h, ssh: ssh}
	dir := filepath.Join(dirs.Runtime, "ssh")
	l.lock = filepath.Join(dir, h.Name+".lock")
	if s := filepath.Join(dir, h.Name); len(s) <= maxSocketPath {
		l.socket = s
	}
	return l
}

func (l Link) sshBinary() string {
	if l.ssh.Command != "" {
		return l.ssh.Command
	}
	return "ssh"
}

// options are every ssh invocation's: never prompt, bound the connect,
// notice a dead link, forward nothing, and share the master.
func (l Link) options() []string {
	var o []string
	if l.ssh.Config != "" {
		o = append(o, "-F", l.ssh.Config)
	}
	o = append(o,
		"-o", "BatchMode=yes",
		"-o", fmt.Sprintf("ConnectTimeout=%d", connectTimeout),
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=3",
		"-o", "ForwardAgent=no",
		"-o", "ClearAllForwardings=yes",
		"-o", "LogLevel=ERROR",
	)
	if l.socket != "" {
		o = append(o, "-o", "ControlPath="+l.socket)
	} else {
		o = append(o, "-o", "ControlPath=none")
	}
	return o
}

// ManualCommand is the ssh command a person runs once to settle what
// BatchMode refused: it asks about the host key or for the password and
// MFA code, then leaves the master running for muster's commands.
func (l Link) ManualCommand() string {
	args := []string{l.sshBinary()}
	if l.ssh.Config != "" {
		args = append(args, "-F", l.ssh.Config)
	}
	if l.socket != "" {
		args = append(args, "-o", "ControlMaster=auto", "-o", "ControlPath="+l.socket, "-o", fmt.Sprintf("ControlPersist=%d", ControlPersist))
	}
	args = append(args, "--", l.Host.Dest, "true")
	return ShellQuote(args...)
}

// Connect makes sure the host's master connection is up, starting it when
// there is none. The master runs detached, with no descriptor of ours but
// a file for its errors: a master holding a pipe would keep a caller that
// reads to EOF (`muster ls | cat`) waiting for ControlPersist.
func (l Link) Connect(ctx context.Context) error {
	if l.socket == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.socket), 0o700); err != nil {
		return fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	lf, err := os.OpenFile(l.lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	defer lf.Close()
	// Two commands starting a master at once would leave one ssh -N
	// running without a socket.
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("host %s: lock: %w", l.Host.Name, err)
	}
	if _, err := os.Stat(l.socket); err == nil {
		if l.masterAlive(ctx) {
			return nil
		}
		// A master killed without cleaning up, or one that hangs.
		os.Remove(l.socket)
	}
	errf, err := os.CreateTemp(filepath.Dir(l.socket), "."+l.Host.Name+".err.*")
	if err != nil {
		return fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	defer os.Remove(errf.Name())
	defer errf.Close()
	args := append(l.options(), "-M", "-N", "-f", "-o", fmt.Sprintf("ControlPersist=%d", ControlPersist), "--", l.Host.Dest)
	cmd := exec.CommandContext(ctx, l.sshBinary(), args...)
	cmd.Stderr = errf
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if runErr == nil {
		return nil
	}
	b, _ := os.ReadFile(errf.Name())
	return l.classify(ctx, string(b), runErr)
}

// masterAlive asks the master over its socket whether it runs (ssh -O
// check: no network round trip), bounded, since a stuck master would
// hang every command.
func (l Link) masterAlive(ctx context.Context) bool {
	_, alive := l.checkMaster(ctx)
	return alive
}

// MasterPID is the process of the host's master connection, 0 when there
// is none (or it did not say): what the master reads, it reads from the
// host, so its read count shows whether the link carries anything.
func (l Link) MasterPID(ctx context.Context) int {
	if l.socket == "" {
		return 0
	}
	pid, _ := l.checkMaster(ctx)
	return pid
}

// checkMaster runs ssh -O check, which says "Master running (pid=N)".
func (l Link) checkMaster(ctx context.Context) (pid int, alive bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	args := append(l.options(), "-O", "check", "--", l.Host.Dest)
	cmd := exec.CommandContext(ctx, l.sshBinary(), args...)
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if cmd.Run() != nil {
		return 0, false
	}
	if _, rest, ok := bytes.Cut(out.Bytes(), []byte("(pid=")); ok {
		if digits, _, ok := bytes.Cut(rest, []byte(")")); ok {
			pid, _ = strconv.Atoi(string(digits))
		}
	}
	return pid, true
}

// Disconnect stops the host's master connection.
func (l Link) Disconnect(ctx context.Context) {
	if l.socket == "" {
		return
	}
	if _, err := os.Stat(l.socket); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	args := append(l.options(), "-O", "exit", "--", l.Host.Dest)
	cmd := exec.CommandContext(ctx, l.sshBinary(), args...)
	cmd.WaitDelay = time.Second
	cmd.Run()
	os.Remove(l.socket)
}

// dropMaster forgets a master that let a command hang (a stale socket
// hung every remote of agent-deck, #1421): the next command starts anew.
func (l Link) dropMaster() {
	if l.socket != "" {
		l.Disconnect(context.Background())
	}
}

// Command is the ssh command running argv on the host; tty asks for a
// terminal (-tt, for attach), else none (-T). The caller runs it.
func (l Link) Command(ctx context.Context, tty bool, argv ...string) *exec.Cmd {
	t := "-T"
	if tty {
		t = "-tt"
	}
	args := append(l.options(), t, "-o", "ControlMaster=no", "--", l.Host.Dest, ShellQuote(argv...))
	cmd := exec.CommandContext(ctx, l.sshBinary(), args...)
	cmd.WaitDelay = time.Second
	return cmd
}

// Probe runs a round trip through the host's master connection (a
// command that does nothing, there) and reports whether it came back
// before ctx ended. `ssh -O check` asks only the local master process,
// which answers while the link under it is silent; ssh's own keepalive
// notices that only after ServerAliveInterval × ServerAliveCountMax.
func (l Link) Probe(ctx context.Context) error {
	cmd := l.Command(ctx, false, "true")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("host %s: no answer through the connection: %w", l.Host.Name, context.Cause(ctx))
	}
	if err != nil {
		return l.classify(ctx, errb.String(), err)
	}
	return nil
}

// Shared reports whether the link's commands share one master
// connection; without one (a runtime path too long for a socket) each
// command connects anew and a probe would time a whole handshake.
func (l Link) Shared() bool { return l.socket != "" }

// Drop forgets the host's master connection, as after a link that went
// silent: the next command starts a new one.
func (l Link) Drop() { l.dropMaster() }

// RemoteExit is a remote command that ran and failed.
type RemoteExit struct {
	Code   int
	Stderr string
}

func (e *RemoteExit) Error() string {
	if s := strings.TrimSpace(e.Stderr); s != "" {
		return s
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// Run connects, runs argv on the host with stdin (may be nil) and returns
// its output. An ssh failure is an *Error; the command's own, a
// *RemoteExit, or a *SkewError when the host's daemon refused its muster
// for another control protocol.
func (l Link) Run(ctx context.Context, stdin *os.File, argv ...string) ([]byte, error) {
	if err := l.Connect(ctx); err != nil {
		return nil, err
	}
	cmd := l.Command(ctx, false, argv...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return out.Bytes(), nil
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() != 255 && ctx.Err() == nil {
		return out.Bytes(), remoteFailure(l, ee.ExitCode(), errb.String())
	}
	if ctx.Err() != nil {
		l.dropMaster()
	}
	return nil, l.classify(ctx, errb.String(), err)
}

// remoteFailure is a remote command's failure: its daemon's refusal of
// another protocol, said for this host, or the command's own.
func remoteFailure(l Link, code int, stderr string) error {
	if se := ParseSkew(l.Host.Name, stderr); se != nil {
		return se
	}
	return &RemoteExit{Code: code, Stderr: stderr}
}

// needsPerson are ssh's words for what BatchMode would not ask.
var needsPerson = []string{
	"host key verification failed",
	"remote host identification has changed",
	"host key is known",
	"no ed25519 host key", "no ecdsa host key", "no rsa host key",
	"permission denied",
	"too many authentication failures",
	"keyboard-interactive",
	"password",
	"authentication failed",
}

// classify turns ssh's failure into a state.
func (l Link) classify(ctx context.Context, stderr string, err error) *Error {
	reason := lastLine(stderr)
	e := &Error{Host: l.Host.Name, State: Unreachable, Reason: reason}
	low := strings.ToLower(stderr)
	for _, w := range needsPerson {
		if strings.Contains(low, w) {
			e.State, e.Command = NeedsAttention, l.ManualCommand()
			return e
		}
	}
	if reason == "" {
		if ctx.Err() != nil {
			e.State, e.Reason = Connecting, "no answer yet"
		} else {
			e.Reason = fmt.Sprintf("ssh failed: %v", err)
		}
	}
	return e
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "ssh:")); l != "" {
			return l
		}
	}
	return ""
}

// ShellQuote joins args as one POSIX shell command line: ssh hands the
// remote user's shell a single string.
func ShellQuote(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
