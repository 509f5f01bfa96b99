package pane

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// cpuTime is the process's user and system CPU time: on a shared machine
// it measures the pane's work where wall time measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOutputToClient is the pane→client path of bench/core.sh's
// socket phase inside one process: cat of coloured lines in a 200x50 pane,
// one client on a Unix socket written as the daemon writes it (direct
// writes, then a writer goroutine), read to the end. cpu-ms/MiB is the
// process's CPU (reader, emulator, writer, the reading end), not cat's.
func BenchmarkOutputToClient(b *testing.B) {
	const size = 16 << 20
	var payload bytes.Buffer
	for i := 0; payload.Len() < size; i++ {
		fmt.Fprintf(&payload, "\x1b[3%dmline %08d\x1b[0m the quick brown fox jumps over the lazy dog %d\n", i%8, i, i*7)
	}
	file := filepath.Join(b.TempDir(), "payload")
	if err := os.WriteFile(file, payload.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	const mark = "BENCH-DONE-MARK"
	b.SetBytes(size)
	var cpu time.Duration
	for b.Loop() {
		p, err := Start(Config{Argv: []string{"sh", "-c", "read x; cat " + file + "; echo " + mark + "; sleep 100"}, Cols: 200, Rows: 50})
		if err != nil {
			b.Fatal(err)
		}
		c := p.Attach(200, 50, true)
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			b.Fatal(err)
		}
		mine, _ := net.FileConn(os.NewFile(uintptr(fds[0]), "daemon"))
		theirs, _ := net.FileConn(os.NewFile(uintptr(fds[1]), "client"))
		conn := mine.(*net.UnixConn)
		raw, _ := conn.SyscallConn()
		c.SetDirect(func(b []byte) []byte {
			n := 0
			raw.Write(func(fd uintptr) bool {
				if m, err := syscall.Write(int(fd), b); err == nil && m > 0 {
					n = m
				}
				return true
			})
			return b[n:]
		}, true)
		go func() {
			bw := bufio.NewWriterSize(conn, 256<<10)
			for {
				frames, ok := c.Next(b.Context())
				if !ok {
					return
				}
				for _, f := range frames {
					if f.Type == FrameRaw {
						bw.Write(f.Data)
					} else {
						proto.WriteFrame(bw, f.Type, f.Data)
					}
				}
				if bw.Flush() != nil {
					return
				}
				c.Sent()
			}
		}()
		br := bufio.NewReaderSize(theirs, 1<<20)
		buf := make([]byte, 0, 1<<20)
		start := cpuTime()
		p.Write([]byte("go\n"))
		var tail []byte
		for !bytes.Contains(tail, []byte(mark)) {
			typ, data, err := proto.ReadFrame(br, buf)
			if err != nil {
				b.Fatal(err)
			}
			if typ == proto.FrameOutput || typ == proto.FrameSnapshot {
				tail = append(tail, data...)
				if len(tail) > 64 {
					tail = append(tail[:0], tail[len(tail)-64:]...)
				}
			}
		}
		cpu += cpuTime() - start
		c.Detach()
		p.Close(time.Second)
		mine.Close()
		theirs.Close()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N)/16, "cpu-ms/MiB")
}
