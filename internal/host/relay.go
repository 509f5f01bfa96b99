package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

// ErrNoRelay is a host whose muster has no `relay` command (a version
// from before it): what it serves goes through its CLI instead, one ssh
// command per call.
var ErrNoRelay = errors.New("its muster has no relay command")

// relayExitWait bounds waiting for ssh to say why a relay ended before
// its version exchange: the exit status and stderr tell an ssh failure
// from a muster without relay or of another protocol.
const relayExitWait = 5 * time.Second

// Dial opens a control connection to the host's daemon: `muster relay`
// run there over the host's master connection (started when there is
// none), its stdin and stdout the connection, which the version exchange
// runs over first. version is this binary's. An ssh failure is an
// *Error, a daemon that speaks no protocol of ours a *SkewError, a muster
// without relay ErrNoRelay. No descriptor crosses ssh: only ops that
// pass none may be called. Closing the client ends the relay.
func (l Link) Dial(ctx context.Context, version string) (*client.Client, error) {
	if l.Host.Muster == "" {
		return nil, &Error{Host: l.Host.Name, State: NeedsAttention, Reason: ErrNotInstalled.Error(),
			Command: ShellQuote("muster", "host", "add", l.Host.Name, l.Host.Dest)}
	}
	if err := l.Connect(ctx); err != nil {
		return nil, err
	}
	// One socket for ssh's stdin and stdout: our end has deadlines, which
	// is how a call's context cuts it short.
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "relay"), os.NewFile(uintptr(fds[1]), "relay")
	nc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	// Not ctx: the connection outlives the dial.
	cmd := l.Command(context.Background(), false, l.Host.Muster, "relay")
	cmd.Stdin, cmd.Stdout = theirs, theirs
	rc := &relayConn{Conn: nc, exited: make(chan struct{})}
	cmd.Stderr = &rc.stderr
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	rc.proc = cmd.Process
	go func() {
		rc.waitErr = cmd.Wait()
		close(rc.exited)
	}()
	c, err := client.Over(ctx, rc, "host "+l.Host.Name, version)
	if err == nil {
		return c, nil
	}
	defer rc.Close()
	if pe, ok := errors.AsType[*proto.Error](err); ok && pe.Code == proto.CodeVersion {
		if se := ParseSkew(l.Host.Name, pe.Message); se != nil {
			return nil, se
		}
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	if ctx.Err() != nil {
		l.dropMaster()
		return nil, l.classify(ctx, "", err)
	}
	select {
	case <-rc.exited:
	case <-time.After(relayExitWait):
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	stderr := rc.stderr.String()
	ee, exited := errors.AsType[*exec.ExitError](rc.waitErr)
	switch {
	case !exited || ee.ExitCode() == 255:
		return nil, l.classify(ctx, stderr, err)
	case strings.Contains(stderr, `unknown command "relay"`):
		return nil, fmt.Errorf("host %s: %w", l.Host.Name, ErrNoRelay)
	}
	return nil, remoteFailure(l, ee.ExitCode(), stderr)
}

// relayConn is our end of the relay's ssh: closing it ends the relay
// (ssh hears its stdin end) and reaps ssh, killed if it lingers.
type relayConn struct {
	net.Conn
	stderr  syncBuffer
	proc    *os.Process
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func (c *relayConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		go func() {
			select {
			case <-c.exited:
			case <-time.After(relayExitWait):
				c.proc.Kill()
			}
		}()
	})
	return err
}

// syncBuffer is ssh's stderr, written by exec's copier while Dial may
// read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 16<<10 {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
