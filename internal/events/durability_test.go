package events

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/store"
)

// childEnv makes the test binary run an engine instead of the tests: the
// durability test kills that process with SIGKILL.
const childEnv = "MUSTER_EVENTS_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		runChild(spec)
		return
	}
	if spec := os.Getenv(idleEnv); spec != "" {
		holdIdle(spec)
		return
	}
	os.Exit(m.Run())
}

// runChild serves an engine on "DB,SOCKET" and prints each surface's
// capability, then "ready". It never returns; it is killed.
func runChild(spec string) {
	db, sock, _ := strings.Cut(spec, ",")
	fail := func(err error) { fmt.Println("error:", err); os.Exit(1) }
	st, err := store.Open(context.Background(), db)
	if err != nil {
		fail(err)
	}
	e, err := New(Config{Store: st, NotifyCommand: []string{}, Logger: slog.New(slog.DiscardHandler), Quota: Quota{Off: true}})
	if err != nil {
		fail(err)
	}
	if err := e.Start(context.Background()); err != nil {
		fail(err)
	}
	for i := range 4 {
		tok, err := e.RegisterSurface(Surface{ID: fmt.Sprintf("sf%d", i), SessionID: fmt.Sprintf("s%d", i)})
		if err != nil {
			fail(err)
		}
		fmt.Printf("cap sf%d %s\n", i, tok)
	}
	ln, err := Listen(sock)
	if err != nil {
		fail(err)
	}
	fmt.Println("ready")
	fail(e.Serve(context.Background(), ln))
}

// TestDurabilityUnderKill: clients send events concurrently to an engine
// in another process, which is killed with SIGKILL mid-stream. Every event
// that was acknowledged is in the store afterwards, and the next start
// sweeps the runs left open to disconnected.
func TestDurabilityUnderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	db := filepath.Join(t.TempDir(), "m.db")
	sock := filepath.Join(shortDir(t), "ev.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+db+","+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	caps := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "cap" {
			caps[f[1]] = f[2]
			continue
		}
		if sc.Text() == "ready" {
			break
		}
		t.Fatalf("child: %s", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()

	h := &harness{t: t, sock: sock, caps: caps, clock: &clock{t: time.Now()}}
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	kinds := []proto.EventKind{proto.KindStarted, proto.KindRunning, proto.KindApprovalRequested, proto.KindRunning, proto.KindSucceeded}
	for w := range 8 {
		wg.Go(func() {
			surface := fmt.Sprintf("sf%d", w%4)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				// Runs of five events; the writer stops mid-run.
				e := evt{id: id, run: fmt.Sprintf("w%d-run%d", w, i/5), surface: surface, kind: kinds[i%5],
					at: time.Now().Add(-time.Second)}
				resp, err := trySend(sock, h.line(e))
				if err != nil {
					return // the daemon is gone
				}
				if resp == okInserted || resp == okDuplicate {
					mu.Lock()
					acked[id] = true
					mu.Unlock()
				} else if resp != "" {
					t.Errorf("event %s: %q", id, resp)
					return
				}
			}
		})
	}
	// Kill once enough events are acknowledged, while clients still send.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 3000 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(stop)
	wg.Wait()

	st, err := store.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Events(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, r := range rows {
		stored[r.ID] = true
	}
	missing := 0
	for id := range acked {
		if !stored[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged events are not in the store", missing, len(acked))
	}
	t.Logf("%d events acknowledged before the kill, %d stored", len(acked), len(rows))

	// The next start sweeps the unfinished runs: those whose stored events
	// include no terminal one.
	ended := map[string]bool{}
	for _, r := range rows {
		ended[r.RunID] = ended[r.RunID] || proto.EventKind(r.Kind).Terminal()
	}
	open := 0
	for _, done := range ended {
		if !done {
			open++
		}
	}
	if open == 0 {
		t.Fatal("no run was left open at the kill; the test proves nothing")
	}
	e, err := New(Config{Store: st, NotifyCommand: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Every acknowledged id is still known: a retry would change nothing.
	w, err := st.EventWriter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tx, err := w.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !acked[r.ID] {
			continue
		}
		if ins, err := tx.InsertEvent(t.Context(), r); err != nil || ins {
			t.Fatalf("acknowledged event %s is not known after the restart: inserted=%v, %v", r.ID, ins, err)
		}
	}
	tx.Rollback()
	runs, _ := st.LoadRuns(t.Context())
	swept := 0
	for _, r := range runs {
		switch r.State {
		case "running", "waitingApproval", "waitingInput":
			t.Errorf("run %s left %s after the sweep", r.RunID, r.State)
		case "disconnected":
			if strings.Contains(string(r.Data), HookStartupSweep) && !ended[r.RunID] {
				swept++
			}
		case "succeeded":
			if !ended[r.RunID] {
				t.Errorf("run %s succeeded without a stored terminal event", r.RunID)
			}
		}
	}
	if len(runs) != len(ended) {
		t.Errorf("%d runs after the restart, %d in the stored events", len(runs), len(ended))
	}
	if swept != open {
		t.Fatalf("swept %d runs, %d were open", swept, open)
	}
}

func trySend(sock string, line []byte) (string, error) {
	c, err := dialUnix(sock)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(line); err != nil {
		return "", err
	}
	buf := make([]byte, 128)
	n := 0
	for {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil || n == len(buf) {
			break
		}
	}
	return string(buf[:n]), nil
}
