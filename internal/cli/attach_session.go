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
	"sync"
	"sync/atomic"
	"time"

	"github.com/muesli/cancelreader"

	"github.com/musterhq/muster/internal/attachterm"
	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
	"github.com/musterhq/muster/internal/termtext"
)

// attachOutcome is how an attachment ended.
type attachOutcome struct {
	detached  bool
	restarted bool
	exitCode  *int
	err       error
}

// attachment is one attach from the daemon's answer to its end. Its
// goroutines each own one concern: the output pump (the daemon's frames
// and handbacks), the resize pump (SIGWINCH) and, when this client
// relays the pane, the input pump (the user's keys and copy mode); wait
// ends it on the first outcome. When the daemon holds the terminal
// (res.Direct) it runs the keys and copy mode itself, and this client
// only runs copy mode's pager when asked (runOpens) and ends the attach.
type attachment struct {
	ctx  context.Context
	f    *Factory
	res  proto.AttachResult
	term *attachTerminal
	// paneExit makes a pane's exit code the command's (attachOptions).
	paneExit bool

	// keys is the key scan (attachterm.Keys) of a relaying client; mouse
	// follows the pane program's modes on the way to the terminal.
	keys   attachterm.Keys
	mouse  *attachterm.Mouse
	escape time.Duration
	notice proto.AttachNotice
	// hint is shown over the first snapshot (output pump only).
	hint string

	// Frames go both ways with raw system calls (rawio), which wake no
	// sysmon on a keystroke or its echo.
	conn   io.Writer
	frames *bufio.Reader
	wmu    sync.Mutex

	// detaching: this client told the daemon it leaves; copying: copy
	// mode has the screen.
	detaching, copying atomic.Bool
	done               chan attachOutcome
	// opens carries copy mode's pager requests (HandbackOpen) from the
	// output pump to runOpens; ended is closed when the attach ends.
	opens chan proto.Handback
	ended chan struct{}
	// reader is a cancelable reader, so that no goroutine is left blocked
	// on stdin (swallowing the next key) after the pane exits under us.
	// While the daemon holds the terminal, none is open (passTerminal).
	reader keyReader
	// cm is copy mode while it runs (input pump only).
	cm *attachterm.CopyMode
}

func newAttachment(ctx context.Context, f *Factory, c *client.Client, t *attachTerminal, k attachKeys, res proto.AttachResult, hint string, paneExit bool) *attachment {
	a := &attachment{
		ctx: ctx, f: f, res: res, term: t, paneExit: paneExit,
		mouse: k.mouse, escape: proto.EscapeTime(k.escapeMS), notice: k.notice, hint: hint,
		keys: attachterm.Keys{Detach: k.detach, Copy: k.copy, Mouse: k.mouse},
		conn: c.Conn(), frames: c.Reader(),
		done: make(chan attachOutcome, 3), opens: make(chan proto.Handback, 1), ended: make(chan struct{}),
	}
	if rc, ok := c.Conn().(rawio.Conn); ok {
		if raw, err := rc.SyscallConn(); err == nil {
			a.conn = rawio.Writer{RC: raw}
			br := a.frames
			if rest, err := br.Peek(br.Buffered()); err == nil {
				a.frames = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), rawio.Reader{RC: raw}), 64<<10)
			}
		}
	}
	return a
}

// run pumps until the attach ends, gives the user back their terminal
// and says how it ended; restarted is set when a daemon restart ended it.
func (a *attachment) run(winch <-chan os.Signal) (restarted bool, err error) {
	go a.pumpOutput()
	defer close(a.ended)
	defer a.reader.stop()
	if a.res.Direct {
		go a.runOpens()
	} else {
		stdin, err := a.reader.open()
		if err != nil {
			return false, fmt.Errorf("read the terminal: %w", err)
		}
		go a.pumpInput(stdin)
	}
	go a.pumpResize(winch)

	oc := a.wait()
	if oc.restarted {
		// The user's screen stays away: the next attach repaints the
		// pane over it.
		a.term.entered = false
	}
	a.term.restore()
	return a.report(oc)
}

