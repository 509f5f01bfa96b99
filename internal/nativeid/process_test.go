package nativeid

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fakeTree is a ProcessTree from a parent map and executable names.
type fakeTree struct {
	parent map[int]int
	exe    map[int]string
}

func (f fakeTree) ParentOf(pid int) (int, error) {
	p, ok := f.parent[pid]
	if !ok {
		return 0, fmt.Errorf("no process %d", pid)
	}
	return p, nil
}

func (f fakeTree) Executable(pid int) (string, error) {
	e, ok := f.exe[pid]
	if !ok {
		return "", fmt.Errorf("no process %d", pid)
	}
	return e, nil
}

// parentsOnly hides Executable, so no process is a wrapper.
type parentsOnly struct{ t fakeTree }

func (p parentsOnly) ParentOf(pid int) (int, error) { return p.t.ParentOf(pid) }

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestCheckProcess(t *testing.T) {
	// Pane 100 runs the agent directly; pane 200 runs the user's shell.
	//
	//   1 ─ 100 claude ─ 101 sh (Bash tool) ─ 102 claude (nested)
	//                  └ 103 claude (nested, exec'd by sh -c)
	//   1 ─ 200 bash ─ 201 claude ─ 202 bash ─ 203 claude (nested)
	//               └ 210 node (codex npm shim) ─ 211 codex ─ 212 node shim ─ 213 codex
	//   1 ─ 300 node (codex shim, first-class) ─ 301 codex
	//   1 ─ 400 node (gemini) ─ 401 node (gemini relaunch) ─ 402 bash ─ 403 node ─ 404 node
	//   1 ─ 500 unrelated
	tree := fakeTree{
		parent: map[int]int{
			100: 1, 101: 100, 102: 101, 103: 100,
			200: 1, 201: 200, 202: 201, 203: 202, 210: 200, 211: 210, 212: 211, 213: 212,
			300: 1, 301: 300,
			400: 1, 401: 400, 402: 401, 403: 402, 404: 403,
			500: 1,
		},
		exe: map[int]string{
			100: "claude", 101: "sh", 102: "claude", 103: "claude",
			200: "bash", 201: "claude", 202: "bash", 203: "claude", 210: "node", 211: "codex", 212: "node", 213: "codex",
			300: "node", 301: "codex",
			400: "node", 401: "node", 402: "bash", 403: "node", 404: "node",
			500: "vim",
		},
	}
	tests := []struct {
		name        string
		tree        ProcessTree
		root        int
		pid, ppid   int
		agentIsRoot bool
		want        error
	}{
		{"first-class agent", tree, 100, 100, 0, true, nil},
		{"first-class agent with claimed parent", tree, 100, 100, 1, true, nil},
		{"first-class: nested through a tool shell", tree, 100, 102, 0, true, ErrNestedProcess},
		{"first-class: nested exec'd child", tree, 100, 103, 100, true, ErrNestedProcess},
		{"first-class: tool shell itself", tree, 100, 101, 0, true, ErrNestedProcess},
		{"shell: direct child", tree, 200, 201, 200, false, nil},
		{"shell: the shell itself", tree, 200, 200, 0, false, nil},
		{"shell: nested agent", tree, 200, 203, 202, false, ErrNestedProcess},
		{"shell: agent's tool shell", tree, 200, 202, 0, false, ErrNestedProcess},
		{"shell: codex behind its npm shim", tree, 200, 211, 210, false, nil},
		{"shell: nested codex behind a shim", tree, 200, 213, 212, false, ErrNestedProcess},
		{"shell: shim without executable names is not a wrapper", parentsOnly{tree}, 200, 211, 0, false, ErrNestedProcess},
		{"first-class codex behind its npm shim", tree, 300, 301, 300, true, nil},
		{"first-class gemini relaunch", tree, 400, 401, 400, true, nil},
		{"first-class gemini: nested gemini relaunch", tree, 400, 404, 403, true, ErrNestedProcess},
		{"other pane's process", tree, 100, 201, 0, true, ErrNotInPane},
		{"unrelated process", tree, 200, 500, 0, false, ErrNotInPane},
		{"wrong claimed parent", tree, 200, 201, 1, false, ErrParentMismatch},
		{"gone", tree, 100, 999, 0, true, ErrProcessGone},
		{"zero pid", tree, 100, 0, 0, true, ErrBadPID},
		{"negative parent", tree, 100, 100, -1, true, ErrBadPID},
		{"zero root", tree, 0, 100, 0, true, ErrBadPID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckProcess(tt.tree, tt.root, tt.pid, tt.ppid, tt.agentIsRoot)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckProcess = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckProcess = %v, want %v", err, tt.want)
			}
		})
	}
}

func writeStat(t *testing.T, dir string, pid int, comm string, ppid int) {
	t.Helper()
	d := filepath.Join(dir, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 0 0\n", pid, comm, ppid, pid, pid)
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProcFS(t *testing.T) {
	dir := t.TempDir()
	writeStat(t, dir, 10, "bash", 1)
	writeStat(t, dir, 11, "weird) (name) S 99", 10) // comm with ") " inside
	writeStat(t, dir, 12, "MainThread", 11)
	if err := os.Symlink("/usr/lib/node_modules/x/bin/node", filepath.Join(dir, "12", "exe")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "13"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "13", "stat"), []byte("13 (x S"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := ProcFS{Dir: dir}
	for _, tt := range []struct {
		pid, ppid int
		exe       string
	}{{10, 1, "bash"}, {11, 10, "weird) (name) S 99"}, {12, 11, "node"}} {
		got, err := fs.ParentOf(tt.pid)
		if err != nil || got != tt.ppid {
			t.Errorf("ParentOf(%d) = %d, %v; want %d", tt.pid, got, err, tt.ppid)
		}
		exe, err := fs.Executable(tt.pid)
		if err != nil || exe != tt.exe {
			t.Errorf("Executable(%d) = %q, %v; want %q", tt.pid, exe, err, tt.exe)
		}
	}
	if _, err := fs.ParentOf(13); err == nil {
		t.Error("ParentOf(13) accepted a malformed stat")
	}
	if _, err := fs.ParentOf(14); err == nil {
		t.Error("ParentOf(14) accepted a missing process")
	}
}

// TestProcFSLive reads this test process from the real /proc.
func TestProcFSLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	got, err := ProcFS{}.ParentOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got != os.Getppid() {
		t.Errorf("ParentOf(self) = %d, want %d", got, os.Getppid())
	}
	if err := CheckProcess(ProcFS{}, os.Getppid(), os.Getpid(), os.Getppid(), false); err != nil {
		t.Errorf("CheckProcess(self under parent) = %v", err)
	}
}
