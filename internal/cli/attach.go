package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/muesli/cancelreader"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
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

// copyModeLines is the most history copy mode asks the daemon for.
const copyModeLines = 100000

// restoreSequence undoes every mode a program may have left on the client
// terminal, so that detaching returns a usable shell. It opens with CAN,
// which abandons an escape sequence that pane output left half written,
// and ends by leaving the alternate screen and popping the title that
// attachterm.Enter pushed (CSI 23 t).
const restoreSequence = "\x18\x1b[r\x1b[0m\x1b[?25h\x1b[0 q" +
	"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?9l" +
	"\x1b[?2004l\x1b[?1004l\x1b[?1l\x1b>\x1b[<99u\x1b[>4;0m\x1b[?1049l\x1b[23;0t"

// gatedWriter writes pane output to the user's terminal until it is shut:
// after shut returns, nothing more of the pane reaches the terminal, even
// a frame that was being read when the detach key was pressed.
type gatedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	shut bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return len(p), nil
	}
	return g.w.Write(p)
}

// close waits for a write in progress, then stops all later ones.
func (g *gatedWriter) close() {
	g.mu.Lock()
	g.shut = true
	g.mu.Unlock()
}

// termSize is the size to give a pane: the user's terminal, brought into
// the daemon's range (proto.ClampSize), so that a terminal larger than
// proto.MaxTermSize still attaches and shows the pane's top-left corner
// instead of being refused.
func termSize() (int, int) {
	for _, fd := range []int{int(os.Stdout.Fd()), int(os.Stdin.Fd())} {
		if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
			return proto.ClampSize(w, h)
		}
	}
	return proto.DefaultCols, proto.DefaultRows
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
	// A client inside a pane is nested in the outer client, which takes
	// the configured keys first: the inner one detaches with another key
	// and has no copy-mode key (the outer one's copy mode shows the same
	// text).
	nested := f.insidePane()
	keyName := o.DetachKey
	cfg, cfgErr := f.Config()
	if keyName == "" {
		if cfgErr != nil {
			return false, Userf("%v", cfgErr)
		}
		keyName = cfg.Keys.Detach
		if nested {
			keyName = nestedDetachKey(keyName)
		}
	}
	key, err := config.ParseKey(keyName)
	if err != nil {
		return false, &UserError{Err: err, Code: ExitUsage}
	}
	copyName := config.DefaultCopyKey
	mouseOn := true
	escapeMS := 0
	notice := noticeStyle(config.Default())
	if cfgErr == nil {
		copyName = cfg.Keys.Copy
		mouseOn = cfg.MouseOn()
		escapeMS = cfg.EscapeTimeMS()
		notice = noticeStyle(cfg)
	}
	// A nested client leaves the mouse to the outer one.
	mouse := attachterm.NewMouse(mouseOn && !nested)
	copyKey, err := config.ParseKey(copyName)
	if err != nil || nested || copyKey.Sequences[0][0] == key.Sequences[0][0] {
		// The detach key wins; copy mode is then reached by no key.
		copyKey = config.Key{}
	}
	c, err := f.Client(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	// Raw mode first: keys typed while the daemon answers must reach the
	// pane, not the line discipline (Ctrl-\ would be SIGQUIT).
	stdinFd := int(os.Stdin.Fd())
	oldState, err := term.MakeRaw(stdinFd)
	if err != nil {
		return false, fmt.Errorf("put terminal in raw mode: %w", err)
	}
	// The daemon writes the pane to the user's terminal and reads its
	// keys itself when this client passes it (heldTerminal in the daemon):
	// this process is then out of the way of every key and its echo.
	tty := passTerminal()
	// The plain stdout, which no poller watches, until this client turns
	// out to relay the pane (below).
	out, closeOut := f.IO.Out, func() {}
	defer func() { closeOut() }()
	pane := &gatedWriter{w: out}
	entered := false
	restore := sync.OnceFunc(func() {
		pane.close()
		if entered {
			io.WriteString(out, restoreSequence)
		}
		term.Restore(stdinFd, oldState)
	})
	defer restore()
	// SIGWINCH is caught from before the size is read: the daemon may
	// draw the pane and take keys (direct mode) before this client is
	// ready, and a resize meanwhile, ignored by default, was lost.
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	cols, rows := termSize()
	args := proto.AttachArgs{Name: o.Name, Cols: cols, Rows: rows, ReadOnly: o.ReadOnly}
	if notice.Line || notice.Bell || notice.Terminal != "" {
		args.Notice = &notice
	}
	hint := ""
	if !o.ReadOnly {
		if nested {
			hint = "nested muster client on " + termtext.Line(o.Name) + "; detach it with " + key.Name
		} else if firstAttach(dirs.State) {
			hint = "attached to " + termtext.Line(o.Name) + "; detach with " + key.Name + " (it keeps running)"
		}
	}
	if tty != nil {
		defer tty.Close()
		args.Terminal, args.DetachKey, args.Mouse, args.Hint = true, key.Name, mouseOn && !nested, hint
		args.EscapeTimeMS = escapeMS
		if len(copyKey.Sequences) > 0 {
			args.CopyKey = copyKey.Name
		}
	}
	var res proto.AttachResult
	if err := c.CallPassing(ctx, proto.OpAttach, args, &res, tty); err != nil {
		// A refusal comes before the daemon writes anything; a lost
		// answer may come after it put the user's screen away.
		var refused *proto.Error
		entered = tty != nil && !errors.As(err, &refused)
		return false, err
	}
	if tty != nil {
		tty.Close()
	}
	var direct atomic.Bool
	direct.Store(res.Direct)
	// A daemon that holds the terminal put the user's screen away itself,
	// before it answered: then a refused attach never flashes it. A
	// relaying client writes through a descriptor of its poller; one open
	// while the daemon holds the terminal would wake this process on every
	// key and echo, even unread, competing for the CPU the echo needs.
	if !res.Direct {
		out, closeOut = terminalOut(f.IO.Out)
		pane.w = out
		io.WriteString(out, attachterm.Enter+mouse.Start())
	}
	entered = true
	// handedOwned is the mouse as the daemon handed it back.
	var handedOwned atomic.Bool
	mouseOwned := func() bool {
		if res.Direct {
			return handedOwned.Load()
		}
		return mouse.Owned()
	}

	// Frames go both ways with raw system calls (rawio), which wake no
	// sysmon on a keystroke or its echo.
	var conn io.Writer = c.Conn()
	br := c.Reader()
	if rc, ok := c.Conn().(rawio.Conn); ok {
		if raw, err := rc.SyscallConn(); err == nil {
			conn = rawio.Writer{RC: raw}
			if rest, err := br.Peek(br.Buffered()); err == nil {
				br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), rawio.Reader{RC: raw}), 64<<10)
			}
		}
	}
	var wmu sync.Mutex
	send := func(typ byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return proto.WriteFrame(conn, typ, p)
	}

	type outcome struct {
		detached  bool
		restarted bool
		exitCode  *int
		err       error
	}
	done := make(chan outcome, 3)
	var detaching, copying atomic.Bool

	// handback carries the terminal from the daemon to the key reader.
	handback := make(chan proto.Handback, 1)
	go func() {
		alt := attachterm.Filter{Mouse: mouse}
		buf := make([]byte, 0, 256<<10)
		for {
			typ, payload, err := proto.ReadFrame(br, buf)
			if err != nil {
				if detaching.Load() {
					done <- outcome{detached: true}
				} else {
					done <- outcome{err: errors.New("lost the connection to the daemon")}
				}
				return
			}
			switch typ {
			case proto.FrameHandback:
				var hb proto.Handback
				json.Unmarshal(payload, &hb)
				direct.Store(false)
				handedOwned.Store(hb.MouseOwned)
				if hb.Reason == proto.HandbackRestart {
					done <- outcome{restarted: true}
					return
				}
				if hb.Reason == proto.HandbackDetach {
					detaching.Store(true)
					send(proto.FrameDetach, nil)
					done <- outcome{detached: true}
					return
				}
				handback <- hb
			case proto.FrameOutput, proto.FrameSnapshot:
				if direct.Load() {
					// Written before the daemon took the terminal back
					// from copy mode: the daemon repaints it.
					continue
				}
				if copying.Load() {
					// Copy mode has the screen; leaving it asks for a
					// snapshot that repaints the pane.
					continue
				}
				if _, err := pane.Write(alt.Filter(payload)); err != nil {
					done <- outcome{err: err}
					return
				}
				if typ == proto.FrameSnapshot && hint != "" && !res.ReadOnly {
					showHint(pane, hint)
					hint = ""
				}
			case proto.FrameNotice:
				var n proto.Notice
				if direct.Load() || json.Unmarshal(payload, &n) != nil {
					continue
				}
				style := notice
				if copying.Load() {
					// Copy mode has the screen: no line over it.
					style.Line = false
				}
				w, h := termSize()
				io.WriteString(pane, attachterm.Notice(style, n, w, h))
			case proto.FrameExit:
				var e struct {
					ExitCode int `json:"exit_code"`
				}
				json.Unmarshal(payload, &e)
				done <- outcome{exitCode: &e.ExitCode}
				return
			}
		}
	}()

	// A cancelable reader, so that no goroutine is left blocked on stdin
	// (swallowing the next key) after the pane exits under us. While the
	// daemon holds the terminal, none is open (see tty above).
	keys := &keyReader{}
	defer keys.stop()
	if !res.Direct {
		if _, err := keys.open(); err != nil {
			return false, fmt.Errorf("read the terminal: %w", err)
		}
	}
	var cm *copyMode
	startCopy := func() {
		copying.Store(true)
		text := ""
		if cc, err := f.Client(ctx); err == nil {
			var cr proto.CaptureResult
			if err := cc.Call(ctx, proto.OpCapture, proto.CaptureArgs{Name: res.Name, Scrollback: copyModeLines}, &cr); err == nil {
				text = termtext.Strip(cr.Text)
			}
			cc.Close()
		}
		w, h := termSize()
		cm = newCopyMode(pane, text, w, h)
		cm.external = runExternal(func() {
			term.Restore(stdinFd, oldState)
		}, func() {
			term.MakeRaw(stdinFd)
			io.WriteString(pane, "\x1b[?1049h")
		})
	}
	// leaveCopy gives the screen back to the pane; rest is input typed
	// after the key that left. It reports whether the daemon took the
	// terminal back, when this client no longer reads it.
	leaveCopy := func(rest []byte) bool {
		cm = nil
		io.WriteString(pane, "\x1b[0m\x1b[H\x1b[2J")
		copying.Store(false)
		if len(rest) > 0 && !res.ReadOnly {
			send(proto.FrameInput, rest)
		}
		if res.Direct {
			// The daemon repaints the pane when it takes the terminal.
			direct.Store(true)
			send(proto.FrameResume, nil)
			return true
		}
		// A resize frame, even of the same size, makes the daemon
		// repaint this client.
		w, h := termSize()
		send(proto.FrameResize, proto.ResizePayload(w, h))
		return false
	}
	// wheels turns the wheel in copy mode (opening it on the first turn
	// up) and reports whether the daemon took the terminal back.
	wheels := func(ws []attachterm.Wheel) bool {
		for _, wh := range ws {
			if cm == nil {
				if wh != attachterm.WheelUp {
					continue
				}
				startCopy()
				cm.fromWheel = true
			}
			cm.wheel(wh)
			if cm.done {
				if leaveCopy(nil) {
					return true
				}
			} else {
				cm.draw()
			}
		}
		return false
	}
	var wheelIn attachterm.MouseInput
	// readKeys reads the user's keys while this client has the terminal:
	// from the start, or, when the daemon holds it, from a handback to
	// the end of copy mode.
	readKeys := func(hb *proto.Handback) {
		if hb != nil {
			var ws []attachterm.Wheel
			for _, w := range hb.Wheels {
				ws = append(ws, attachterm.Wheel(w))
			}
			if hb.Reason == proto.HandbackCopy {
				startCopy()
			}
			if wheels(ws) {
				return
			}
			if cm != nil {
				if over, rest := cm.feed(hb.Rest); over && leaveCopy(rest) {
					return
				}
			}
		}
		stdin, err := keys.open()
		if errors.Is(err, cancelreader.ErrCanceled) {
			return
		}
		if err != nil {
			detaching.Store(true)
			send(proto.FrameDetach, nil)
			done <- outcome{err: fmt.Errorf("read the terminal: %w", err)}
			return
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := stdin.Read(buf)
			data := buf[:n]
			if n > 0 && mouseOwned() {
				var ws []attachterm.Wheel
				data, ws = wheelIn.Split(data)
				if wheels(ws) {
					return
				}
				if wheelIn.Pending() && !rawio.Readable(os.Stdin.Fd(), proto.EscapeTime(escapeMS)) {
					// Nothing completed the sequence: a lone Esc.
					data = append(data, wheelIn.Flush()...)
				}
			}
			if len(data) > 0 && cm != nil {
				p, detach := data, false
				if i, _ := key.Find(p); i >= 0 {
					p, detach = p[:i], true
				}
				over, rest := cm.feed(p)
				if detach {
					detaching.Store(true)
					send(proto.FrameDetach, nil)
					done <- outcome{detached: true}
					return
				}
				if over && leaveCopy(rest) {
					return
				}
				continue
			}
			if len(data) > 0 && len(copyKey.Sequences) > 0 {
				if j, l := copyKey.Find(data); j >= 0 {
					if k, _ := key.Find(data[:j]); k < 0 {
						if j > 0 && !res.ReadOnly {
							send(proto.FrameInput, data[:j])
						}
						startCopy()
						if over, rest := cm.feed(data[j+l:]); over && leaveCopy(rest) {
							return
						}
						continue
					}
				}
			}
			if len(data) > 0 {
				p := data
				if i, _ := key.Find(p); i >= 0 {
					if i > 0 && !res.ReadOnly {
						send(proto.FrameInput, p[:i])
					}
					detaching.Store(true)
					send(proto.FrameDetach, nil)
					done <- outcome{detached: true}
					return
				}
				if !res.ReadOnly {
					if err := send(proto.FrameInput, p); err != nil {
						return
					}
				}
			}
			if err != nil {
				if errors.Is(err, cancelreader.ErrCanceled) {
					return
				}
				detaching.Store(true)
				send(proto.FrameDetach, nil)
				done <- outcome{detached: true}
				return
			}
		}
	}
	if res.Direct {
		go func() {
			for {
				select {
				case hb := <-handback:
					readKeys(&hb)
					keys.park()
				case <-ctx.Done():
					return
				}
			}
		}()
	} else {
		go readKeys(nil)
	}

	go func() {
		for range winch {
			w, h := termSize()
			send(proto.FrameResize, proto.ResizePayload(w, h))
		}
	}()

	var oc outcome
	select {
	case oc = <-done:
	case <-ctx.Done():
		detaching.Store(true)
		send(proto.FrameDetach, nil)
		oc = outcome{detached: true}
		if direct.Load() {
			// The daemon lets go of the terminal before it closes the
			// connection; the user's screen is restored after that.
			select {
			case <-done:
			case <-time.After(2 * time.Second):
			}
		}
	}
	if oc.restarted {
		// The user's screen stays away: the next attach repaints the
		// pane over it.
		entered = false
	}
	restore()
	switch {
	case oc.restarted:
		return true, nil
	case oc.err != nil:
		return false, oc.err
	case oc.exitCode != nil:
		// The alternate screen is gone with the final screen on it: print
		// that screen's text on the user's own screen, where it stays.
		printFinalScreen(ctx, f, res.Name, out)
		fmt.Fprintf(f.IO.ErrOut, "[%s exited with code %d]\n", termtext.Line(res.Name), *oc.exitCode)
		if o.PaneExit && *oc.exitCode != 0 {
			return false, &paneExitError{code: *oc.exitCode}
		}
	default:
		fmt.Fprintf(f.IO.ErrOut, "[detached from %s]\n", termtext.Line(res.Name))
	}
	return false, nil
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

// keyReader is the attach client's reader of the user's keys, open only
// while the client has the terminal.
type keyReader struct {
	mu      sync.Mutex
	r       cancelreader.CancelReader
	stopped bool
}

// open returns the reader, opening it if it is not open.
func (k *keyReader) open() (cancelreader.CancelReader, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return nil, cancelreader.ErrCanceled
	}
	if k.r == nil {
		r, err := openKeys(os.Stdin)
		if err != nil {
			return nil, err
		}
		k.r = r
	}
	return k.r, nil
}

// park closes the reader when the daemon takes the terminal back; its
// reader has returned.
func (k *keyReader) park() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.r != nil {
		k.r.Close()
		k.r = nil
	}
}

// stop ends a read in progress and every later open.
func (k *keyReader) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.r != nil {
		k.r.Cancel()
		k.r.Close()
		k.r = nil
	}
}
