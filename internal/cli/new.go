package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

type newOptions struct {
	Provider  string
	Name      string
	Dir       string
	Cmd       string
	CmdSet    bool
	ResumeCmd string
	Resume    string
	Detach    bool
	Attach    bool
	Control   bool
	Force     bool
	Args      []string
	// Worktree is --worktree's value: nil without it, "" for the default
	// branch.
	Worktree *string
	// ContinueAfterLimit is --continue-after-limit; ContinueSet whether
	// it was given (else config.toml decides).
	ContinueAfterLimit bool
	ContinueSet        bool
}

// worktreeNoValue is --worktree given without a value.
const worktreeNoValue = "\x00default"

func newNewCmd(f *Factory) *cobra.Command {
	var o newOptions
	var worktreeFlag string
	cmd := &cobra.Command{
		Use:   "new [PROVIDER] [--name NAME] [--dir DIR] [--cmd 'COMMAND' | --resume SESSION] [--detach] [-- ARGS...]",
		Short: "Start a session in a new pane and attach to it",
		Long: "Start a session in a new pane. PROVIDER is one of " + strings.Join(all.LaunchNames(), ", ") +
			";\nwith neither PROVIDER nor --cmd the pane runs your $SHELL, or CMD ARGS... given after --.\n" +
			"--resume SESSION reopens a past conversation (PROVIDER:ID, an id prefix or a path, as `muster\n" +
			"history` lists them) with its provider's resume command, in its directory unless --dir.\n" +
			"On a terminal it attaches at once unless --detach is given; otherwise it prints the session name.\n" +
			"Inside a muster pane it creates the session detached unless --attach is given.",
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
			if cmd.Flags().Changed("worktree") {
				branch := worktreeFlag
				// `--worktree BRANCH`: the branch comes as one positional
				// more than the command takes.
				if branch == worktreeNoValue {
					branch = ""
					need := 1
					if cmd.Flags().Changed("cmd") || cmd.Flags().Changed("resume") {
						need = 0
					}
					if len(pos) == need+1 {
						branch, pos = pos[need], pos[:need]
					}
				}
				o.Worktree = &branch
			}
			if len(pos) > 1 {
				return usagef("new takes at most one PROVIDER, got %q", pos)
			}
			if len(pos) == 1 {
				o.Provider = pos[0]
			}
			o.CmdSet = cmd.Flags().Changed("cmd")
			o.ContinueSet = cmd.Flags().Changed("continue-after-limit")
			return runNew(cmd, f, o)
		},
	}
	cmd.Flags().StringVarP(&o.Name, "name", "n", "", "session name (default: generated)")
	cmd.Flags().StringVarP(&o.Dir, "dir", "C", "", "working directory (default: the current one)")
	cmd.Flags().StringVar(&o.Cmd, "cmd", "", "run this shell command instead of a provider")
	cmd.Flags().StringVar(&o.ResumeCmd, "resume-cmd", "", "resume template for --cmd, with {session_id}")
	cmd.Flags().StringVar(&o.Resume, "resume", "", "reopen this past conversation (PROVIDER:ID, as history lists it)")
	cmd.Flags().BoolVarP(&o.Detach, "detach", "d", false, "do not attach after creating the pane")
	cmd.Flags().BoolVar(&o.Control, "control", false, "make the pane your own: programs in it may attach to, send to, kill, resume and stop every session, as you may (only from outside muster)")
	cmd.Flags().String("host", "", "create it on this host (see `muster host`); its own muster runs it")
	cmd.Flags().BoolVar(&o.Attach, "attach", false, "attach even inside a muster pane (a nested client; its detach key is the outer one's too)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "with --resume: start it even if a live pane runs that conversation")
	cmd.Flags().StringVar(&worktreeFlag, "worktree", "", "start in a new git worktree of the repository at --dir, on BRANCH (default muster/NAME), beside the repository")
	cmd.Flags().Lookup("worktree").NoOptDefVal = worktreeNoValue
	cmd.Flags().BoolVar(&o.ContinueAfterLimit, "continue-after-limit", false, "when the agent stops at its usage limit, send its continue once the limit resets (default: usage_limit.continue in config.toml)")
	return cmd
}

