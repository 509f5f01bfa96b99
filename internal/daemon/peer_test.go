package daemon

import (
	"errors"
	"os"
	"testing"

	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/store"
)

// fakeProcs is a process table: pid → parent and session.
type fakeProcs map[int][2]int

func (t fakeProcs) Stat(pid int) (panepeer.Stat, error) {
	p, ok := t[pid]
	if !ok {
		return panepeer.Stat{}, os.ErrNotExist
	}
	return panepeer.Stat{PPID: p[0], SID: p[1]}, nil
}

func (t fakeProcs) Session(pid int) (int, error) {
	st, err := t.Stat(pid)
	return st.SID, err
}

func (fakeProcs) Environ(int, string) (string, error) { return "", nil }

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
	inside := func(sid string) panepeer.Where { return panepeer.Where{PID: 7, InPane: true, SessionID: sid} }
	for _, tc := range []struct {
		name   string
		peer   panepeer.Where
		target string
		ok     bool
	}{
		{"outside may drive anything", panepeer.Where{PID: 7}, "v", true},
		{"itself", inside("o"), "o", true},
		{"its child", inside("o"), "w1", true},
		{"its grandchild", inside("o"), "w2", true},
		{"another pane", inside("o"), "v", false},
		{"its parent", inside("w1"), "o", false},
		{"a sibling's child", inside("v"), "w2", false},
		{"unidentified", panepeer.Where{PID: 7, InPane: true}, "o", false},
		{"an orphan", inside("o"), "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.mayDriveLocked(tc.peer, d.sessions[tc.target])
			if tc.ok != (err == nil) {
				t.Fatalf("mayDrive = %v, want ok=%v", err, tc.ok)
			}
			// Attach follows the same rule, but never into the pane the
			// caller is in.
			own := tc.peer.InPane && tc.peer.SessionID == tc.target
			if aerr := d.mayAttachLocked(tc.peer, d.sessions[tc.target]); (aerr == nil) != (tc.ok && !own) {
				t.Fatalf("mayAttach = %v, want ok=%v", aerr, tc.ok && !own)
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
	err := d.mayDriveLocked(panepeer.Where{PID: 7, InPane: true, SessionID: "e"}, d.sessions["v"])
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
	for _, op := range []string{"status", "ls", "wait", "attention", "explain", "hello", "watch", "worktrees"} {
		if access(op) != proto.ReadOnly {
			t.Errorf("%s: want allowed from a pane", op)
		}
	}
	for _, op := range []string{"send", "capture", "kill", "rename", "ack", "native_capture", "new", "preview", "attach", "send_confirm", "autocontinue"} {
		if access(op) != proto.OwnPane {
			t.Errorf("%s: want allowed on the pane's own sessions only", op)
		}
	}
	for _, op := range []string{"stop", "resume", "restart", "worktree_rm", "setup_consent"} {
		if access(op) != proto.Outside {
			t.Errorf("%s: want refused from a pane", op)
		}
	}
	// host.call is let through the gate; its handler refuses every inner
	// op but the read-only ones from a pane (hostcall.go).
	if access(proto.OpHostCall) != proto.OwnPane {
		t.Errorf("%s: want checked by its handler", proto.OpHostCall)
	}
	if len(proto.Ops) != 25 {
		t.Errorf("%d ops: give the new ones a deliberate rule here", len(proto.Ops))
	}
	// An op the table does not know is refused from a pane.
	d := &Daemon{peers: panepeer.NewCache(fakeProcs{}), sessions: map[string]*session{}}
	inPane := func() panepeer.Where { return panepeer.Unidentified(9) }
	if err := d.gate(inPane, proto.Op{}, false, nil); err == nil {
		t.Error("an unknown op from a pane was let through")
	}
}

func TestMayRecord(t *testing.T) {
	d := &Daemon{sessions: map[string]*session{
		"e": {rec: store.Session{ID: "e", Name: "evil"}},
		"v": {rec: store.Session{ID: "v", Name: "victim"}},
	}}
	inside := func(sid string) panepeer.Where { return panepeer.Where{PID: 7, InPane: true, SessionID: sid} }
	for _, tc := range []struct {
		name    string
		peer    panepeer.Where
		session string
		ok      bool
	}{
		{"its own pane", inside("v"), "v", true},
		{"another pane", inside("e"), "v", false},
		{"outside every pane", panepeer.Where{PID: 7}, "v", true},
		{"unidentified", panepeer.Unidentified(7), "v", false},
		{"unidentified, for no session", panepeer.Unidentified(7), "", false},
		{"for a session that is gone", inside("e"), "gone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.mayRecordFrom(tc.peer, tc.session)
			if tc.ok != (err == nil) {
				t.Fatalf("MayRecord(%+v, %q) = %v, want ok=%v", tc.peer, tc.session, err, tc.ok)
			}
		})
	}
	err := d.mayRecordFrom(inside("e"), "v")
	if want := `muster pane "evil": it may not send events for pane "victim"`; err == nil || err.Error() != want {
		t.Errorf("refusal = %v, want %q", err, want)
	}
}
