package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newKillCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "kill NAME",
		Short: "End a session's process and remove the session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = f.sessionArgs(args)
			c, err := f.sessionCaller(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			// What the session was, to say what the kill did; a failed
			// list only makes the message plainer.
			var list []proto.SessionInfo
			c.Call(cmd.Context(), proto.OpList, nil, &list)
			var was *proto.SessionInfo
			for i, s := range list {
				if s.Name == args[0] || s.ID == args[0] || (len(args[0]) >= 4 && strings.HasPrefix(s.ID, args[0])) {
					was = &list[i]
					break
				}
			}
			if err := c.Call(cmd.Context(), proto.OpKill, proto.Target{Name: args[0]}, nil); err != nil {
				return err
			}
			fmt.Fprintln(f.IO.Out, killMessage(args[0], was))
			return nil
		},
		ValidArgsFunction: completeSessions(f),
	}
}

// killMessage says what `muster kill` did to the session it found.
func killMessage(name string, was *proto.SessionInfo) string {
	if was == nil {
		return "killed " + termtext.Line(name) + ": the session is removed"
	}
	name = termtext.Line(was.Name)
	switch {
	case was.State == "running" && was.PID > 0:
		return fmt.Sprintf("killed %s: ended its process group (pid %d) and removed the session", name, was.PID)
	case was.State == "restorable":
		return "removed " + name + ": it was restorable and will not be resumed"
	}
	return "removed " + name + ": its process had already exited"
}
