package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/spf13/cobra"
)

func newRelayCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "relay",
		Short: "Pipe stdin and stdout to this machine's daemon (what other machines run over ssh)",
		Long: "relay connects to the daemon of the user it runs as on this machine (its control.sock),\n" +
			"starting it when none runs as every command does, then copies stdin to the daemon and\n" +
			"the daemon's answers to stdout until either side ends. Another machine that has this one\n" +
			"as a host runs `ssh -T HOST muster relay` and speaks the control protocol through it,\n" +
			"version exchange first. Nothing can pass a descriptor over it, so attach there hands\n" +
			"no terminal to the daemon. The daemon treats the relay as any client outside a pane.\n\n" +
			"It exits 0 when the daemon or stdin ends the conversation, 1 with one line on stderr\n" +
			"when it could not reach the daemon or a copy failed.",
		// People never run it; the help of every host command mentions ssh.
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := relay(cmd.Context(), f, f.IO.In, f.IO.Out)
			if err != nil && !errors.Is(err, context.Canceled) {
				// One line, no hint: the far side shows it as the host's
				// reason, and reads a version mismatch out of it.
				return fmt.Errorf("relay: %s", dashboardErrorText(err))
			}
			return err
		},
	}
}

// relay pipes in to the daemon and the daemon to out. The daemon's end
// is the connection the version exchange of this binary ran on, which
// is how a daemon that cannot start or speaks no protocol of ours is
// reported before a byte of the far side's is read; the far side runs
// its own exchange next, which the daemon answers afresh.
func relay(ctx context.Context, f *Factory, in io.Reader, out io.Writer) error {
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	conn, ok := c.Conn().(*net.UnixConn)
	if !ok {
		c.Close()
		return errors.New("the daemon's connection is not a Unix socket")
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()

	var mu sync.Mutex
	var inErr error
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if _, werr := conn.Write(buf[:n]); werr != nil {
					// The daemon closed: the copy out sees it end.
					return
				}
			}
			if errors.Is(err, io.EOF) {
				// The daemon hears the hang-up, answers what it was
				// sent and closes, which ends the copy out.
				conn.CloseWrite()
				return
			}
			if err != nil {
				mu.Lock()
				inErr = err
				mu.Unlock()
				conn.Close()
				return
			}
		}
	}()
	// The reader may hold bytes the exchange read ahead.
	_, err = io.Copy(out, c.Reader())
	mu.Lock()
	defer mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case inErr != nil:
		return fmt.Errorf("read stdin: %w", inErr)
	case err != nil:
		return fmt.Errorf("copy the daemon's answers to stdout: %w", err)
	}
	return nil
}
