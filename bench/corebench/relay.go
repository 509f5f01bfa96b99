package main

// The minimal Go relay is the floor anchor of issue 11: a server that owns
// a PTY and copies it to one unix-socket client and back, and a client that
// copies its terminal to the socket and back, both written as plainly as Go
// allows (goroutines and io.Copy over *os.File and *net.UnixConn, the PTY
// and the terminal in blocking mode), with no protocol, emulator or framing.
// It has the same process hop as muster (server, client, program) where
// tmux's server writes to the client's terminal itself through a passed fd,
// so muster/relay says how far Muster is from what a Go client and daemon
// can reach on this machine, apart from tmux's design.

import (
	_ "embed"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// relayMain runs the relay's server or client when corebench is started
// as one of them, and reports whether it was.
func relayMain(args []string) bool {
	if len(args) < 2 {
		return false
	}
	switch args[0] {
	case "relay-server":
		if len(args) != 3 {
			return false
		}
		must(relayServer(args[1], args[2]))
	case "relay-client":
		must(relayClient(args[1]))
	case "direct-server":
		must(directServer(args[1]))
	case "epoll-server":
		must(epollServer(args[1]))
	case "esc-echo":
		must(escEcho())
	default:
		return false
	}
	os.Exit(0)
	return true
}

// relayServer runs command in a 200x50 PTY and relays it to the first
// client of sock until either side ends.
func relayServer(sock, command string) error {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	defer l.Close()
	ptmx, err := pty.StartWithSize(exec.Command("sh", "-c", command), &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		return err
	}
	conn, err := l.Accept()
	if err != nil {
		return err
	}
	go io.Copy(ptmx, conn)
	io.Copy(conn, ptmx)
	return nil
}

// directServer is the Go anchor of tmux's own design: one process between
// the terminal and the program, holding both (tmux's server writes to the
// client's terminal through the fd the client passed it). It runs command
// in a 200x50 PTY and copies it to its terminal and back, in raw mode, with
// goroutines and io.Copy. Muster would reach it only by taking the client's
// terminal fd over the socket; tmux/direct says what Go itself costs.
func directServer(command string) error {
	ptmx, err := pty.StartWithSize(exec.Command("sh", "-c", command), &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		return err
	}
	return rawCopy(ptmx)
}

// rawCopy puts the terminal in raw mode and copies it to rw and back until
// rw ends.
func rawCopy(rw io.ReadWriter) error {
	st, err := term.MakeRaw(int(os.Stdin.Fd()))
	if err != nil {
		return err
	}
	defer term.Restore(int(os.Stdin.Fd()), st)
	go io.Copy(rw, os.Stdin)
	io.Copy(os.Stdout, rw)
	return nil
}

// epollServer is directServer without Go's scheduler on the path: one
// locked OS thread waits in epoll on the terminal and the PTY and copies
// with plain read and write calls, as tmux's libevent loop does. What is
// left between it and tmux is the machine, not the language runtime.
func epollServer(command string) error {
	ptmx, err := pty.StartWithSize(exec.Command("sh", "-c", command), &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		return err
	}
	in := int(os.Stdin.Fd())
	st, err := term.MakeRaw(in)
	if err != nil {
		return err
	}
	defer term.Restore(in, st)
	runtime.LockOSThread()
	pfd := int(ptmx.Fd()) // Fd puts the PTY back in blocking mode; epoll says when it is ready
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	for _, fd := range []int{in, pfd} {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return err
		}
	}
	evs := make([]unix.EpollEvent, 2)
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.EpollWait(ep, evs, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range evs[:n] {
			dst := pfd
			if int(ev.Fd) == pfd {
				dst = int(os.Stdout.Fd())
			}
			m, err := unix.Read(int(ev.Fd), buf)
			if m <= 0 || err != nil {
				return nil
			}
			for p := buf[:m]; len(p) > 0; {
				w, err := unix.Write(dst, p)
				if err != nil {
					return nil
				}
				p = p[w:]
			}
		}
	}
}

// relayClient puts its terminal in raw mode and relays it to sock.
func relayClient(sock string) error {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	return rawCopy(conn)
}

// startRelay starts a relay server for command and waits until it listens.
func startRelay(command string) (sock string, stop func()) {
	self, err := os.Executable()
	must(err)
	sock = filepath.Join(os.Getenv("MUSTER_HOME"), fmt.Sprintf("relay%d.sock", time.Now().UnixNano()))
	cmd := exec.Command(self, "relay-server", sock, command)
	cmd.Stderr = os.Stderr
	must(cmd.Start())
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 500 {
			must(fmt.Errorf("relay server did not listen on %s", sock))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return sock, func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// timeRelaySocket reads the relay's socket to the end, as timeMusterSocket
// reads muster's.
func timeRelaySocket(payload string) time.Duration {
	fifo := newFifo()
	sock, stop := startRelay(gatedCmd(payload, fifo))
	defer stop()
	conn, err := net.Dial("unix", sock)
	must(err)
	defer conn.Close()
	start := openGate(fifo)
	readUntil(conn, marker)
	return time.Since(start)
}

// selfPTY starts corebench itself as one of its anchors (role, with arg)
// in a 200x50 PTY: the relay's client, the direct or the epoll server.
func selfPTY(role, arg string) (*os.File, *exec.Cmd) {
	self, err := os.Executable()
	must(err)
	return startPTY(exec.Command(self, role, arg))
}

// startPTY starts cmd in a PTY of 200x50, as every attached kind runs.
func startPTY(cmd *exec.Cmd) (*os.File, *exec.Cmd) {
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	must(err)
	return f, cmd
}

//go:embed cepoll/cepoll.c
var cepollSource []byte

// cepollBin is the compiled C epoll anchor, or "" without a C compiler.
var cepollBin = sync.OnceValue(func() string {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return ""
	}
	dir := os.Getenv("MUSTER_HOME")
	src, bin := filepath.Join(dir, "cepoll.c"), filepath.Join(dir, "cepoll")
	must(os.WriteFile(src, cepollSource, 0o644))
	if out, err := exec.Command(cc, "-O2", "-o", bin, src, "-lutil").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "corebench: no C epoll anchor: %v\n%s", err, out)
		return ""
	}
	return bin
})

// escEcho is the program in the pane of the Esc test: in raw mode, it
// writes "E" for every ESC byte it reads and nothing for anything else,
// so that the time from a lone Esc typed to its "E" is how long the
// multiplexer held the key.
func escEcho() error {
	old, err := term.MakeRaw(0)
	if err != nil {
		return err
	}
	defer term.Restore(0, old)
	os.Stdout.WriteString("esc-ready")
	buf := make([]byte, 256)
	for {
		n, err := os.Stdin.Read(buf)
		for _, b := range buf[:n] {
			if b == 0x1b {
				os.Stdout.WriteString("E")
			}
		}
		if err != nil {
			return nil
		}
	}
}
