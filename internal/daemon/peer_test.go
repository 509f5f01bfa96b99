package daemon

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/store"
)

// fakeTree is a process table: pid → parent, session and environment.
type fakeTree map[int]fakeProc

type fakeProc struct {
	ppid, sid int
	env       map[string]string
}

func (t fakeTree) parent(pid int) (int, error) {
	p, ok := t[pid]
	if !ok {
		return 0, os.ErrNotExist
	}
	return p.ppid, nil
}

func (t fakeTree) session(pid int) (int, error) {
	p, ok := t[pid]
	if !ok {
		return 0, os.ErrNotExist
	}
	return p.sid, nil
}

func (t fakeTree) environ(pid int, key string) (string, error) {
	p, ok := t[pid]
	if !ok {
		return "", os.ErrNotExist
	}
	return p.env[key], nil
}

func TestClassify(t *testing.T) {
	// 1 init ─ 10 daemon ─ 100 pane root of "evil" (session 100)
	//                         └ 101 shell ─ 102 muster
	//        ─ 20 user shell ─ 21 muster
	//        ─ 300 setsid'd escapee with the pane's environment
	//        ─ 400 setsid'd escapee with a cleared environment
	//        ─ 500 double-forked job still in the pane's session
	//        ─ 600 job from an exited pane of "old"
	//        ─ 700 a process with the variables of another Muster home
	tree := fakeTree{
		1:   {0, 1, nil},
		10:  {1, 10, nil},
		100: {10, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		101: {100, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		102: {101, 100, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		20:  {1, 20, nil},
		21:  {20, 20, nil},
		300: {1, 300, map[string]string{"MUSTER_SURFACE_ID": "surf-evil"}},
		400: {1, 400, nil},
		500: {1, 100, nil},
		600: {1, 600, map[string]string{"MUSTER_SURFACE_ID": "surf-old-1"}},
		700: {1, 700, map[string]string{"MUSTER_SURFACE_ID": "surf-elsewhere"}},
	}
	idx := paneIndex{
		roots:    map[int]string{100: "s-evil"},
		surfaces: map[string]string{"surf-evil": "s-evil"},
		names:    map[string]string{"s-evil": "evil", "s-old": "old"},
		lookupSurface: func(surf string) (string, string, bool) {
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
		{"pane root", 100, true, "s-evil", "ancestry"},
		{"grandchild of the pane", 102, true, "s-evil", "ancestry"},
		{"user's terminal", 21, false, "", ""},
		{"escaped with the pane's environment", 300, true, "s-evil", "environment"},
		{"escaped completely", 400, false, "", ""},
		{"reparented but in the pane's session", 500, true, "s-evil", "session"},
		{"outlived its pane", 600, true, "s-old", "environment"},
		{"another home's pane", 700, false, "", ""},
		{"gone before it was read", 999, true, "", "unidentified"},
		{"hidden by a pid namespace", 0, true, "", "unidentified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tree, idx, tc.pid)
			if got.inPane != tc.inPane || got.sessionID != tc.session || got.how != tc.how {
				t.Errorf("classify(%d) = %+v, want inPane %v session %q how %q", tc.pid, got, tc.inPane, tc.session, tc.how)
			}
		})
	}
}

func TestClassifyEndsOnACycle(t *testing.T) {
	tree := fakeTree{5: {6, 5, nil}, 6: {5, 6, nil}}
	if got := classify(tree, paneIndex{roots: map[int]string{}}, 5); got.inPane {
		t.Errorf("classify = %+v, want outside", got)
	}
}

func TestProcFSReadsThisProcess(t *testing.T) {
	p := systemProcs()
	if _, ok := p.(procFS); !ok {
		t.Skip("no procfs here")
	}
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"MUSTER_SURFACE_ID=surf-x", "OTHER=1"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	if pp, err := p.parent(pid); err != nil || pp != os.Getpid() {
		t.Errorf("parent = %d, %v; want %d", pp, err, os.Getpid())
	}
	want, _ := p.session(os.Getpid())
	if sid, err := p.session(pid); err != nil || sid != want {
		t.Errorf("session = %d, %v; want %d (inherited)", sid, err, want)
	}
	if v, err := p.environ(pid, "MUSTER_SURFACE_ID"); err != nil || v != "surf-x" {
		t.Errorf("environ = %q, %v", v, err)
	}
	if v, err := p.environ(pid, "MUSTER_SURFACE"); err != nil || v != "" {
		t.Errorf("environ of a prefix = %q, %v; want empty", v, err)
	}
}

func TestMayDrive(t *testing.T) {
	d := &Daemon{sessions: map[string]*session{}}
	add := func(id, name, parent string) {
		d.sessions[id] = &session{rec: store.Session{ID: id, Name: name, ParentID: parent}}
	}
	add("o", "orchestrator", "")
	add("w1", "worker", "o")
	add("w2", "subworker", "w1")
	add("v", "victim", "")
	add("x", "orphan", "gone") // its parent was killed
	inside := func(sid string) peerWhere { return peerWhere{pid: 7, inPane: true, sessionID: sid} }
	for _, tc := range []struct {
		name   string
		peer   peerWhere
		target string
		ok     bool
	}{
		{"outside may drive anything", peerWhere{pid: 7}, "v", true},
		{"itself", inside("o"), "o", true},
		{"its child", inside("o"), "w1", true},
		{"its grandchild", inside("o"), "w2", true},
		{"another pane", inside("o"), "v", false},
		{"its parent", inside("w1"), "o", false},
		{"a sibling's child", inside("v"), "w2", false},
		{"unidentified", peerWhere{pid: 7, inPane: true}, "o", false},
		{"an orphan", inside("o"), "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.mayDriveLocked(tc.peer, d.sessions[tc.target])
			if tc.ok != (err == nil) {
				t.Fatalf("mayDrive = %v, want ok=%v", err, tc.ok)
			}
			if err != nil {
				pe, ok := errors.AsType[*proto.Error](err)
				if !ok || pe.Code != proto.CodeForbidden {
					t.Fatalf("err = %#v, want code forbidden", err)
				}
			}
		})
	}
}

func TestRefusalMessage(t *testing.T) {
	d := &Daemon{sessions: map[string]*session{
		"e": {rec: store.Session{ID: "e", Name: "evil"}},
		"v": {rec: store.Session{ID: "v", Name: "victim"}},
	}}
	err := d.mayDriveLocked(peerWhere{pid: 7, inPane: true, sessionID: "e"}, d.sessions["v"])
	want := `refused: this process runs inside muster pane "evil"; it may not drive pane "victim"`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestEveryPaneRuleIsDeliberate(t *testing.T) {
	access := func(op string) proto.Access {
		o, ok := proto.Lookup(op)
		if !ok {
			return 0
		}
		return o.Access
	}
	for _, op := range []string{"status", "ls", "wait", "attention", "explain", "hello"} {
		if access(op) != proto.ReadOnly {
			t.Errorf("%s: want allowed from a pane", op)
		}
	}
	for _, op := range []string{"send", "capture", "kill", "rename", "ack", "native_capture", "new"} {
		if access(op) != proto.OwnPane {
			t.Errorf("%s: want allowed on the pane's own sessions only", op)
		}
	}
	for _, op := range []string{"stop", "resume", "attach"} {
		if access(op) != proto.Outside {
			t.Errorf("%s: want refused from a pane", op)
		}
	}
	if len(proto.Ops) != 16 {
		t.Errorf("%d ops: give the new ones a deliberate rule here", len(proto.Ops))
	}
	// An op the table does not know is refused from a pane.
	d := &Daemon{procs: fakeTree{}, sessions: map[string]*session{}}
	inPane := func() peerWhere { return peerWhere{pid: 9, inPane: true, how: "unidentified"} }
	if err := d.gate(inPane, proto.Op{}, false, nil); err == nil {
		t.Error("an unknown op from a pane was let through")
	}
}
