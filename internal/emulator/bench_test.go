package emulator

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// cpuTime is the process's user and system CPU time: on a shared machine
// it measures the work where wall time measures the neighbours.
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// fullWidth is 10,000 lines of exactly 80 columns, the input of the RSS
// benchmark in bench/core.sh.
func fullWidth() []byte {
	var b strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&b, "%-80.80s\r\n", fmt.Sprintf("line %d of some typical agent output, eighty columns or so wide, with words and more words to fill", i))
	}
	return []byte(b.String())
}

// BenchmarkScrollbackMemory reports the heap an 80×24 terminal holds after
// 10,000 full-width lines (heap-MiB/pane) and how fast it takes them in.
func BenchmarkScrollbackMemory(b *testing.B) {
	in := fullWidth()
	var ms runtime.MemStats
	var held uint64
	b.SetBytes(int64(len(in)))
	start := cpuTime()
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		t := New(80, 24, Limits{Lines: 10000})
		go drain(t)
		for off := 0; off < len(in); off += 64 << 10 {
			t.Write(in[off:min(len(in), off+64<<10)])
		}
		// Twice: the compressor one sync.Pool keeps for all terminals
		// is not this terminal's.
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		held = ms.HeapAlloc - before
		if !strings.Contains(t.Text(10000, false), "line 1 of") {
			b.Fatal("history lost its first line")
		}
		t.Close()
	}
	b.ReportMetric(float64(held)/(1<<20), "heap-MiB/pane")
	b.ReportMetric((cpuTime()-start)*1000/float64(b.N), "cpu-ms/pane")
}

// colouredLines is bench/core.sh's throughput payload: coloured lines that
// scroll a 200x50 screen on every newline.
func colouredLines(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\x1b[3%dmline %08d\x1b[0m the quick brown fox jumps over the lazy dog %d\r\n", i%8, i, i*7)
	}
	return []byte(b.String())
}

// BenchmarkWriteScrolling is the emulator's cost when every line scrolls a
// 200x50 screen, the case x/vt's per-cell line delete made slow.
func BenchmarkWriteScrolling(b *testing.B) {
	in := colouredLines(1 << 20)
	t := New(200, 50, Limits{Lines: 10000})
	defer t.Close()
	go drain(t)
	b.SetBytes(int64(len(in)))
	start := cpuTime()
	for b.Loop() {
		for off := 0; off < len(in); off += 4 << 10 {
			t.Write(in[off:min(len(in), off+4<<10)])
		}
	}
	b.ReportMetric((cpuTime()-start)*1000/float64(b.N), "cpu-ms/MiB")
}
