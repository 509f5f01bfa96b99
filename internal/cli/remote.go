package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/provider/all"
)

// sessionArgs says, for a command that names sessions (or attention
// items), how many of its first arguments may be HOST:NAME (-1: all).
func sessionArgs(command string) (int, bool) {
	switch command {
	case "attach", "send", "capture", "kill", "explain", "show":
		return 1, true
	case "rename":
		return 2, true
	case "ack", "resume":
		return -1, true
	}
	// wait is not forwarded: runWait waits on each machine itself, so
	// that it spans hosts and outlives a dropped link.
	return 0, false
}

// hostOptional are the commands whose own arguments may hold a ':'
// (show's PROVIDER:ID): a prefix there is a host only when one of that
// name is configured.
func hostOptional(command string) bool { return command == "show" || command == "ack" }

// providerFirst is the rule for show when a prefix names a provider: it
// is the provider, never a host, so that `show claude:ID` means the same
// with any config.toml (host add refuses such names; one written by hand
// is reached as HOST:claude:ID).
func providerFirst(command, prefix string) bool {
	if command != "show" {
		return false
	}
	_, ok := all.Lookup(prefix)
	return ok
}

// remoteExit is a command that ran on a host and exited with code.
type remoteExit struct{ code int }

func (e *remoteExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// forwardToHost runs cmd on a host when it names HOST:NAME (or is
// `new --host HOST`): the host's own muster does it, through ssh, with
// this terminal's streams, so that what it prints and its exit code are
// the command's. It returns nil when cmd is for this machine.
func forwardToHost(f *Factory, cmd *cobra.Command, args []string) error {
	if cmd.Parent() == nil || cmd.Parent().Parent() != nil {
		return nil
	}
	target, args, err := remoteTarget(cmd, args)
	if err != nil || target == "" || providerFirst(cmd.Name(), target) {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	h, ok := cfg.Host(target)
	if !ok && hostOptional(cmd.Name()) {
		return nil
	}
	if !ok {
		return Userf("no host %q; add it with `muster host add %s DEST`", target, target)
	}
	d, err := f.Dirs()
	if err != nil {
		return err
	}
	if h.Muster == "" {
		return Userf("host %s: muster is not installed there yet; run `muster host add %s %s`", h.Name, h.Name, h.Dest)
	}
	attach := cmd.Name() == "attach"
	if cmd.Name() == "new" {
		detach, _ := cmd.Flags().GetBool("detach")
		attach = !detach && f.IO.IsStdinTTY() && f.IO.IsStdoutTTY()
	}
	if cmd.Name() == "attach" && (!f.IO.IsStdinTTY() || !f.IO.IsStdoutTTY()) {
		return Userf("attach needs a terminal; use `muster capture %s:%s` to read the screen", h.Name, args[0])
	}
	argv := []string{h.Muster, cmd.Name()}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name == "host" && cmd.Name() == "new" {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				argv = append(argv, "--"+fl.Name+"="+v)
			}
			return
		}
		argv = append(argv, "--"+fl.Name+"="+fl.Value.String())
	})
	if attach && !cmd.Flags().Changed("detach-key") {
		// The keyboard is this machine's: its detach key applies.
		if c, err := f.Config(); err == nil {
			argv = append(argv, "--detach-key="+c.Keys.Detach)
		}
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		argv = append(append(append(argv, args[:dash]...), "--"), args[dash:]...)
	} else {
		argv = append(append(argv, "--"), args...)
	}
	link := host.NewLink(d, cfg.SSH, h)
	if relayable(cmd) {
		f.onHost = &hostTarget{host: h, link: link, args: args, argv: argv}
		return nil
	}
	if err := f.refuseFromPane(cmd.Context(), cmd.Name(), h.Name); err != nil {
		return err
	}
	return runOnHost(cmd.Context(), f, link, attach, cmd.Name() == "attach", argv)
}

