package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
)

type newOptions struct {
	Provider  string
	Name      string
	Dir       string
	Cmd       string
	CmdSet    bool
	ResumeCmd string
	Detach    bool
	Args      []string
}

func newNewCmd(f *Factory) *cobra.Command {
	var o newOptions
	cmd := &cobra.Command{
		Use:   "new [PROVIDER] [--name NAME] [--dir DIR] [--cmd 'COMMAND'] [--detach] [-- ARGS...]",
		Short: "Start a session in a new pane and attach to it",
		Long: "Start a session in a new pane. PROVIDER is one of " + strings.Join(all.LaunchNames(), ", ") +
			";\nwith neither PROVIDER nor --cmd the pane runs your $SHELL, or CMD ARGS... given after --.\nOn a terminal it attaches at once unless --detach is given; otherwise it prints the session name.",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 || cmd.ArgsLenAtDash() >= 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return all.LaunchNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			pos := args
			if dash >= 0 {
				pos, o.Args = args[:dash], args[dash:]
			}
			if len(pos) > 1 {
				return usagef("new takes at most one PROVIDER, got %q", pos)
			}
			if len(pos) == 1 {
				o.Provider = pos[0]
			}
			o.CmdSet = cmd.Flags().Changed("cmd")
			return runNew(cmd, f, o)
		},
	}
	cmd.Flags().StringVarP(&o.Name, "name", "n", "", "session name (default: generated)")
	cmd.Flags().StringVarP(&o.Dir, "dir", "C", "", "working directory (default: the current one)")
	cmd.Flags().StringVar(&o.Cmd, "cmd", "", "run this shell command instead of a provider")
	cmd.Flags().StringVar(&o.ResumeCmd, "resume-cmd", "", "resume template for --cmd, with {session_id}")
	cmd.Flags().BoolVarP(&o.Detach, "detach", "d", false, "do not attach after creating the pane")
	return cmd
}