func runNew(cmd *cobra.Command, f *Factory, o newOptions) error {
	if o.CmdSet && strings.TrimSpace(o.Cmd) == "" {
		return Userf("empty command: --cmd needs a command to run")
	}
	resumeID := ""
	if o.Resume != "" {
		if o.CmdSet || o.ResumeCmd != "" {
			return usagef("--resume reopens a provider's conversation; drop --cmd and --resume-cmd")
		}
		s, err := resumeTarget(cmd.Context(), f, o.Resume, o.Provider)
		if err != nil {
			return err
		}
		o.Provider, resumeID = s.Provider, s.ID
		if o.Dir == "" {
			if st, err := os.Stat(s.CWD); s.CWD == "" || err != nil || !st.IsDir() {
				return Userf("the directory of %s:%s (%q) is gone; give one with --dir", s.Provider, s.ID, s.CWD)
			}
			o.Dir = s.CWD
		}
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
	if o.Detach && o.Attach {
		return usagef("--attach and --detach contradict each other")
	}
	attach := !o.Detach && f.IO.IsStdinTTY() && f.IO.IsStdoutTTY()
	// Inside a pane the session is created detached unless --attach asks
	// for a client nested in this pane (tmux refuses to nest unless told).
	nested := attach && f.insidePane() && !o.Attach
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
	if resumeID != "" && !o.Force {
		// Two agents on one conversation write one transcript (issue 23).
		var list []proto.SessionInfo
		if err := c.Call(cmd.Context(), proto.OpList, nil, &list); err != nil {
			c.Close()
			return err
		}
		if live := paneRunning(list, o.Provider, resumeID); live != "" {
			c.Close()
			return &UserError{Err: fmt.Errorf("%s:%s is already open in pane %s", o.Provider, resumeID, termtext.Line(live)), Code: ExitError,
				Hint: fmt.Sprintf("attach to it with `muster attach %s`, or pass --force to start a second agent on it", termtext.Line(live))}
		}
	}
	var info proto.SessionInfo
	err = c.Call(cmd.Context(), proto.OpNew, proto.NewArgs{
		Name: o.Name, Provider: o.Provider, Dir: abs, Cmd: o.Cmd, ResumeCmd: o.ResumeCmd, ResumeID: resumeID,
		Args: o.Args, Env: env, Cols: cols, Rows: rows, Control: o.Control, Worktree: worktreeArgs(o.Worktree),
		ContinueAfterLimit: continueArg(o),
	}, &info)
	c.Close()
	if err != nil {
		return err
	}
	if w := info.Worktree; w != nil {
		fmt.Fprintf(f.IO.ErrOut, "muster: %s runs in worktree %s on branch %s (from %s)\n", termtext.Line(info.Name), termtext.Line(w.Path), termtext.Line(w.Branch), short(w.BaseCommit))
		if w.Setup != "" && w.Setup != "none" {
			fmt.Fprintf(f.IO.ErrOut, "muster: setup files: %s\n", termtext.Line(w.Setup))
		}
	}
	if note := hooksNote(f, info.Provider); note != "" {
		fmt.Fprintln(f.IO.ErrOut, note)
	}
	if !attach {
		fmt.Fprintln(f.IO.Out, info.Name)
		if nested {
			fmt.Fprintf(f.IO.ErrOut, "created %s detached: this terminal is a muster pane\n  attach from a terminal outside muster with `muster attach %s`, or nest a client here with `muster new --attach`\n", info.Name, info.Name)
		}
		return nil
	}
	return runAttach(cmd.Context(), f, attachOptions{Name: info.Name, PaneExit: true})
}

func continueArg(o newOptions) *bool {
	if !o.ContinueSet {
		return nil
	}
	return &o.ContinueAfterLimit
}

func worktreeArgs(branch *string) *proto.WorktreeArgs {
	if branch == nil {
		return nil
	}
	return &proto.WorktreeArgs{Branch: *branch}
}

// launcher finds a [[launcher]] entry of config.toml by name.
func (f *Factory) launcher(name string) (config.Launcher, bool, error) {
	cfg, err := f.Config()
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

// resumeTarget resolves --resume to a conversation its provider can
// resume; provider, when given as well, must be its provider.
func resumeTarget(ctx context.Context, f *Factory, ref, provider string) (transcript.Session, error) {
	res, err := resolveRef(ctx, f, ref)
	if err != nil {
		return transcript.Session{}, err
	}
	s := res.Session
	if provider != "" && provider != s.Provider {
		return s, usagef("--resume %s is a %s conversation, not %s", ref, s.Provider, provider)
	}
	if s.ParentID != "" {
		return s, Userf("%s:%s is a sub-agent of %s:%s; resume that conversation", s.Provider, s.ID, s.Provider, s.ParentID)
	}
	if l, ok := all.Launch(s.Provider); !ok || l.ResumeArgs == nil {
		return s, Userf("muster cannot resume %s conversations", s.Provider)
	}
	if s.ID == "" {
		return s, Userf("%s has no conversation id to resume", s.Path)
	}
	return s, nil
}

// hooksNote is the line `muster new` prints for an agent whose hooks are
// neither injected into its launch nor installed in its own config (issue
// 23): Muster then knows its state only from its terminal and transcript,
// and the user must learn how to give it more. "" when there is nothing
// to say.
func hooksNote(f *Factory, prov string) string {
	l, ok := all.Launch(prov)
	if !ok || l.HookArgs != nil || !slices.Contains(hookinstall.Providers(), prov) {
		return ""
	}
	env, err := hookEnv(f)
	if err != nil {
		return ""
	}
	exe, err := f.musterPath()
	if err != nil {
		return ""
	}
	switch hookinstall.Status(env, prov, exe).State {
	case hookinstall.Installed, hookinstall.Outdated:
		return ""
	}
	return fmt.Sprintf("%s hooks are not installed: its state is read from its terminal and transcript only; install them with `muster hooks setup %s`", prov, prov)
}

// paneRunning returns the name of the live pane whose agent runs the
// conversation prov:id, "" when none does.
func paneRunning(list []proto.SessionInfo, prov, id string) string {
	for _, s := range list {
		if s.Provider == prov && s.NativeSessionID == id && s.State == proto.PaneRunning {
			return s.Name
		}
	}
	return ""
}
