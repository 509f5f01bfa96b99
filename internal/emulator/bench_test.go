package emulator

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

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
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		t := New(80, 24, Limits{Lines: 10000})
		go drain(t)
		for off := 0; off < len(in); off += 64 << 10 {
			t.Write(in[off:min(len(in), off+64<<10)])
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		held = ms.HeapAlloc - before
		if !strings.Contains(t.Text(10000, false), "line 1 of") {
			b.Fatal("history lost its first line")
		}
		t.Close()
	}
	b.ReportMetric(float64(held)/(1<<20), "heap-MiB/pane")
}
