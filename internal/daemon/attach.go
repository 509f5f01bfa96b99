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

	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/rawio"
)

// attach switches conn to frames: a snapshot, then live output; input and
// resize frames flow back until the client detaches or the pane exits.
func (d *Daemon) attach(ctx context.Context, conn *net.UnixConn, br *bufio.Reader, raw json.RawMessage) {
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
	p, final, code := s.pane, s.surface.FinalScreen, s.surface.ExitCode
	name, surfaceID := s.rec.Name, s.surface.ID
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
	if err := rep.ok(proto.AttachResult{Name: name, Exited: exited, ReadOnly: a.ReadOnly || exited}); err != nil {
		return
	}
	client := p.Attach(a.Cols, a.Rows, a.ReadOnly)
	defer client.Detach()
	// Frames go both ways with raw system calls (rawio): a keystroke and
	// its echo then wake no sysmon.
	var out io.Writer = conn
	if rc, err := conn.SyscallConn(); err == nil {
		client.SetDirect(func(b []byte) int { return rawio.TryWrite(rc, b) })
		out = rawio.Writer{RC: rc}
		if rest, err := br.Peek(br.Buffered()); err == nil {
			br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), rawio.Reader{RC: rc}), 64<<10)
		}
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
			if err := client.Input(payload); err != nil {
				d.logger.Debug("attach input", "err", err)
			} else {
				d.native.Input(surfaceID, payload) // the user's keys: evidence for the run state
			}
		case proto.FrameResize:
			// A frame has no reply: one out of range is ignored (the
			// size rule in proto/size.go), and the pane keeps its size.
			if cols, rows, err := proto.ParseResize(payload); err == nil && proto.ValidSize(cols, rows) {
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
	cancel()
	client.Detach()
	<-writerDone
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
