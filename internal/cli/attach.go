package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

type attachOptions struct {
	Name      string
	ReadOnly  bool
	DetachKey string
	// PaneExit makes an exit of the pane the command's exit code, as
	// `muster new` (attached) does.
	PaneExit bool
}

// paneExitError carries a pane's exit code out of `muster new`; it prints
// nothing, the exit notice has said it.
type paneExitError struct{ code int }

func (e *paneExitError) Error() string { return fmt.Sprintf("pane exited with code %d", e.code) }

// exitCode maps a pane's exit code to this process's: codes outside 1–255
// (a signal, an unknown code) become 1.
func (e *paneExitError) exitCode() int {
	if e.code < 0 || e.code > 255 {
		return ExitError
	}
	return e.code
}

func newAttachCmd(f *Factory) *cobra.Command {
	var o attachOptions
	cmd := &cobra.Command{
		Use:   "attach NAME",
		Short: "Attach this terminal to a session's pane (detach with Ctrl-\\)",
		Long: "Attach this terminal to a session's pane. The screen is repainted as the program left it.\n" +
			"Detach with the detach key (Ctrl-\\ by default; `[keys] detach` in config.toml or --detach-key);\n" +
			"the program keeps running. Ctrl-^ (`[keys] copy`) opens copy mode on the pane's history:\n" +
			"move with vi or emacs keys, search with / and ?, select with v, copy with y (OSC 52),\n" +
			"open the history in $PAGER with o, leave with q. The mouse wheel opens it too, while the\n" +
			"pane's program does not use the mouse (`mouse = false` in config.toml turns that off).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runAttach(cmd.Context(), f, o)
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVarP(&o.ReadOnly, "read-only", "r", false, "watch without typing or resizing")
	cmd.Flags().StringVar(&o.DetachKey, "detach-key", "", `detach key, e.g. "ctrl-\" or "ctrl-]"`)
	return cmd
}

// reattachWait bounds the wait for a restarting daemon's new image.
const reattachWait = 30 * time.Second

func runAttach(ctx context.Context, f *Factory, o attachOptions) error {
	for {
		restarted, err := attachOnce(ctx, f, o)
		if !restarted {
			return err
		}
		// The new image answers on the same socket: a connection made
		// now waits in its backlog until it serves, within the client's
		// own handshake bound. Only a daemon that died is waited for.
		deadline := time.Now().Add(reattachWait)
		dirs, derr := f.Dirs()
		if derr != nil {
			return derr
		}
		for !dirs.ReadDaemonLock().Held {
			if time.Now().After(deadline) {
				return Userf("the daemon did not come back after its restart; `muster resume --all` brings its sessions back")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// attachOnce attaches until the user detaches, the pane exits, or the
// daemon restarts (op "restart"): then it reports restarted, the pane
// runs on in the new image, and the terminal stays on the pane's screen
// for the next attach to repaint.
func attachOnce(ctx context.Context, f *Factory, o attachOptions) (restarted bool, err error) {
	if !f.IO.IsStdinTTY() || !f.IO.IsStdoutTTY() {
		return false, Userf("attach needs a terminal; use `muster capture %s` to read the screen", o.Name)
	}
	dirs, err := f.Dirs()
	if err != nil {
		return false, err
	}
	k, err := resolveAttachKeys(f, o)
	if err != nil {
		return false, err
	}
	c, err := f.Client(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	t, err := rawTerminal(f.IO.Out)
	if err != nil {
		return false, fmt.Errorf("put terminal in raw mode: %w", err)
	}
	defer t.close()
	defer t.restore()
	// The daemon writes the pane to the user's terminal and reads its
	// keys itself when this client passes it (heldTerminal in the daemon):
	// this process is then out of the way of every key and its echo. A
	// daemon of an older protocol would hand it back in frames this client
	// no longer reads: with one, this client relays.
	var tty *os.File
	if proto.DirectAttach(c.Protocol()) {
		tty = passTerminal()
	}
	// SIGWINCH is caught from before the size is read: the daemon may
	// draw the pane and take keys (direct mode) before this client is
	// ready, and a resize meanwhile, ignored by default, was lost.
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	hint := ""
	if !o.ReadOnly {
		if k.nested {
			hint = "nested muster client on " + termtext.Line(o.Name) + "; detach it with " + k.detach.Name
		} else if firstAttach(dirs.State) {
			hint = "attached to " + termtext.Line(o.Name) + "; detach with " + k.detach.Name + " (it keeps running)"
		}
	}
	args := k.attachArgs(o, tty != nil, hint)
	if tty != nil {
		defer tty.Close()
	}
	var res proto.AttachResult
	if err := c.CallPassing(ctx, proto.OpAttach, args, &res, tty); err != nil {
		// A refusal comes before the daemon writes anything; a lost
		// answer may come after it put the user's screen away.
		var refused *proto.Error
		t.entered = tty != nil && !errors.As(err, &refused)
		return false, err
	}
	if tty != nil {
		tty.Close()
	}
	// A daemon that holds the terminal put the user's screen away itself,
	// before it answered: then a refused attach never flashes it.
	if !res.Direct {
		t.relay(k.mouse.Start())
	}
	t.entered = true
	return newAttachment(ctx, f, c, t, k, res, hint, o.PaneExit).run(winch)
}

// attachKeys is what the attach client takes from its flags and
// config.toml: its keys, the mouse, the escape time and the notices.
type attachKeys struct {
	detach, copy config.Key // copy has no sequences when no key opens copy mode
	// mouseOn: the attached side may take the mouse; mouse follows the
	// pane program's modes when this client relays.
	mouseOn  bool
	mouse    *attachterm.Mouse
	escapeMS int
	notice   proto.AttachNotice
	// nested: this client runs inside a pane, nested in the outer client.
	nested bool
}

// resolveAttachKeys reads the attach client's keys from o and the config.
// A client inside a pane is nested in the outer client, which takes the
// configured keys first: the inner one detaches with another key and has
// no copy-mode key (the outer one's copy mode shows the same text) and
// leaves the mouse to the outer one.
func resolveAttachKeys(f *Factory, o attachOptions) (attachKeys, error) {
	k := attachKeys{nested: f.insidePane()}
	keyName := o.DetachKey
	cfg, cfgErr := f.Config()
	if keyName == "" {
		if cfgErr != nil {
			return k, Userf("%v", cfgErr)
		}
		keyName = cfg.Keys.Detach
		if k.nested {
			keyName = nestedDetachKey(keyName)
		}
	}
	var err error
	if k.detach, err = config.ParseKey(keyName); err != nil {
		return k, &UserError{Err: err, Code: ExitUsage}
	}
	copyName := config.DefaultCopyKey
	mouseOn := true
	k.notice = noticeStyle(config.Default())
	if cfgErr == nil {
		copyName = cfg.Keys.Copy
		mouseOn = cfg.MouseOn()
		k.escapeMS = cfg.EscapeTimeMS()
		k.notice = noticeStyle(cfg)
	}
	k.mouseOn = mouseOn && !k.nested
	k.mouse = attachterm.NewMouse(k.mouseOn)
	k.copy, err = config.ParseKey(copyName)
	if err != nil || k.nested || k.copy.Sequences[0][0] == k.detach.Sequences[0][0] {
		// The detach key wins; copy mode is then reached by no key.
		k.copy = config.Key{}
	}
	return k, nil
}

// attachArgs is the attach request; passing says the client passes its
// terminal, which the daemon then runs with these keys.
func (k attachKeys) attachArgs(o attachOptions, passing bool, hint string) proto.AttachArgs {
	cols, rows := termSize()
	args := proto.AttachArgs{Name: o.Name, Cols: cols, Rows: rows, ReadOnly: o.ReadOnly}
	if k.notice.Line || k.notice.Bell || k.notice.Terminal != "" {
		n := k.notice
		args.Notice = &n
	}
	if passing {
		args.Terminal, args.DetachKey, args.Mouse, args.Hint = true, k.detach.Name, k.mouseOn, hint
		args.EscapeTimeMS = k.escapeMS
		if len(k.copy.Sequences) > 0 {
			args.CopyKey = k.copy.Name
		}
	}
	return args
}

// printFinalScreen prints the plain text of an exited pane's last screen,
// without its trailing blank lines. It is best effort: the notice that
// follows says what happened either way.
func printFinalScreen(ctx context.Context, f *Factory, name string, out io.Writer) {
	c, err := f.Client(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	var res proto.CaptureResult
	if err := c.Call(ctx, proto.OpCapture, proto.CaptureArgs{Name: name}, &res); err != nil {
		return
	}
	text := strings.TrimRight(res.Text, " \n")
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(out, "%s\r\n", termtext.Strip(strings.TrimRight(line, " ")))
	}
}

// firstAttach reports, once per state dir, that this is a first-time
// user's first attach: it is told how to leave, in one line over the
// bottom row of the repainted screen, which the program's next redraw
// replaces.
func firstAttach(stateDir string) bool {
	mark := filepath.Join(stateDir, "attach-hint-shown")
	if _, err := os.Stat(mark); err == nil {
		return false
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return false
	}
	return os.WriteFile(mark, nil, 0o600) == nil
}

// noticeStyle is how this client shows other sessions' new attention
// items (config.toml's [notify]).
func noticeStyle(cfg config.Config) proto.AttachNotice {
	return proto.AttachNotice{Line: cfg.NotifyMessage(), Seconds: cfg.NoticeSeconds(), Bell: cfg.NotifyBell(), Terminal: cfg.NotifyTerminal()}
}

// showHint writes one line of text, already safe to print, on the last row.
func showHint(w io.Writer, text string) {
	_, rows := termSize()
	io.WriteString(w, attachterm.Hint(text, rows))
}

// nestedDetachKey is the detach key of a client nested in another, whose
// own detach key is outer.
func nestedDetachKey(outer string) string {
	if outer == "ctrl-]" {
		return `ctrl-\`
	}
	return "ctrl-]"
}
