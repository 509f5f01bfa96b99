// Package cli is the muster command tree (cobra). NewRootCmd lists every
// command; each has its own file, named by its path (ls.go, hooks_status.go),
// holding its builder and what only it uses. What several commands share
// has a file named for it: transcripts.go (the history index behind
// history, show, replay, stats and serve), complete.go, json.go and
// usage.go. Only Main chooses error wording, hints and exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// Version is set at build time with -ldflags "-X …/internal/cli.Version=…".
var Version = "0.1.0-dev"

// Exit codes, stable for scripts.
const (
	ExitOK          = 0
	ExitError       = 1 // also: `wait` timed out
	ExitUsage       = 2
	ExitGone        = 3 // `wait`: the session disappeared
	ExitUnreachable = 4 // the daemon could not be reached
	ExitInterrupted = 130
)

// UserError is an error meant for the user, with an optional hint and exit code.
type UserError struct {
	Err  error
	Hint string
	Code int
}

func (e *UserError) Error() string { return e.Err.Error() }
func (e *UserError) Unwrap() error { return e.Err }

// Userf builds a UserError with exit code 1.
func Userf(format string, args ...any) *UserError {
	return &UserError{Err: fmt.Errorf(format, args...), Code: ExitError}
}

// Factory carries what commands need, created lazily so that flag errors need
// no daemon.
type Factory struct {
	IO     *iostreams.IOStreams
	Getenv func(string) string
	// Now is the clock that ages and dates are shown against (ls,
	// attention, history, stats) and --since is read from; nil means
	// time.Now. Tests fix it.
	Now func() time.Time
	// Executable is the muster binary a daemon is started from; empty:
	// this process's. Tests that run commands in-process set it.
	Executable string
	dirs       *paths.Dirs
	// cfg is config.toml as this process first read it: one command reads
	// it once, so that two parts of one attach cannot disagree.
	cfg    *config.Config
	cfgErr error
	// onHost is the host this command's session is on, when the command
	// runs through the local daemon's relay (remote_call.go).
	onHost *hostTarget
}

// Config reads config.toml once per process; a broken file is an error
// every caller sees alike.
func (f *Factory) Config() (config.Config, error) {
	if f.cfg == nil {
		dirs, err := f.Dirs()
		if err != nil {
			return config.Config{}, err
		}
		cfg, err := config.Load(dirs.ConfigFile())
		f.cfg, f.cfgErr = &cfg, err
	}
	return *f.cfg, f.cfgErr
}

func (f *Factory) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// Dirs resolves Muster's directories.
func (f *Factory) Dirs() (paths.Dirs, error) {
	if f.dirs != nil {
		return *f.dirs, nil
	}
	d, err := paths.Resolve(f.Getenv)
	if err != nil {
		return paths.Dirs{}, err
	}
	f.dirs = &d
	return d, nil
}

// Client connects to the daemon, starting it on demand.
func (f *Factory) Client(ctx context.Context) (*client.Client, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	c, err := client.EnsureFrom(ctx, f.Executable, d, Version)
	if err != nil {
		return nil, err
	}
	f.showNotes(c)
	return c, nil
}

// showNotes prints what a daemon this command started said on its way up
// (a database it moved aside, a config it ignored), once.
func (f *Factory) showNotes(c *client.Client) {
	if c.Notes != "" {
		fmt.Fprintln(f.IO.ErrOut, termtext.Strip(c.Notes))
		c.Notes = ""
	}
}

// insidePane reports whether this process runs in a pane of this Muster
// home's daemon, by the variables every pane gets (like tmux's $TMUX). The
// daemon decides for itself from the process tree; this only lets a
// command explain itself before dialling.
func (f *Factory) insidePane() bool {
	if f.Getenv("MUSTER_SURFACE_ID") == "" {
		return false
	}
	d, err := f.Dirs()
	return err == nil && f.Getenv("MUSTER_EVENT_SOCKET") == d.EventSocket()
}

// RunningClient connects only to an already running daemon.
func (f *Factory) RunningClient(ctx context.Context) (*client.Client, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, d, Version)
}

