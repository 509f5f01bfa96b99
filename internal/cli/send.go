package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/keyname"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newSendCmd(f *Factory) *cobra.Command {
	var enter, keys bool
	var confirm confirmFlags
	cmd := &cobra.Command{
		Use:   "send NAME TEXT | send NAME --keys KEY...",
		Short: "Type text or keys into a session's pane",
		Long: "Type TEXT into a session's pane. With --keys, the arguments are key names as tmux's\n" +
			"send-keys takes them: Enter Escape Tab BTab BSpace Space Up Down Left Right Home End\n" +
			"PageUp PageDown Insert Delete F1…F12, a single character, and modifiers C- M- S- (C-c,\n" +
			"M-x, S-Up, C-M-Left); names are case-insensitive. An unknown name sends nothing.",
		Example: "  muster send api 'make test' --enter\n  muster send api --keys C-c\n  muster send api --keys Escape : w q Enter\n" +
			"  muster send api 'fix the flaky test' --enter --confirm --wait-done",
		Args: func(cmd *cobra.Command, args []string) error {
			if keys {
				return cobra.MinimumNArgs(2)(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			args = f.sessionArgs(args)
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
			if confirm.on {
				if keys || !enter {
					return &UserError{Err: errors.New("--confirm confirms a prompt: give TEXT and --enter, not --keys"), Code: ExitUsage}
				}
				return sendConfirmed(cmd, f, args[0], text, confirm)
			}
			if confirm.force || confirm.waitDone || confirm.asJSON || cmd.Flags().Changed("timeout") {
				return &UserError{Err: errors.New("--force, --timeout, --wait-done and --json go with --confirm"), Code: ExitUsage}
			}
			c, err := f.sessionCaller(cmd.Context())
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
	cmd.Flags().BoolVar(&confirm.on, "confirm", false, "exit 0 only once the agent was seen to take the prompt; refuse, typing nothing, while it waits for approval or sits in a dialog")
	cmd.Flags().BoolVar(&confirm.force, "force", false, "with --confirm: type even when the agent is blocked")
	cmd.Flags().DurationVar(&confirm.timeout, "timeout", 30*time.Second, "with --confirm: how long to wait for the agent to take the prompt")
	cmd.Flags().BoolVar(&confirm.waitDone, "wait-done", false, "with --confirm: also wait for the turn to end and print its outcome")
	cmd.Flags().BoolVar(&confirm.asJSON, "json", false, "with --confirm: print the result as JSON")
	return cmd
}

type confirmFlags struct {
	on, force, waitDone, asJSON bool
	timeout                     time.Duration
}

// sendConfirmed types a prompt through op send_confirm and says how the
// agent took it; with --wait-done a turn that did not succeed exits 1.
func sendConfirmed(cmd *cobra.Command, f *Factory, name, text string, o confirmFlags) error {
	if o.timeout <= 0 || o.timeout > time.Hour {
		return &UserError{Err: fmt.Errorf("--timeout %s: want more than 0 and at most 1h", o.timeout), Code: ExitUsage}
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	defer c.Close()
	var res proto.SendConfirmResult
	args := proto.SendConfirmArgs{Name: name, Text: text, Force: o.force, TimeoutMS: o.timeout.Milliseconds(), WaitDone: o.waitDone}
	if err := c.Call(cmd.Context(), proto.OpSendConfirm, args, &res); err != nil {
		return err
	}
	if o.asJSON {
		if err := writeJSON(f.IO.Out, res); err != nil {
			return err
		}
	} else {
		line := termtext.Line
		if res.Forced {
			fmt.Fprintf(f.IO.ErrOut, "muster: %s was blocked (%s); typed anyway (--force)\n", line(name), line(res.Blocked))
		}
		how := "its run started"
		if res.Took == proto.TookTerminalWorking {
			how = "its terminal says it works"
		}
		run := ""
		if res.RunID != "" {
			run = " (run " + line(res.RunID) + ")"
		}
		fmt.Fprintf(f.IO.Out, "%s took the prompt: %s%s; evidence: %s\n", line(name), how, run, line(res.Detail))
		if res.Outcome != "" {
			fmt.Fprintf(f.IO.Out, "%s: the turn ended: %s\n", line(name), line(res.Outcome))
		}
	}
	if o.waitDone && res.Outcome != string(proto.StateSucceeded) {
		return &UserError{Err: fmt.Errorf("%s: the turn ended %s", name, res.Outcome), Code: ExitError}
	}
	return nil
}
