package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

func newDaemonStopCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the daemon and every pane it runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Any version's daemon serves stop the same way, so that a
			// daemon this binary cannot otherwise talk to can be replaced.
			c, err := f.frozenClient(cmd.Context())
			if err != nil {
				if errors.Is(err, client.ErrDaemonNotRunning) {
					fmt.Fprintln(f.IO.ErrOut, "muster daemon is not running")
					return nil
				}
				return err
			}
			defer c.Close()
			if err := c.Call(cmd.Context(), proto.OpStop, nil, nil); err != nil {
				return err
			}
			// The daemon closes the connection once every pane is down.
			io.Copy(io.Discard, c.Reader())
			dirs, _ := f.Dirs()
			waitDaemonExit(dirs.Runtime)
			fmt.Fprintln(f.IO.ErrOut, "muster daemon stopped")
			return nil
		},
	}
}

// waitDaemonExit waits (bounded) until the daemon of runtimeDir has exited,
// which is when its lock is free: its panes are closed by then.
func waitDaemonExit(runtimeDir string) {
	path := filepath.Join(runtimeDir, "daemon.lock")
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		f.Close()
		if err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
