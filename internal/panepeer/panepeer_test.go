package panepeer

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// fakeProcs is a process table: pid → parent, session and environment.
type fakeProcs map[int]fakeProc

type fakeProc struct {
	ppid, sid int
	env       map[string]string
}

func (t fakeProcs) Stat(pid int) (Stat, error) {
	p, ok := t[pid]
	if !ok {
		return Stat{}, os.ErrNotExist
	}
	return Stat{PPID: p.ppid, SID: p.sid}, nil
}

func (t fakeProcs) Session(pid int) (int, error) {
	p, ok := t[pid]
	if !ok {
		return 0, os.ErrNotExist
	}
	return p.sid, nil
}

func (t fakeProcs) Environ(pid int, key string) (string, error) {
	p, ok := t[pid]
	if !ok {
		return "", os.ErrNotExist
	}
	return p.env[key], nil
}

func TestClassify(t *testing.T) {
	// 1 init ─ 10 daemon ─ 100 pane root of "evil" (session 100)
	//                         └ 101 shell ─ 102 muster
	//                                     ─ 103 a hook run after setsid
	//                      ─ 110 pane root of "victim" (session 110)
	//                         └ 111 hook, its parent 112 gone meanwhile
	//        ─ 20 user shell ─ 21 muster
	//        ─ 300 setsid'd escapee with the pane's environment
	//        ─ 400 setsid'd escapee with a cleared environment
	//        ─ 500 double-forked job still in the pane's session
	//        ─ 600 job from an exited pane of "old"
	//        ─ 700 a process with the variables of another Muster home
	//        ─ 800 a process whose parent is gone
	tree := fakeProcs{
		1:   {0, 1, nil},
		10:  {1, 10, nil},
		100: {10, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		101: {100, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		102: {101, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		103: {101, 103, nil},
		110: {10, 110, map[string]string{"MUSTER_SURFACE_ID": "surf-victim"}},
		111: {112, 110, map[string]string{"MUSTER_SURFACE_ID": "surf-victim"}},
		20:  {1, 20, nil},
		21:  {20, 20, nil},
		300: {1, 300, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		400: {1, 400, nil},
		500: {1, 100, nil},
		600: {1, 600, map[string]string{"MUSTER_SURFACE_ID": "surf-old-1"}},
		700: {1, 700, map[string]string{"MUSTER_SURFACE_ID": "surf-elsewhere"}},
		800: {999, 800, nil},
	}
	idx := Index{
		Roots:    map[int]string{100: "s-evil", 110: "s-victim"},
		Surfaces: map[string]string{"surf-evil": "s-evil", "surf-victim": "s-victim"},
		Names:    map[string]string{"s-evil": "evil", "s-victim": "victim", "s-old": "old"},
		LookupSurface: func(surf string) (string, string, bool) {
			if surf == "surf-old-1" {
				return "s-old", "old", true
			}
			return "", "", false
		},
	}
	for _, tc := range []struct {
		name    string
		pid     int
		inPane  bool
		session string
		how     string
	}{
		{"pane root", 100, true, "s-evil", "session"},
		{"grandchild of the pane", 102, true, "s-evil", "session"},
		{"grandchild of the pane in a session of its own", 103, true, "s-evil", "ancestry"},
		{"another pane's process whose parent is gone", 111, true, "s-victim", "session"},
		{"user's terminal", 21, false, "", ""},
		{"escaped with the pane's environment", 300, true, "s-evil", "environment"},
		{"escaped completely", 400, false, "", ""},
		{"reparented but in the pane's session", 500, true, "s-evil", "session"},
		{"outlived its pane", 600, true, "s-old", "environment"},
		{"another home's pane", 700, false, "", ""},
		{"its parent gone", 800, false, "", ""},
		{"gone before it was read", 999, true, "", "unidentified"},
		{"hidden by a pid namespace", 0, true, "", "unidentified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tree, idx, tc.pid)
			if got.InPane != tc.inPane || got.SessionID != tc.session || got.How != tc.how || got.PID != tc.pid {
				t.Errorf("Classify(%d) = %+v, want inPane %v session %q how %q", tc.pid, got, tc.inPane, tc.session, tc.how)
			}
			if tc.session != "" && got.Name != idx.Names[tc.session] {
				t.Errorf("Classify(%d).Name = %q, want %q", tc.pid, got.Name, idx.Names[tc.session])
			}
		})
	}
}

func TestClassifyEndsOnACycle(t *testing.T) {
	tree := fakeProcs{5: {6, 5, nil}, 6: {5, 6, nil}}
	if got := Classify(tree, Index{Roots: map[int]string{}}, 5); got.InPane {
		t.Errorf("Classify = %+v, want outside", got)
	}
}

func TestProcFSReadsThisProcess(t *testing.T) {
	p, ok := System().(ProcFS)
	if !ok {
		t.Skip("no procfs here")
	}
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"MUSTER_SURFACE_ID=surf-x", "OTHER=1"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	self, err := p.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Stat(pid); err != nil || st.PPID != os.Getpid() || st.SID != self.SID {
		t.Errorf("Stat = %+v, %v; want parent %d, session %d (inherited)", st, err, os.Getpid(), self.SID)
	}
	if sid, err := p.Session(pid); err != nil || sid != self.SID {
		t.Errorf("Session = %d, %v; want %d", sid, err, self.SID)
	}
	if v, err := p.Environ(pid, "MUSTER_SURFACE_ID"); err != nil || v != "surf-x" {
		t.Errorf("Environ = %q, %v", v, err)
	}
	if v, err := p.Environ(pid, "MUSTER_SURFACE"); err != nil || v != "" {
		t.Errorf("Environ of a prefix = %q, %v; want empty", v, err)
	}
	if _, err := p.Stat(1 << 30); err == nil {
		t.Error("Stat of a pid that cannot exist succeeded")
	}
}

func TestProcFSStatWithParenthesesInTheName(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/42", 0o755); err != nil {
		t.Fatal(err)
	}
	line := "42 (a) b) (c) S 7 42 9 34817 42 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5678 1 2\n"
	if err := os.WriteFile(dir+"/42/stat", []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := (ProcFS{Dir: dir}).Stat(42); err != nil || st != (Stat{PPID: 7, SID: 9}) {
		t.Errorf("Stat = %+v, %v; want parent 7, session 9", st, err)
	}
	if err := os.WriteFile(dir+"/42/stat", []byte("42 (x S 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (ProcFS{Dir: dir}).Stat(42); err == nil {
		t.Error("a malformed stat was accepted")
	}
}

// BenchmarkClassifyOutside is the dearest case, a peer outside every pane
// (the whole ancestry, the session and the environment are read), on this
// process.
func BenchmarkClassifyOutside(b *testing.B) {
	p := System()
	if p == nil {
		b.Skip("no process information here")
	}
	idx := Index{Roots: map[int]string{}}
	pid := os.Getpid()
	for b.Loop() {
		if w := Classify(p, idx, pid); w.InPane {
			b.Fatal(w)
		}
	}
}

// countingProcs counts the reads of a fakeProcs.
type countingProcs struct {
	fakeProcs
	reads, sessions int
}

func (c *countingProcs) Stat(pid int) (Stat, error) { c.reads++; return c.fakeProcs.Stat(pid) }
func (c *countingProcs) Session(pid int) (int, error) {
	c.sessions++
	return c.fakeProcs.Session(pid)
}
func (c *countingProcs) Environ(pid int, key string) (string, error) {
	c.reads++
	return c.fakeProcs.Environ(pid, key)
}

func TestCacheAnswersLikeClassify(t *testing.T) {
	tree := fakeProcs{
		1:   {0, 1, nil},
		10:  {1, 10, nil},
		100: {10, 100, nil},
		101: {100, 100, nil},
		102: {100, 102, nil}, // setsid'd inside the pane
		20:  {1, 20, nil},
		21:  {20, 20, nil},
		22:  {21, 20, map[string]string{"MUSTER_SURFACE_ID": "surf-b"}},
	}
	procs := &countingProcs{fakeProcs: tree}
	c := NewCache(procs)
	idx := Index{Roots: map[int]string{100: "a"}, Surfaces: map[string]string{"surf-a": "a"}}
	for _, pid := range []int{101, 102, 21, 22} {
		want := Classify(tree, idx, pid)
		if got := c.Classify(idx, pid); got != want {
			t.Errorf("first Classify(%d) = %+v, want %+v", pid, got, want)
		}
		procs.reads, procs.sessions = 0, 0
		if got := c.Classify(idx, pid); got != want || procs.reads != 0 || procs.sessions != 1 {
			t.Errorf("second Classify(%d) = %+v after %d reads and %d getsid, want %+v after one getsid", pid, got, procs.reads, procs.sessions, want)
		}
	}
	// A new pane whose surface a known process names: its entry is
	// stale.
	idx2 := Index{Roots: map[int]string{100: "a", 200: "b"}, Surfaces: map[string]string{"surf-a": "a", "surf-b": "b"}}
	if got := c.Classify(idx2, 22); !got.InPane || got.SessionID != "b" {
		t.Errorf("after a new pane, Classify(22) = %+v, want inside b", got)
	}
	// So is an entry after the Generation changes (a killed session).
	idx3 := idx2
	idx3.Surfaces = map[string]string{"surf-a": "a"}
	idx3.LookupSurface = func(s string) (string, string, bool) { return "b", "bee", s == "surf-b" }
	c.Classify(idx3, 22)
	idx3.Generation++
	if got := c.Classify(idx3, 22); got.SessionID != "b" || got.Name != "bee" {
		t.Errorf("Classify(22) after a new generation = %+v, want inside bee", got)
	}
	// The same pid, another process in another session.
	c2 := NewCache(tree)
	if got := c2.Classify(idx, 21); got.InPane {
		t.Fatalf("Classify(21) = %+v, want outside", got)
	}
	tree[21] = fakeProc{101, 21, nil}
	if got := c2.Classify(idx, 21); !got.InPane || got.SessionID != "a" {
		t.Errorf("a reused pid got the old process's answer: %+v", got)
	}
	// Gone: unidentified, whatever was cached.
	delete(tree, 21)
	if got := c2.Classify(idx, 21); got != Unidentified(21) {
		t.Errorf("Classify of a process gone = %+v, want unidentified", got)
	}
}

func TestVersion(t *testing.T) {
	a := Index{Roots: map[int]string{1: "a", 2: "b"}, Surfaces: map[string]string{"x": "a", "y": "b"}}
	b := Index{Roots: map[int]string{2: "b", 1: "a"}, Surfaces: map[string]string{"y": "b", "x": "a"}}
	if a.version() != b.version() {
		t.Error("equal indexes, different versions")
	}
	for name, c := range map[string]Index{
		"swapped roots":    {Roots: map[int]string{1: "b", 2: "a"}, Surfaces: a.Surfaces},
		"a surface more":   {Roots: a.Roots, Surfaces: map[string]string{"x": "a", "y": "b", "z": "a"}},
		"a root fewer":     {Roots: map[int]string{1: "a"}, Surfaces: a.Surfaces},
		"a new generation": {Roots: a.Roots, Surfaces: a.Surfaces, Generation: 1},
	} {
		if c.version() == a.version() {
			t.Errorf("%s: same version", name)
		}
	}
}

// BenchmarkCacheOutside is a long-lived client outside every pane, placed
// again (what events.sock pays per event for the benchmark's client).
func BenchmarkCacheOutside(b *testing.B) {
	p := System()
	if p == nil {
		b.Skip("no process information here")
	}
	idx := Index{Roots: map[int]string{}, Surfaces: map[string]string{}}
	for i := range 8 {
		idx.Roots[1<<22+i] = fmt.Sprint("session-", i)
		idx.Surfaces[fmt.Sprint("surface-", i)] = fmt.Sprint("session-", i)
	}
	c := NewCache(p)
	pid := os.Getpid()
	for b.Loop() {
		if w := c.Classify(idx, pid); w.InPane {
			b.Fatal(w)
		}
	}
}
