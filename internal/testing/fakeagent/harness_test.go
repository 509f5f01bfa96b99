package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/musterhq/muster/internal/testing/fakeagent/fakeagenttest"
	"github.com/musterhq/muster/internal/testing/poll"
)

// guard bounds every wait: a broken fake fails the test instead of hanging
// it. It is never an assertion about how fast anything is.
const guard = 20 * time.Second

// hookCmd appends each payload to $HOOKLOG, one per line.
const hookCmd = `cat >> "$HOOKLOG"; echo >> "$HOOKLOG"`

// world is a scratch home for one test: a temp HOME, provider homes, a
// project directory, and the fake's logs.
type world struct {
	t       *testing.T
	bin     string
	home    string
	repo    string
	hookLog string // what the hooks received
	invLog  string // $FAKEAGENT_LOG
	runLog  string // $FAKEAGENT_HOOK_LOG
	env     []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	bin := fakeagenttest.Build(t)
	root := t.TempDir()
	w := &world{
		t: t, bin: bin,
		home:    filepath.Join(root, "home"),
		repo:    filepath.Join(root, "my_repo.v2"),
		hookLog: filepath.Join(root, "hooks.jsonl"),
		invLog:  filepath.Join(root, "invocations.jsonl"),
		runLog:  filepath.Join(root, "hookruns.jsonl"),
	}
	for _, d := range []string{w.home, w.repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.env = []string{
		"HOME=" + w.home,
		"PATH=" + fakeagenttest.Path(bin),
		"TERM=xterm-256color",
		"TMPDIR=" + root,
		"HOOKLOG=" + w.hookLog,
		fakeagenttest.EnvLog + "=" + w.invLog,
		fakeagenttest.EnvHookLog + "=" + w.runLog,
		fakeagenttest.EnvNotifyDelay + "=50ms",
		"MUSTER_AGENT_SESSION_ID=muster-session-1",
		"MUSTER_SURFACE_ID=surface-7",
		"NOT_MUSTER=1",
	}
	return w
}

// writeFile writes data to path, creating directories.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hooksJSON is a settings document with hookCmd on each event; matcher
// is written when not nil.
func hooksJSON(events []string, matcher *string, extra string) string {
	var b strings.Builder
	b.WriteString(`{"hooks":{`)
	for i, ev := range events {
		if i > 0 {
			b.WriteString(",")
		}
		m := ""
		if matcher != nil {
			m = fmt.Sprintf(`"matcher":%q,`, *matcher)
		}
		fmt.Fprintf(&b, `%q:[{%s"hooks":[{"type":"command","command":%q%s}]}]`, ev, m, hookCmd, extra)
	}
	b.WriteString("}}")
	return b.String()
}

func ptr(s string) *string { return &s }

// agentProc is the fake running on a PTY.
type agentProc struct {
	t    *testing.T
	w    *world
	cmd  *exec.Cmd
	ptmx *os.File

	mu     sync.Mutex
	out    bytes.Buffer
	mark   int
	readCh chan struct{}
	exited chan struct{}
	code   int
}

// start runs the fake as name (claude, codex, gemini, fakeagent) in dir.
func (w *world) start(dir, name string, args []string, env ...string) *agentProc {
	w.t.Helper()
	cmd := exec.Command(filepath.Join(w.bin, name), args...)
	cmd.Args[0] = name
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, w.env...), env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		w.t.Fatalf("start %s: %v", name, err)
	}
	p := &agentProc{t: w.t, w: w, cmd: cmd, ptmx: ptmx, readCh: make(chan struct{}, 1), exited: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				p.mu.Lock()
				p.out.Write(buf[:n])
				p.mu.Unlock()
				select {
				case p.readCh <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		p.code = 0
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		close(p.exited)
	}()
	w.t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		_ = ptmx.Close()
	})
	return p
}

func (p *agentProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// expect waits until the output after the previous match holds s.
func (p *agentProc) expect(s string) {
	p.t.Helper()
	deadline := time.After(guard)
	for {
		p.mu.Lock()
		i := strings.Index(p.out.String()[p.mark:], s)
		if i >= 0 {
			p.mark += i + len(s)
		}
		p.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-p.readCh:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			p.t.Fatalf("no %q in the output:\n%s", s, p.output())
		}
	}
}