func runNew(cmd *cobra.Command, f *Factory, o newOptions) error {
	if o.CmdSet && strings.TrimSpace(o.Cmd) == "" {
		return Userf("empty command: --cmd needs a command to run")
	}
	if o.Provider != "" && !all.Valid(o.Provider) {
		// A [[launcher]] from config.toml stands in for a provider.
		l, ok, err := f.launcher(o.Provider)
		if err != nil {
			return err
		}
		if !ok {
			return &UserError{Err: all.UnknownError(o.Provider), Code: ExitError, Hint: "or define a [[launcher]] named " + o.Provider + " in config.toml"}
		}
		if o.CmdSet {
			return Userf("launcher %q already has a command; drop --cmd", o.Provider)
		}
		o.Provider, o.Cmd, o.CmdSet = "", l.Command, true
		if o.ResumeCmd == "" {
			o.ResumeCmd = l.Resume
		}
	}
	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("find current directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Userf("bad directory %q: %v", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return Userf("directory %s does not exist", abs)
	}
	attach := !o.Detach && f.IO.IsStdinTTY() && f.IO.IsStdoutTTY()
	// Inside a pane the session is created detached: attaching would nest
	// muster clients (tmux refuses the same).
	nested := attach && f.insidePane()
	attach = attach && !nested
	cols, rows := 0, 0
	if attach {
		cols, rows = termSize()
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	var info proto.SessionInfo
	err = c.Call(cmd.Context(), proto.OpNew, proto.NewArgs{
		Name: o.Name, Provider: o.Provider, Dir: abs, Cmd: o.Cmd, ResumeCmd: o.ResumeCmd,
		Args: o.Args, Env: env, Cols: cols, Rows: rows,
	}, &info)
	c.Close()
	if err != nil {
		return err
	}
	if !attach {
		fmt.Fprintln(f.IO.Out, info.Name)
		if nested {
			fmt.Fprintf(f.IO.ErrOut, "created %s detached: this terminal is a muster pane\n  attach from a terminal outside muster with `muster attach %s`\n", info.Name, info.Name)
		}
		return nil
	}
	return runAttach(cmd.Context(), f, attachOptions{Name: info.Name, PaneExit: true})
}

// launcher finds a [[launcher]] entry of config.toml by name.
func (f *Factory) launcher(name string) (config.Launcher, bool, error) {
	dirs, err := f.Dirs()
	if err != nil {
		return config.Launcher{}, false, err
	}
	cfg, err := config.Load(dirs.ConfigFile())
	if err != nil {
		return config.Launcher{}, false, Userf("%v", err)
	}
	for _, l := range cfg.Launchers {
		if l.Name == name {
			return l, true, nil
		}
	}
	return config.Launcher{}, false, nil
}

func newLsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sessions",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var list []proto.SessionInfo
			if err := c.Call(cmd.Context(), proto.OpList, nil, &list); err != nil {
				return err
			}
			if list == nil {
				list = []proto.SessionInfo{}
			}
			if asJSON {
				return writeJSON(f.IO.Out, list)
			}
			printSessions(f, list, f.now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func printSessions(f *Factory, list []proto.SessionInfo, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no sessions; start one with `muster new`")
		return
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tPROVIDER\tSTATE\tRUN\tPID\tCWD\tAGE")
	line := termtext.Line
	for _, s := range list {
		state := line(s.State)
		if s.State == "exited" && s.ExitCode != nil {
			state = fmt.Sprintf("exited(%d)", *s.ExitCode)
		}
		run := "-"
		if s.RunState != nil {
			run = line(*s.RunState)
			if s.Attention > 0 {
				run += fmt.Sprintf(" !%d", s.Attention)
			}
		}
		pid := "-"
		if s.State == "running" {
			pid = fmt.Sprint(s.PID)
		}
		created, _ := time.Parse(time.RFC3339, s.CreatedAt)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", line(s.Name), short(line(s.ID)), line(s.Provider), state, run, pid,
			line(tildePath(s.CWD)), age(now.Sub(created)))
	}
	tw.Flush()
	for _, s := range list {
		if s.Reason != "" {
			fmt.Fprintf(f.IO.Out, "%s: %s\n", line(s.Name), line(s.Reason))
		}
	}
}

// short cuts an id to its first 8 bytes, never inside a UTF-8 sequence.
func short(id string) string {
	for i := range id {
		if i >= 8 {
			return id[:i]
		}
	}
	return id
}

func tildePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

func newSendCmd(f *Factory) *cobra.Command {
	var enter bool
	cmd := &cobra.Command{
		Use:   "send NAME TEXT",
		Short: "Type text into a session's pane",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpSend, proto.SendArgs{Name: args[0], Text: args[1], Enter: enter}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVarP(&enter, "enter", "e", false, "press Enter after the text")
	return cmd
}

func newCaptureCmd(f *Factory) *cobra.Command {
	var a proto.CaptureArgs
	cmd := &cobra.Command{
		Use:   "capture NAME",
		Short: "Print a session's current screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.Scrollback < 0 {
				return usagef("--scrollback must not be negative")
			}
			a.Name = args[0]
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var res proto.CaptureResult
			if err := c.Call(cmd.Context(), proto.OpCapture, a, &res); err != nil {
				return err
			}
			_, err = fmt.Fprint(f.IO.Out, res.Text)
			return err
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVar(&a.ANSI, "ansi", false, "keep colours and attributes as escape sequences")
	cmd.Flags().IntVar(&a.Scrollback, "scrollback", 0, "also print up to N lines of history")
	return cmd
}

func newKillCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "kill NAME",
		Short: "End a session's process and remove the session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpKill, proto.Target{Name: args[0]}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
}

func newRenameCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "rename NAME NEW",
		Short: "Rename a session",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			return c.Call(cmd.Context(), proto.OpRename, proto.RenameArgs{Name: args[0], NewName: args[1]}, nil)
		},
		ValidArgsFunction: completeSessions(f),
	}
}

// completeSessions completes session names from a running daemon.
func completeSessions(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.RunningClient(cmd.Context())
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer c.Close()
		var list []proto.SessionInfo
		if c.Call(cmd.Context(), proto.OpList, nil, &list) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
