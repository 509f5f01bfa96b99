package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

func newDaemonStatusCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the daemon runs, and its pid and sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// status is frozen too: it shows a daemon of any version.
			c, err := f.frozenClient(cmd.Context())
			if err != nil {
				if errors.Is(err, client.ErrDaemonNotRunning) {
					if asJSON {
						writeJSON(f.IO.Out, map[string]any{"running": false})
					} else {
						fmt.Fprintln(f.IO.Out, "muster daemon is not running")
					}
					return &UserError{Err: errors.New("the daemon is not running"), Code: ExitUnreachable, Hint: "any muster command starts it; or run `muster daemon`"}
				}
				return err
			}
			defer c.Close()
			var st proto.DaemonStatus
			if err := c.Call(cmd.Context(), proto.OpStatus, nil, &st); err != nil {
				return err
			}
			protocol := max(st.Protocol, 1) // protocol 1 did not report it
			if asJSON {
				return writeJSON(f.IO.Out, map[string]any{"running": true, "pid": st.PID, "version": st.Version, "started_at": st.StartedAt, "home": st.Home, "sessions": st.Sessions, "panes": st.Panes, "protocol": protocol})
			}
			fmt.Fprintf(f.IO.Out, "muster daemon %s running, pid %d, since %s\n%d sessions, %d live panes\nstate: %s\n", st.Version, st.PID, st.StartedAt, st.Sessions, st.Panes, st.Home)
			if protocol != proto.ControlVersion {
				fmt.Fprintf(f.IO.Out, "it speaks control protocol %d and this muster %d: run `muster daemon restart` to replace it (it keeps every pane)\n", protocol, proto.ControlVersion)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