func (p *agentProc) send(s string) {
	p.t.Helper()
	if _, err := p.ptmx.Write([]byte(s)); err != nil {
		p.t.Fatalf("send %q: %v", s, err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *agentProc) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(guard):
		p.t.Fatalf("the fake did not exit; output:\n%s", p.output())
		return 0
	}
}

// payloads reads the hook log.
func (w *world) payloads() []map[string]any {
	w.t.Helper()
	data, err := os.ReadFile(w.hookLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	// A hook may be writing the last line right now: only lines ended by
	// the hook's echo are complete.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			w.t.Fatalf("hook log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// events returns the hook_event_name of each payload.
func events(ps []map[string]any) []string {
	var out []string
	for _, p := range ps {
		ev, _ := p["hook_event_name"].(string)
		out = append(out, ev)
	}
	return out
}

// waitEvents waits until the hooks have received at least n payloads.
func (w *world) waitEvents(n int) []map[string]any {
	w.t.Helper()
	return poll.Value(w.t, guard, w.payloads, func(ps []map[string]any) bool { return len(ps) >= n },
		func(ps []map[string]any) string {
			return fmt.Sprintf("%d hook payloads; they got %d: %v", n, len(ps), events(ps))
		})
}

// waitEvent waits until the last payload is event.
func (w *world) waitEvent(event string) []map[string]any {
	w.t.Helper()
	return poll.Value(w.t, guard, w.payloads, func(ps []map[string]any) bool { return len(ps) > 0 && events(ps)[len(ps)-1] == event },
		func(ps []map[string]any) string {
			return fmt.Sprintf("the last hook payload to be %s: %v", event, events(ps))
		})
}

func (w *world) invocations() []fakeagenttest.Invocation {
	w.t.Helper()
	inv, err := fakeagenttest.ReadLog(w.invLog)
	if err != nil {
		w.t.Fatal(err)
	}
	return inv
}

// references reads the real payloads of a CLI from testdata/real.
func references(t *testing.T, cli string) map[string][]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "real", cli, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference payloads for %s: %v", cli, err)
	}
	refs := map[string][]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			ev := strings.TrimSuffix(filepath.Base(f), ".jsonl")
			refs[ev] = append(refs[ev], m)
		}
	}
	return refs
}

// shapeDiff lists where got and want differ in keys, nesting or JSON type.
// Arrays are compared by their first elements.
func shapeDiff(path string, got, want any) []string {
	kind := func(v any) string {
		switch v.(type) {
		case map[string]any:
			return "object"
		case []any:
			return "array"
		case string:
			return "string"
		case float64:
			return "number"
		case bool:
			return "bool"
		case nil:
			return "null"
		}
		return fmt.Sprintf("%T", v)
	}
	if kind(got) != kind(want) {
		return []string{fmt.Sprintf("%s: %s, want %s", path, kind(got), kind(want))}
	}
	var diffs []string
	switch g := got.(type) {
	case map[string]any:
		wm := want.(map[string]any)
		var keys []string
		for k := range g {
			keys = append(keys, k)
		}
		for k := range wm {
			if _, ok := g[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := wm[k]
			switch {
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in the real payload", path, k))
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing", path, k))
			default:
				diffs = append(diffs, shapeDiff(path+"."+k, gv, wv)...)
			}
		}
	case []any:
		wa := want.([]any)
		if len(g) > 0 && len(wa) > 0 {
			diffs = append(diffs, shapeDiff(path+"[0]", g[0], wa[0])...)
		}
	}
	return diffs
}

// checkShapes asserts that every payload has the shape of one real payload
// of its event.
func checkShapes(t *testing.T, cli string, ps []map[string]any) {
	t.Helper()
	refs := references(t, cli)
	for i, p := range ps {
		ev, _ := p["hook_event_name"].(string)
		variants := refs[ev]
		if len(variants) == 0 {
			t.Errorf("payload %d: no real %s %s payload to compare with", i, cli, ev)
			continue
		}
		var best []string
		for j, v := range variants {
			d := shapeDiff(ev, p, v)
			if j == 0 || len(d) < len(best) {
				best = d
			}
		}
		if len(best) > 0 {
			t.Errorf("payload %d (%s) differs from the real one:\n  %s", i, ev, strings.Join(best, "\n  "))
		}
	}
}

// field returns a string field of a payload.
func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// openFiles lists the files a process has open.
func openFiles(t *testing.T, pid int) []string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("list open files of %d: %v", pid, err)
	}
	var out []string
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			out = append(out, l)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