// runOnHost runs argv on the link's host with this terminal's streams
// and returns its exit status as a *remoteExit. attach gets a terminal on
// the host (ssh -tt) and the host's muster attaches to it as it would
// locally: its daemon holds that terminal, so a key and its echo cross
// exactly the hops of a plain `ssh -tt`, and the screen, resize and
// detach key are handled by the same code as a local attach. With again,
// an attach whose connection drops attaches again by itself (reattach);
// `new` is not run twice.
func runOnHost(ctx context.Context, f *Factory, link host.Link, attach, again bool, argv []string) error {
	if err := link.Connect(ctx); err != nil {
		return hostError(err)
	}
	if attach && again {
		return skewAfter(ctx, link, reattach(ctx, link, argv))
	}
	run := link.Command(ctx, attach, argv...)
	if attach {
		run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
		return skewAfter(ctx, link, remoteStatus(link, run.Run()))
	}
	errs := &skewFilter{w: f.IO.ErrOut, host: link.Host.Name}
	run.Stdout, run.Stderr = f.IO.Out, errs
	err := remoteStatus(link, run.Run())
	errs.flush()
	if errs.skew != nil {
		return hostError(errs.skew)
	}
	return err
}

// skewAfter checks, when an attach on a host failed as a daemon of
// another protocol makes it fail, whether that is why: the host's muster
// printed its refusal on the terminal, in words meant for a machine of
// its own, and the user needs to hear it is the host's daemon.
func skewAfter(ctx context.Context, link host.Link, err error) error {
	re, ok := errors.AsType[*remoteExit](err)
	if !ok || re.code != ExitError {
		return err
	}
	if cerr := host.CheckSkew(ctx, link); cerr != nil {
		if _, ok := errors.AsType[*host.SkewError](cerr); ok {
			return hostError(cerr)
		}
	}
	return err
}

// skewFilter passes a host muster's stderr through line by line, but
// keeps back its daemon's refusal of another protocol: that line tells
// the user to restart "the daemon", which read here means this machine's.
type skewFilter struct {
	w    io.Writer
	line []byte
	skew *host.SkewError
	host string
}

func (s *skewFilter) Write(p []byte) (int, error) {
	s.line = append(s.line, p...)
	for {
		i := bytes.IndexByte(s.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.pass(s.line[:i+1])
		s.line = s.line[i+1:]
	}
}

func (s *skewFilter) pass(line []byte) {
	if se := host.ParseSkew(s.host, string(line)); se != nil {
		s.skew = se
		return
	}
	s.w.Write(line)
}

func (s *skewFilter) flush() {
	if len(s.line) > 0 {
		s.pass(s.line)
		s.line = nil
	}
}

// remoteStatus turns ssh's outcome into the command's.
func remoteStatus(link host.Link, err error) error {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		if ee.ExitCode() == 255 {
			return &remoteExit{code: ExitUnreachable}
		}
		return &remoteExit{code: ee.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("host %s: %w", link.Host.Name, err)
	}
	return &remoteExit{code: ExitOK}
}

// remoteTarget finds the host cmd is for, and args with HOST: taken off.
func remoteTarget(cmd *cobra.Command, args []string) (string, []string, error) {
	if cmd.Name() == "new" {
		fl := cmd.Flags().Lookup("host")
		if fl == nil || fl.Value.String() == "" {
			return "", args, nil
		}
		return fl.Value.String(), args, nil
	}
	n, ok := sessionArgs(cmd.Name())
	if !ok {
		return "", args, nil
	}
	if n < 0 || n > len(args) {
		n = len(args)
	}
	target := ""
	local := false
	out := append([]string(nil), args...)
	for i := range n {
		h, name, ok := strings.Cut(args[i], ":")
		if !ok {
			// rename's NEW may leave its host implied.
			local = local || !(cmd.Name() == "rename" && i == 1)
			continue
		}
		if target != "" && h != target {
			return "", nil, &UserError{Err: fmt.Errorf("%s names sessions on hosts %s and %s: run one command per host", cmd.Name(), target, h), Code: ExitUsage}
		}
		target, out[i] = h, name
	}
	if target != "" && local {
		return "", nil, &UserError{Err: fmt.Errorf("%s names sessions on host %s and on this machine: run one command per host", cmd.Name(), target), Code: ExitUsage}
	}
	return target, out, nil
}