// wait returns the first outcome, or detaches when ctx ends.
func (a *attachment) wait() attachOutcome {
	select {
	case oc := <-a.done:
		return oc
	case <-a.ctx.Done():
		a.detaching.Store(true)
		a.send(proto.FrameDetach, nil)
		if a.res.Direct {
			// The daemon lets go of the terminal before it closes the
			// connection; the user's screen is restored after that.
			select {
			case <-a.done:
			case <-time.After(2 * time.Second):
			}
		}
		return attachOutcome{detached: true}
	}
}

// report tells the user how the attach ended, once their screen is back.
func (a *attachment) report(oc attachOutcome) (restarted bool, err error) {
	name := termtext.Line(a.res.Name)
	switch {
	case oc.restarted:
		return true, nil
	case oc.err != nil:
		return false, oc.err
	case oc.exitCode != nil:
		// The alternate screen is gone with the final screen on it: print
		// that screen's text on the user's own screen, where it stays.
		printFinalScreen(a.ctx, a.f, a.res.Name, a.term.out)
		fmt.Fprintf(a.f.IO.ErrOut, "[%s exited with code %d]\n", name, *oc.exitCode)
		if a.paneExit && *oc.exitCode != 0 {
			return false, &paneExitError{code: *oc.exitCode}
		}
	default:
		fmt.Fprintf(a.f.IO.ErrOut, "[detached from %s]\n", name)
	}
	return false, nil
}

// send writes one frame to the daemon; the pumps share the connection.
func (a *attachment) send(typ byte, p []byte) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return proto.WriteFrame(a.conn, typ, p)
}

// typed sends keys for the pane, unless the client only watches.
func (a *attachment) typed(p []byte) error {
	if len(p) == 0 || a.res.ReadOnly {
		return nil
	}
	return a.send(proto.FrameInput, p)
}

// leave tells the daemon this client detaches and ends the attach with oc.
func (a *attachment) leave(oc attachOutcome) {
	a.detaching.Store(true)
	a.send(proto.FrameDetach, nil)
	a.done <- oc
}

// pumpOutput reads the daemon's frames: the pane's output and notices,
// which it writes to the user's terminal while this client has it, the
// handbacks of a daemon that holds the terminal, and the pane's exit.
func (a *attachment) pumpOutput() {
	filter := attachterm.Filter{Mouse: a.mouse}
	buf := make([]byte, 0, 256<<10)
	for {
		typ, payload, err := proto.ReadFrame(a.frames, buf)
		if err != nil {
			if a.detaching.Load() {
				a.done <- attachOutcome{detached: true}
			} else {
				a.done <- attachOutcome{err: errors.New("lost the connection to the daemon")}
			}
			return
		}
		switch typ {
		case proto.FrameHandback:
			var hb proto.Handback
			json.Unmarshal(payload, &hb)
			switch hb.Reason {
			case proto.HandbackRestart:
				a.done <- attachOutcome{restarted: true}
				return
			case proto.HandbackDetach:
				a.leave(attachOutcome{detached: true})
				return
			case proto.HandbackOpen:
				select {
				case a.opens <- hb:
				case <-a.ended:
				}
			}
		case proto.FrameOutput, proto.FrameSnapshot:
			if a.res.Direct {
				// The daemon writes the pane to the terminal itself;
				// what comes here came while copy mode had it.
				continue
			}
			if a.copying.Load() {
				// Copy mode has the screen; leaving it asks for a
				// snapshot that repaints the pane.
				continue
			}
			if _, err := a.term.pane.Write(filter.Filter(payload)); err != nil {
				a.done <- attachOutcome{err: err}
				return
			}
			if typ == proto.FrameSnapshot && a.hint != "" && !a.res.ReadOnly {
				showHint(a.term.pane, a.hint)
				a.hint = ""
			}
		case proto.FrameNotice:
			var n proto.Notice
			if a.res.Direct || json.Unmarshal(payload, &n) != nil {
				continue
			}
			style := a.notice
			if a.copying.Load() {
				// Copy mode has the screen: no line over it.
				style.Line = false
			}
			w, h := termSize()
			io.WriteString(a.term.pane, attachterm.Notice(style, n, w, h))
		case proto.FrameExit:
			var e struct {
				ExitCode int `json:"exit_code"`
			}
			json.Unmarshal(payload, &e)
			a.done <- attachOutcome{exitCode: &e.ExitCode}
			return
		}
	}
}

