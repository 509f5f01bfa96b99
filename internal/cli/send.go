package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/keyname"
	"github.com/musterhq/muster/internal/proto"
)

func newSendCmd(f *Factory) *cobra.Command {
	var enter, keys bool
	cmd := &cobra.Command{
		Use:   "send NAME TEXT | send NAME --keys KEY...",
		Short: "Type text or keys into a session's pane",
		Long: "Type TEXT into a session's pane. With --keys, the arguments are key names as tmux's\n" +
			"send-keys takes them: Enter Escape Tab BTab BSpace Space Up Down Left Right Home End\n" +
			"PageUp PageDown Insert Delete F1…F12, a single character, and modifiers C- M- S- (C-c,\n" +
			"M-x, S-Up, C-M-Left); names are case-insensitive. An unknown name sends nothing.",
		Example: "  muster send api 'make test' --enter\n  muster send api --keys C-c\n  muster send api --keys Escape : w q Enter",
		Args: func(cmd *cobra.Command, args []string) error {
			if keys {
				return cobra.MinimumNArgs(2)(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			text := args[1]
			if keys {
				if enter {
					return &UserError{Err: errors.New("--enter does not go with --keys: add Enter to the key names"), Code: ExitUsage}
				}
				b, err := keyname.Encode(args[1:])
				if err != nil {
					return &UserError{Err: err, Code: ExitUsage}
				}
				text = string(b)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpSend, proto.SendArgs{Name: args[0], Text: text, Enter: enter}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVarP(&enter, "enter", "e", false, "press Enter after the text")
	cmd.Flags().BoolVarP(&keys, "keys", "k", false, "the arguments are key names (C-c Enter Escape Up …), as tmux send-keys")
	return cmd
}
