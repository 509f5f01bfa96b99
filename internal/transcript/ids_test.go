package transcript

import (
	"runtime"
	"strconv"
	"testing"
)

func TestIDSet(t *testing.T) {
	var s IDSet
	const n = 100_000
	for i := range n {
		if !s.Add("toolu_" + strconv.Itoa(i)) {
			t.Fatalf("id %d was taken for one added before", i)
		}
	}
	for i := range n {
		if s.Add("toolu_" + strconv.Itoa(i)) {
			t.Fatalf("id %d was forgotten", i)
		}
	}
	if !s.Add("") || s.Add("") {
		t.Errorf("the empty id is not remembered once")
	}
}

// TestIDSetMemory: a million ids, about what a gigabyte Claude Code
// transcript's records carry, cost a few bytes more than their 8-byte
// hashes; a map[uint64]struct{} took 36 bytes an id.
func TestIDSetMemory(t *testing.T) {
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const n = 1 << 20
	before := live()
	var s IDSet
	for i := range n {
		s.Add(strconv.Itoa(i))
	}
	perID := float64(live()-before) / n
	runtime.KeepAlive(&s)
	t.Logf("%.1f bytes an id", perID)
	if perID > 24 {
		t.Errorf("%.1f bytes an id; want at most 24", perID)
	}
}

func TestCallNames(t *testing.T) {
	var c CallNames
	c.Set("first", [2]string{"Bash", "shell"})
	c.Set("kept", [2]string{"Read", "read_file"})
	if n, ok := c.Get("first"); !ok || n != [2]string{"Bash", "shell"} {
		t.Fatalf("Get(first) = %q, %v", n, ok)
	}
	for i := range maxCallNames - 1 {
		c.Set(strconv.Itoa(i), [2]string{"Bash", "shell"})
		if i == maxCallNames/2 {
			c.Set("kept", [2]string{"Read", "read_file"}) // set again: kept longer
		}
	}
	if _, ok := c.Get("first"); ok {
		t.Errorf("the oldest call is still remembered after %d more", maxCallNames)
	}
	if _, ok := c.Get("kept"); !ok {
		t.Errorf("a call set again was forgotten with its first setting")
	}
	if _, ok := c.Get(strconv.Itoa(maxCallNames - 2)); !ok {
		t.Errorf("the latest call is forgotten")
	}
	if len(c.m) > maxCallNames {
		t.Errorf("%d calls remembered; want at most %d", len(c.m), maxCallNames)
	}
}
