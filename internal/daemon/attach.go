package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
	"github.com/musterhq/muster/internal/termtext"
)

// attach switches conn to frames: a snapshot, then live output; input and
// resize frames flow back until the client detaches or the pane exits.
//
// A client that passed the user's terminal with the request (take gives
// its descriptor) has the daemon write the pane to that terminal, read
// its keys and run copy mode itself (heldTerminal); the socket then
// carries handbacks, the exit, and the frames of the client's own:
// resize, detach, and the resume after copy mode's pager.
func (d *Daemon) attach(ctx context.Context, conn *net.UnixConn, br *bufio.Reader, raw json.RawMessage, take func() int) {
	rep := replier{w: conn}
	var a proto.AttachArgs
	if err := proto.DecodeArgs(raw, &a); err != nil {
		rep.fail(err)
		return
	}
	if err := proto.CheckSize(a.Cols, a.Rows); err != nil {
		rep.fail(err)
		return
	}
	p0 := peerOf(ctx)()
	d.mu.Lock()
	s, err := d.lookupLocked(a.Name)
	if err == nil {
		err = d.mayAttachLocked(p0, s)
	}
	if err != nil {
		d.mu.Unlock()
		rep.fail(err)
		return
	}
	// Copy mode shows the history only to a client that may capture it.
	mayCapture := d.mayDriveLocked(p0, s) == nil
	p, final, code := s.pane, s.surface.FinalScreen, s.surface.ExitCode
	name, surfaceID, sessionID := s.rec.Name, s.surface.ID, s.rec.ID
	d.mu.Unlock()

	if p == nil {
		// The process died with an earlier daemon: show its last screen.
		rep.ok(proto.AttachResult{Name: name, Exited: true, ReadOnly: true})
		proto.WriteFrame(conn, proto.FrameSnapshot, textSnapshot(final))
		c := -1
		if code != nil {
			c = *code
		}
		payload, _ := json.Marshal(map[string]int{"exit_code": c})
		proto.WriteFrame(conn, proto.FrameExit, payload)
		return
	}
	exited, _ := p.Exited()
	var held *heldTerminal
	if fd := take(); fd >= 0 {
		if !a.Terminal || exited {
			unix.Close(fd)
		} else if held, err = holdTerminal(fd, a); err != nil {
			d.logger.Debug("attach: the client keeps its terminal", "err", err)
			held = nil
		}
	}
	if held != nil {
		defer held.f.Close()
	}
	if err := rep.ok(proto.AttachResult{Name: name, Exited: exited, ReadOnly: a.ReadOnly || exited, Direct: held != nil}); err != nil {
		return
	}
	cols, rows := a.Cols, a.Rows
	if !a.ReadOnly && !d.mayGrow(s, cols, rows) {
		// Past the emulator budget: the client shows the pane at the
		// size it has, as a larger client does.
		cols, rows = 0, 0
	}
	client := p.Attach(cols, rows, a.ReadOnly)
	defer client.Detach()
	if a.Notice != nil {
		send, stop := noticeSender(client, *a.Notice)
		defer stop()
		defer d.notices.subscribe(sessionID, send)()
	}
	input := func(b []byte) {
		// The user's keys are evidence for the run state, observed before
		// the agent can react to them (see send).
		if !a.ReadOnly {
			d.native.Input(surfaceID, b)
		}
		if err := client.Input(b); err != nil {
			d.logger.Debug("attach input", "err", err)
		}
	}
	// Frames go both ways with raw system calls (rawio): a keystroke and
	// its echo then wake no sysmon.
	var out io.Writer = conn
	if rc, err := conn.SyscallConn(); err == nil {
		socketDirect := func(b []byte) []byte { return b[rawio.TryWrite(rc, b):] }
		sink := client.SetDirect(socketDirect, true)
		if held != nil {
			held.socket[sink] = true
			held.socketDirect = socketDirect
		}
		out = rawio.Writer{RC: rc}
		if rest, err := br.Peek(br.Buffered()); err == nil {
			br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), rawio.Reader{RC: rc}), 64<<10)
		}
	}
	if held != nil {
		held.c = client
		held.input = func(b []byte) {
			if !a.ReadOnly {
				input(b)
			}
		}
		if mayCapture {
			held.history = func() string {
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				text, err := p.Capture(ctx, copyModeLines, false)
				if err != nil {
					return ""
				}
				return termtext.Strip(text)
			}
		}
		held.tempDir = d.dirs.Runtime
		if held.socketDirect == nil {
			held.socketDirect = func(b []byte) []byte { return b }
		}
		held.take()
		// Whatever ends the attach, the terminal is released before the
		// connection closes: the client restores the user's screen once
		// it sees the end, and nothing of the pane may follow.
		defer held.release()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer cancel()
		bw := bufio.NewWriterSize(out, 256<<10)
		for {
			frames, ok := client.Next(ctx)
			if !ok {
				return
			}
			for _, f := range frames {
				if held != nil {
					if f.Type == proto.FrameExit {
						// The client prints the final screen on the
						// terminal: the daemon lets it go first.
						held.release()
					}
					if held.write(f) {
						continue
					}
				}
				var err error
				if f.Type == pane.FrameRaw {
					_, err = bw.Write(f.Data)
				} else {
					err = proto.WriteFrame(bw, f.Type, f.Data)
				}
				if err != nil {
					return
				}
			}
			if err := bw.Flush(); err != nil {
				return
			}
			client.Sent()
			if frames[len(frames)-1].Type == proto.FrameExit {
				return
			}
		}
	}()
	go func() {
		<-ctx.Done()
		conn.CloseRead()
	}()
	buf := make([]byte, 0, 64<<10)
	for {
		typ, payload, err := proto.ReadFrame(br, buf)
		if err != nil {
			break
		}
		switch typ {
		case proto.FrameInput:
			input(payload)
		case proto.FrameResume:
			if held != nil {
				held.resumeOpen(payload)
			}
		case proto.FrameResize:
			// A frame has no reply: one out of range is ignored (the
			// size rule in proto/size.go), and the pane keeps its size.
			if cols, rows, err := proto.ParseResize(payload); err == nil && proto.ValidSize(cols, rows) && d.mayGrow(s, cols, rows) {
				client.Resize(cols, rows)
			} else {
				d.logger.Debug("attach resize ignored", "cols", cols, "rows", rows, "err", err)
			}
		case proto.FrameDetach:
			cancel()
		default:
			cancel()
		}
		if ctx.Err() != nil {
			break
		}
	}
	if held != nil {
		held.release()
	}
	cancel()
	client.Detach()
	<-writerDone
	if d.restarting() {
		// The pane runs on in the next image: the client attaches again
		// once it answers, with the terminal back in its hands first.
		payload, _ := json.Marshal(proto.Handback{Reason: proto.HandbackRestart})
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		proto.WriteFrame(conn, proto.FrameHandback, payload)
	}
}

// textSnapshot turns saved plain screen text into a repaint sequence.
func textSnapshot(text string) []byte {
	var b strings.Builder
	b.WriteString("\x1b[0m\x1b[H\x1b[2J")
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(&b, "\x1b[%d;1H%s", i+1, line)
	}
	return []byte(b.String())
}