// frozenClient connects to a running daemon of any version, for the frozen
// ops (status, stop) only.
func (f *Factory) frozenClient(ctx context.Context) (*client.Client, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	return client.DialFrozen(ctx, d)
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "muster",
		Short: "A terminal workspace for coding agents",
		Long: "Muster runs coding agents in persistent terminal panes, knows what each one is doing,\nand turns their transcripts into a searchable history.\n\n" +
			"Run `muster` with no command for the dashboard: every session, its state and what needs\nyou; c starts a session there. Quick start: muster hooks setup; muster new PROVIDER; muster",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.Args = cobra.NoArgs
	// With no command, muster opens the dashboard (on a terminal).
	root.RunE = func(cmd *cobra.Command, args []string) error { return runDashboard(f, cmd) }
	// Every command is listed here, and only here.
	root.AddCommand(
		// sessions and their panes
		newNewCmd(f),
		newLsCmd(f),
		newAttachCmd(f),
		newSendCmd(f),
		newWorktreeCmd(f),
		newAutocontinueCmd(f),
		newCaptureCmd(f),
		newRenameCmd(f),
		newKillCmd(f),
		newResumeCmd(f),
		// run states and the attention drawer
		newWaitCmd(f),
		newAttentionCmd(f),
		newAckCmd(f),
		newExplainCmd(f),
		// transcripts on disk
		newHistoryCmd(f),
		newShowCmd(f),
		newReplayCmd(f),
		newStatsCmd(f),
		newServeCmd(f),
		// the daemon and the agents' hooks
		newDaemonCmd(f),
		newHooksCmd(f),
		newHookCmd(f),
		// other machines
		newHostCmd(f),
		newRelayCmd(f),
	)
	// A command naming HOST:NAME runs on that host (remote.go).
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return forwardToHost(f, cmd, args) }
	// cobra adds help and completion when it executes; added now, their
	// argument errors are typed like every other command's.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	typeArgErrors(root)
	return root
}

// Main runs the CLI and returns the process exit code.
func Main(ctx context.Context, args []string) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &Factory{IO: iostreams.System(), Getenv: os.Getenv}
	return Run(ctx, f, args)
}

// Run executes args against f and maps the outcome to an exit code.
func Run(ctx context.Context, f *Factory, args []string) int {
	return execute(ctx, f, NewRootCmd(f), args)
}

func execute(ctx context.Context, f *Factory, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if errors.Is(err, host.ErrUseSSH) && f.onHost != nil {
		err = f.onHost.overSSH(ctx, f, cmd.Name())
	}
	if err == nil {
		return ExitOK
	}
	if cmd != nil && cmd.Name() == cobra.ShellCompRequestCmd {
		// cobra creates __complete (what completion scripts call) inside
		// Execute, after typeArgErrors ran; its Run returns no errors, so
		// what it fails with is its argument check.
		err = usageError{err}
	}
	return reportError(f, err)
}

// reportError prints err for the user and picks the exit code. Error
// texts can quote what an agent or a transcript chose (names, ids, paths),
// so they go through termtext like any other output.
func reportError(f *Factory, err error) int {
	w := f.IO.ErrOut
	say := func(msg, hint string) {
		fmt.Fprintf(w, "muster: %s\n", termtext.Strip(msg))
		if hint != "" {
			fmt.Fprintf(w, "  %s\n", termtext.Strip(hint))
		}
	}
	if pe, ok := errors.AsType[*paneExitError](err); ok {
		return pe.exitCode()
	}
	if re, ok := errors.AsType[*remoteExit](err); ok {
		// The host's muster printed its own messages.
		return re.code
	}
	if ue, ok := errors.AsType[*UserError](err); ok {
		say(ue.Err.Error(), ue.Hint)
		if ue.Code != 0 {
			return ue.Code
		}
		return ExitError
	}
	if ue, ok := errors.AsType[usageError](err); ok {
		say(ue.Error(), "run `muster --help` for usage")
		return ExitUsage
	}
	if pe, ok := errors.AsType[*proto.Error](err); ok {
		say(pe.Message, pe.Hint)
		return ExitError
	}
	if errors.Is(err, client.ErrDaemonNotRunning) {
		say("the daemon is not running", "start it with `muster daemon` (other commands start it on demand)")
		return ExitUnreachable
	}
	if na, ok := errors.AsType[*client.NoAnswerError](err); ok {
		hint := "it may be stopped or stuck: `muster daemon stop` stops it"
		if na.PID != 0 {
			hint = fmt.Sprintf("it may be stopped (kill -CONT %d) or stuck (kill -KILL %d)", na.PID, na.PID)
		}
		say(err.Error(), hint)
		return ExitUnreachable
	}
	if se, ok := errors.AsType[*client.StuckError](err); ok {
		say(err.Error(), fmt.Sprintf("it may be stuck: `kill %d`, or `kill -KILL %d` if it stays", se.PID, se.PID))
		return ExitUnreachable
	}
	if se, ok := errors.AsType[*client.StartError](err); ok {
		say(err.Error(), "`muster daemon --foreground` shows the same; its log is "+se.Log)
		return ExitUnreachable
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	say(err.Error(), "")
	return ExitError
}