// pumpResize tells the daemon every new size of the user's terminal.
func (a *attachment) pumpResize(winch <-chan os.Signal) {
	for range winch {
		w, h := termSize()
		a.send(proto.FrameResize, proto.ResizePayload(w, h))
	}
}

// runOpens runs copy mode's pager or editor each time a daemon that
// holds the terminal asks (HandbackOpen), then gives the terminal back
// with what went wrong, if anything, for copy mode's status line.
func (a *attachment) runOpens() {
	for {
		select {
		case hb := <-a.opens:
			var msg []byte
			if err := a.term.openInProgram(hb.File, hb.Editor); err != nil {
				msg = []byte(err.Error())
			}
			a.send(proto.FrameResume, msg)
		case <-a.ended:
			return
		}
	}
}

// pumpInput reads the user's keys from stdin while this client relays
// the pane: keys go to the pane, to copy mode, or end the attach, as the
// key scan (attachterm.Keys) finds them.
func (a *attachment) pumpInput(stdin io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		data := buf[:n]
		if n > 0 {
			var ws []attachterm.Wheel
			data, ws = a.keys.Split(data)
			a.turnWheels(ws)
			if a.keys.Pending() && !rawio.Readable(os.Stdin.Fd(), a.escape) {
				// Nothing completed the sequence: a lone Esc.
				data = append(data, a.keys.Flush()...)
			}
		}
		if len(data) > 0 {
			before, act, rest := a.keys.Find(data, a.cm != nil)
			if a.cm != nil {
				over, after := a.cm.Feed(before)
				if act == attachterm.Detach {
					a.leave(attachOutcome{detached: true})
					return
				}
				if over {
					a.leaveCopy(after)
				}
				continue
			}
			switch act {
			case attachterm.Copy:
				a.typed(before)
				a.startCopy()
				if over, after := a.cm.Feed(rest); over {
					a.leaveCopy(after)
				}
				continue
			case attachterm.Detach:
				a.typed(before)
				a.leave(attachOutcome{detached: true})
				return
			}
			if err := a.typed(before); err != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, cancelreader.ErrCanceled) {
				return
			}
			a.leave(attachOutcome{detached: true})
			return
		}
	}
}

// copyModeLines is the most history copy mode asks the daemon for.
const copyModeLines = 100000

// startCopy opens copy mode on the pane's history, read over a
// connection of its own.
func (a *attachment) startCopy() {
	a.copying.Store(true)
	text := ""
	if cc, err := a.f.Client(a.ctx); err == nil {
		var cr proto.CaptureResult
		if err := cc.Call(a.ctx, proto.OpCapture, proto.CaptureArgs{Name: a.res.Name, Scrollback: copyModeLines}, &cr); err == nil {
			text = termtext.Strip(cr.Text)
		}
		cc.Close()
	}
	w, h := termSize()
	a.cm = attachterm.NewCopyMode(a.term.pane, text, w, h)
	a.cm.Open = a.term.openInProgram
}

// leaveCopy gives the screen back to the pane; rest is input typed after
// the key that left.
func (a *attachment) leaveCopy(rest []byte) {
	a.cm = nil
	io.WriteString(a.term.pane, "\x1b[0m\x1b[H\x1b[2J")
	a.copying.Store(false)
	a.typed(rest)
	// A resize frame, even of the same size, makes the daemon repaint
	// this client.
	w, h := termSize()
	a.send(proto.FrameResize, proto.ResizePayload(w, h))
}

// turnWheels turns the wheel in copy mode, opening it on the first turn
// up.
func (a *attachment) turnWheels(ws []attachterm.Wheel) {
	for _, wh := range ws {
		if a.cm == nil {
			if wh != attachterm.WheelUp {
				continue
			}
			a.startCopy()
			a.cm.FromWheel = true
		}
		a.cm.Wheel(wh)
		if a.cm.Over() {
			a.leaveCopy(nil)
		} else {
			a.cm.Draw()
		}
	}
}
