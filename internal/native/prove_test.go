package native

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

const (
	sessA = "22222222-2222-4333-8444-555555555555"
	sessB = "d374eff7-6681-449d-ac7d-e8ad01a2744d"
)

// twoClaudesInOneDir starts two hook-less Claudes in shell panes a and b of
// one directory, and writes their transcripts: a's first, b's a while later
// (issue 10: both turns used to land on a, which followed b's newer
// transcript as if a /clear had made it).
func twoClaudesInOneDir(t *testing.T, h *harness, records bool) {
	h.procs.set(shellPID, "bash", "bash")
	h.procs.set(shellPID+1, "bash", "bash")
	h.procs.set(agentPGID, "claude", "claude")
	h.procs.set(agentPGID+1, "claude", "claude")
	if records {
		// Claude Code's per-process records (sessions/<pid>.json).
		dir := filepath.Join(h.home, ".claude", "sessions")
		os.MkdirAll(dir, 0o755)
		for pid, id := range map[int]string{agentPGID: sessA, agentPGID + 1: sessB} {
			body := `{"pid":` + strconv.Itoa(pid) + `,"sessionId":"` + id + `","cwd":"` + testCWD + `"}`
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+".json"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	p1 := h.surface("a", "shell", shellPID)
	p2 := h.surface("b", "shell", shellPID+1)
	p1.fg(agentPGID)
	p2.fg(agentPGID + 1)
	h.poll()
	working(h, "a")
	working(h, "b")
	g1 := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath(sessA), h.clk.Now(), nil)
	g1.write(0, isLine(`"promptId"`))
	for range 3 {
		h.clk.Advance(locateEvery)
		h.poll()
	}
	g2 := newGrowing(t, h.clk, "claude-d374eff7.jsonl", h.claudePath(sessB), h.clk.Now(), nil)
	g2.write(0, isLine(`"promptId"`))
	for range 4 {
		h.clk.Advance(switchEvery)
		h.poll()
	}
}

// turnStarts lists "surface prompt" of the turns started.
func turnStarts(h *harness) []string {
	var got []string
	for _, ev := range h.rec.all() {
		if ev.HookName == HookTurnStarted && ev.Kind == proto.KindStarted {
			got = append(got, ev.SurfaceID.RawValue+" "+ev.Message)
		}
	}
	sort.Strings(got)
	return got
}

func TestUnprovableTranscriptsStayCoarse(t *testing.T) {
	h := newHarness(t)
	twoClaudesInOneDir(t, h, false)
	if got := turnStarts(h); len(got) != 0 {
		t.Errorf("turns %q attributed without proof; want both panes left coarse:\n%s", got, strings.Join(h.rec.lines(nil), "\n"))
	}
}

func TestTranscriptsProvedByProcessRecords(t *testing.T) {
	h := newHarness(t)
	twoClaudesInOneDir(t, h, true)
	if got, want := strings.Join(turnStarts(h), "|"), "a say hi|b say hi"; got != want {
		t.Errorf("turn starts %q, want %q:\n%s", got, want, strings.Join(h.rec.lines(nil), "\n"))
	}
	for _, ev := range h.rec.all() {
		if ev.HookName == HookTurnStarted && ev.Kind == proto.KindStarted {
			want := map[string]string{"a": sessA, "b": sessB}[ev.SurfaceID.RawValue]
			if f := h.e.surfaces[ev.SurfaceID.RawValue]; f != nil && f.agent != nil && f.agent.tr.byID != want {
				t.Errorf("surface %s follows %s by id %q, want %s", ev.SurfaceID.RawValue, f.agent.tr.path, f.agent.tr.byID, want)
			}
		}
	}
}

// TestSharedProcessProvesNothing: Codex's app-server, in the tree of the
// first TUI that started it, holds every pane's rollout open; the rollout
// it holds proves nothing about the pane, while the one a TUI holds does.
func TestSharedProcessProvesNothing(t *testing.T) {
	h := newHarness(t)
	const id = "01a22c19-5448-7d02-89e7-73b160cc00ef"
	dir := filepath.Join(h.home, ".codex", "sessions", "2026", "12", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// This test's own process plays the process holding the rollout.
	f, err := os.Create(filepath.Join(dir, "rollout-2026-12-02T04-00-00-"+id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	self := os.Getpid()
	h.e.treeOf = func(root, _ int) []int { return []int{root, self} }
	h.procs.set(agentPGID, "codex", "codex")
	a := &agentRun{provider: "codex", pgid: agentPGID}
	h.procs.set(self, "codex", "/usr/bin/codex", "app-server", "--listen", "unix://", "--managed-daemon")
	if got := h.e.provenID(a, h.clk.Now()); got != "" {
		t.Errorf("proved %q by the app-server's open rollout, want nothing", got)
	}
	h.procs.set(self, "codex", "/usr/bin/codex", "--no-daemon")
	a.nextProve = time.Time{}
	if got := h.e.provenID(a, h.clk.Now()); got != id {
		t.Errorf("proved %q by a TUI's open rollout, want %s", got, id)
	}
}

// TestScanSkipsAProvenAgentsTranscript is the race behind a realcli flake:
// pane b's Claude had not (yet, or for one unreadable rewrite) shown its
// record, pane a's had, and a's transcript appeared between two of a's
// locates. b, seeing no unproven neighbour in the directory, took a's
// transcript by scanning and kept it once its own proof came, so a's turns
// never showed.
func TestScanSkipsAProvenAgentsTranscript(t *testing.T) {
	h := newHarness(t)
	h.procs.set(shellPID, "bash", "bash")
	h.procs.set(shellPID+1, "bash", "bash")
	h.procs.set(agentPGID, "claude", "claude")
	h.procs.set(agentPGID+1, "claude", "claude")
	dir := filepath.Join(h.home, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	record := func(pid int, id string) {
		body := `{"pid":` + strconv.Itoa(pid) + `,"sessionId":"` + id + `","cwd":"` + testCWD + `"}`
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	record(agentPGID, sessA)
	pb := h.surface("b", "shell", shellPID+1)
	pb.fg(agentPGID + 1)
	h.poll() // b: no record yet, nothing to scan
	pa := h.surface("a", "shell", shellPID)
	pa.fg(agentPGID)
	h.poll() // a observed; b scans and finds nothing
	h.poll() // a proved, its transcript not written yet
	g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath(sessA), h.clk.Now(), nil)
	g.write(0, isLine(`"promptId"`))
	for range 3 {
		h.poll()
	}
	record(agentPGID+1, sessB)
	for range 10 {
		h.poll()
	}
	if got, want := strings.Join(turnStarts(h), "|"), "a say hi"; got != want {
		t.Errorf("turn starts %q, want %q:\n%s", got, want, strings.Join(h.rec.lines(nil), "\n"))
	}
}

// TestProofSurvivesAnEmptyRead: Claude Code rewrites its record in place;
// a read that finds it empty keeps the session last proved, and a record
// naming another session (a /clear) replaces it.
func TestProofSurvivesAnEmptyRead(t *testing.T) {
	h := newHarness(t)
	h.e.treeOf = func(root, _ int) []int { return []int{root} }
	path := filepath.Join(h.home, ".claude", "sessions", strconv.Itoa(agentPGID)+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &agentRun{provider: "claude", pgid: agentPGID}
	for _, step := range []struct{ body, want string }{
		{`{"pid":` + strconv.Itoa(agentPGID) + `,"sessionId":"` + sessA + `"}`, sessA},
		{``, sessA},
		{`{"pid":` + strconv.Itoa(agentPGID) + `,"sessionId":"` + sessB + `"}`, sessB},
	} {
		if err := os.WriteFile(path, []byte(step.body), 0o600); err != nil {
			t.Fatal(err)
		}
		a.nextProve = time.Time{}
		if got := h.e.provenID(a, h.clk.Now()); got != step.want {
			t.Errorf("record %q: proved %q, want %s", step.body, got, step.want)
		}
	}
}
