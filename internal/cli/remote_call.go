package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// A command on HOST:NAME that needs no terminal and whose every call is
// answered by one reply runs here, against the host's daemon through the
// local daemon's relay to it (op host.call): no ssh process per command,
// and what it prints is this muster's. When that relay cannot carry it
// (no local daemon, or a host muster without a relay) the command runs
// on the host's own muster over ssh, as the others do.

// hostTarget is the host a command names, with the command's arguments
// without the host prefix (args) and as the host's muster would run it
// over ssh (argv).
type hostTarget struct {
	host config.Host
	link host.Link
	args []string
	argv []string
}

// relayable says whether cmd can run through the relay: its calls are
// ops answered by one reply. send --confirm waits for the agent, which
// would hold the host's one relay for as long.
func relayable(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "capture", "kill", "rename", "explain", "ack":
		return true
	case "send":
		confirm, _ := cmd.Flags().GetBool("confirm")
		return !confirm
	}
	return false
}

// caller is a daemon a command calls: this machine's, or a host's through
// the relay.
type caller interface {
	Call(ctx context.Context, op string, args, out any) error
	Close() error
}

// sessionCaller is the daemon that holds the session the command names.
func (f *Factory) sessionCaller(ctx context.Context) (caller, error) {
	if f.onHost == nil {
		c, err := f.Client(ctx)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	return hostCaller{dirs: d, host: f.onHost.host}, nil
}

// sessionArgs are the command's arguments as the daemon holding the
// session names them: without a host prefix.
func (f *Factory) sessionArgs(args []string) []string {
	if f.onHost == nil {
		return args
	}
	return f.onHost.args
}

// hostCaller calls one host's daemon through the local daemon's relay.
// host.ErrUseSSH comes back as it is: execute then runs the command on
// the host over ssh (the op did not reach it).
type hostCaller struct {
	dirs paths.Dirs
	host config.Host
}

func (h hostCaller) Call(ctx context.Context, op string, args, out any) error {
	err := host.Call(ctx, h.dirs, Version, h.host, op, args, out)
	if _, ok := errors.AsType[*host.Error](err); ok {
		return hostError(err)
	}
	return err
}

func (hostCaller) Close() error { return nil }

// overSSH runs the command on the host's own muster, for when the relay
// could not carry it.
func (t *hostTarget) overSSH(ctx context.Context, f *Factory, command string) error {
	if err := f.refuseFromPane(ctx, command, t.host.Name); err != nil {
		return err
	}
	return runOnHost(ctx, f, t.link, false, false, t.argv)
}

// refuseFromPane refuses a command that would drive a session on host
// over ssh when this process runs inside a pane the user has not made
// theirs (new --control): the local daemon refuses the same through its
// relay (host.call), and over ssh the host would take the command for
// one typed outside every pane. Reading (show, explain) is let through,
// as the relay lets it. A process in a pane could still run ssh itself;
// what this keeps is that Muster is not the way.
func (f *Factory) refuseFromPane(ctx context.Context, command, host string) error {
	if !f.insidePane() || command == "show" || command == "explain" {
		return nil
	}
	c, err := f.RunningClient(ctx)
	var st proto.DaemonStatus
	if err == nil {
		defer c.Close()
		err = c.Call(ctx, proto.OpStatus, nil, &st)
	}
	if err != nil {
		return &UserError{Err: fmt.Errorf("refused: this process runs inside a muster pane whose daemon cannot say whether it may drive host %s's sessions: %v", host, err), Code: ExitError}
	}
	if st.Caller == nil || st.Caller.Control {
		return nil
	}
	return &UserError{
		Err:  fmt.Errorf("refused: this process runs inside muster pane %q; it may not %s sessions on host %s", st.Caller.Pane, command, host),
		Hint: "drive another host's sessions from a terminal outside muster, or from a pane made with `muster new --control`",
		Code: ExitError,
	}
}
