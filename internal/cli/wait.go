package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

type waitOptions struct {
	Names   []string
	Until   []string
	Timeout time.Duration
	Any     bool
	JSON    bool
}

func newWaitCmd(f *Factory) *cobra.Command { return newWaitCmdWith(f, nil) }

func newWaitCmdWith(f *Factory, runF func(*waitOptions) error) *cobra.Command {
	var o waitOptions
	var until string
	cmd := &cobra.Command{
		Use:   "wait [NAME...] --until STATES [--timeout DURATION] [--any] [--json]",
		Short: "Wait until sessions reach a run state",
		Long: "Wait until every named session (or any one, with --any) is in one of STATES, a comma list of\n" +
			"run states (running, waitingInput, waitingApproval, succeeded, failed, interrupted, disconnected,\n" +
			"idle) or groups:\n" +
			"  done       the run is over (succeeded, failed, interrupted, disconnected, idle), or the\n" +
			"             session's pane exited or is restorable; --json then has the pane's exit_code\n" +
			"  waiting    the agent needs you: it asks (waitingInput, waitingApproval), or its turn ended\n" +
			"             and it is back at its prompt (succeeded, failed, interrupted, idle)\n" +
			"  attention  the session has an open attention item\n" +
			"A terminal state also counts once the session has gone idle after it. The current state is\n" +
			"checked first, so after sending a prompt wait for running before waiting for done or waiting;\n" +
			"then the daemon answers when the state is reached.\n\n" +
			"With --any and no NAME, it waits on every session, those made while it waits too, and prints\n" +
			"the ones that reached a state: `muster wait --any --until attention` returns when any agent\n" +
			"needs you.\n\n" +
			"Exit status: 0 reached, 1 timed out, 2 usage error, 3 a session disappeared.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Names = args
			if len(args) == 0 && !o.Any {
				return usagef("wait needs a session NAME, or --any to wait on every session")
			}
			if strings.TrimSpace(until) == "" {
				return usagef("wait needs --until STATES")
			}
			for _, s := range strings.Split(until, ",") {
				if s = strings.TrimSpace(s); s != "" {
					o.Until = append(o.Until, s)
				}
			}
			if _, _, err := proto.ExpandWaitStates(o.Until); err != nil {
				return usagef("--until: %v", err)
			}
			if o.Timeout < 0 {
				return usagef("--timeout must not be negative")
			}
			if runF != nil {
				return runF(&o)
			}
			return runWait(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&until, "until", "", "comma list of run states and groups (waiting, done, attention)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "give up after this long, e.g. 10m (default: wait forever)")
	cmd.Flags().BoolVar(&o.Any, "any", false, "return when any one session reaches a state")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the outcome as JSON")
	return cmd
}

func runWait(ctx context.Context, f *Factory, o waitOptions) error {
	if across, err := waitsAcrossHosts(f, o); err != nil || across {
		if err != nil {
			return err
		}
		return runWaitAcrossHosts(ctx, f, o)
	}
	res, err := waitLocal(ctx, f, o)
	if err != nil {
		return err
	}
	return reportWait(f, o, res)
}

// waitLocal asks this machine's daemon.
func waitLocal(ctx context.Context, f *Factory, o waitOptions) (proto.WaitResult, error) {
	c, err := f.Client(ctx)
	if err != nil {
		return proto.WaitResult{}, err
	}
	// The daemon answers once; a cancelled command just hangs up (Call
	// returns at once, and Close hangs up).
	defer c.Close()
	var res proto.WaitResult
	err = c.Call(ctx, proto.OpWait, proto.WaitArgs{
		Names: o.Names, Until: o.Until, TimeoutMS: o.Timeout.Milliseconds(), Any: o.Any,
	}, &res)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		if pe, ok := errors.AsType[*proto.Error](err); ok && pe.Code == proto.CodeNotFound {
			return res, &UserError{Err: errors.New(pe.Message), Hint: pe.Hint, Code: ExitGone}
		}
		return res, err
	}
	return res, nil
}

// reportWait prints the outcome and turns it into the exit status.
func reportWait(f *Factory, o waitOptions, res proto.WaitResult) error {
	if o.JSON {
		if err := writeJSON(f.IO.Out, res); err != nil {
			return err
		}
	} else {
		for _, s := range res.Sessions {
			if len(o.Names) == 0 && res.Status == proto.WaitReached && !s.Reached {
				// Waiting on every session: the ones that reached it.
				continue
			}
			state := termtext.Line(s.State)
			if state == "" {
				state = "unknown"
			}
			if s.Terminal != "" {
				state += " (after " + termtext.Line(s.Terminal) + ")"
			}
			switch {
			case s.Pane == proto.PaneExited && s.ExitCode != nil:
				state += fmt.Sprintf(", pane exited with code %d", *s.ExitCode)
			case s.Pane == proto.PaneExited, s.Pane == proto.PaneRestorable:
				state += ", pane " + s.Pane
			}
			if s.Gone {
				state = "gone"
			}
			fmt.Fprintf(f.IO.Out, "%s: %s\n", termtext.Line(s.Name), state)
		}
	}
	switch res.Status {
	case proto.WaitReached:
		return nil
	case proto.WaitGone:
		var gone []string
		for _, s := range res.Sessions {
			if s.Gone {
				gone = append(gone, s.Name)
			}
		}
		return &UserError{Err: fmt.Errorf("session %s disappeared", strings.Join(gone, ", ")), Code: ExitGone}
	case proto.WaitTimeout:
		return &UserError{Err: fmt.Errorf("timed out after %s", o.Timeout), Code: ExitError}
	}
	return fmt.Errorf("unexpected wait outcome %q", res.Status)
}
