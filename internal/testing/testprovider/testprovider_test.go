package testprovider_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/hookevent"
	"github.com/musterhq/muster/internal/hookinstall"
	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/nativeid"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/providertest"
	"github.com/musterhq/muster/internal/testing/testprovider"
	"github.com/musterhq/muster/internal/transcript"
)

const musterBin = "/opt/muster/bin/muster"

// register adds testagent for the test: the one line a built-in provider
// has in internal/provider/all.
func register(t *testing.T) transcript.Env {
	t.Helper()
	t.Cleanup(all.Register(testprovider.Provider{}))
	home := t.TempDir()
	return transcript.Env{Home: home, Getenv: func(string) string { return "" }}
}

func TestLaunch(t *testing.T) {
	register(t)
	if !all.Valid("testagent") || !slices.Contains(all.LaunchNames(), "testagent") {
		t.Fatalf("testagent cannot be launched: %v", all.LaunchNames())
	}
	l, ok := all.Launch("testagent")
	if !ok || !l.AssignsID || !slices.Equal(l.NewArgs("x"), []string{"--session", "x"}) || !slices.Equal(l.ResumeArgs("x"), []string{"--resume", "x"}) {
		t.Errorf("Launch = %+v, %t", l, ok)
	}
}

func TestHookInstall(t *testing.T) {
	env := register(t)
	if !slices.Contains(hookinstall.Providers(), "testagent") {
		t.Fatalf("hookinstall.Providers() = %v", hookinstall.Providers())
	}
	r, err := hookinstall.Setup(env, "testagent", musterBin)
	if err != nil || !r.Changed || r.Path != filepath.Join(env.Home, ".testagent", "hooks.json") {
		t.Fatalf("Setup = %+v, %v", r, err)
	}
	b, _ := os.ReadFile(r.Path)
	for _, want := range []string{`hook capture --provider testagent --process-id`, `"prompt"`, `"end"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hooks.json lacks %s:\n%s", want, b)
		}
	}
	if st := hookinstall.Status(env, "testagent", musterBin); st.State != hookinstall.Installed {
		t.Errorf("Status = %+v", st)
	}
	if s, ok := hookinstall.SettingsJSON("testagent", musterBin); !ok || !strings.Contains(s, `"hooks":{"start":[`) {
		t.Errorf("SettingsJSON = %s, %t", s, ok)
	}
	if r, err := hookinstall.Remove(env, "testagent"); err != nil || !r.Deleted {
		t.Errorf("Remove = %+v, %v", r, err)
	}
}

func TestHookHelper(t *testing.T) {
	register(t)
	if !slices.Contains(hookevent.Providers(), "testagent") {
		t.Fatalf("hookevent.Providers() = %v", hookevent.Providers())
	}
	// The mapping and the state rules.
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	st := &hookevent.State{} // a state is kept, as in a runtime dir
	var got []string
	for _, p := range []string{
		`{"event":"start","session":"s1"}`,
		`{"event":"prompt","session":"s1","turn":"t1","text":"fix it"}`,
		`{"event":"tool","session":"s1","turn":"t1","text":"go test"}`,
		`{"event":"prompt","session":"s1","turn":"t2","text":"again"}`,
		`{"event":"stop","session":"s1","turn":"t2","text":"done"}`,
	} {
		res, err := hookevent.Map("testagent", []byte(p), st, now)
		if err != nil {
			t.Fatal(err)
		}
		if res.State != nil {
			st = res.State
		}
		for _, m := range res.Events {
			run := map[string]string{hookevent.TurnRunID("testagent", "t1"): "T1", hookevent.TurnRunID("testagent", "t2"): "T2"}[m.RunID.RawValue]
			got = append(got, fmt.Sprintf("%s %s %s", m.HookName, m.Kind, run))
		}
	}
	// The tool hook says nothing new (the turn is running already); the
	// second prompt closes the first turn, which had no stop.
	want := []string{"prompt started T1", "prompt interrupted T1", "prompt started T2", "stop succeeded T2"}
	if !slices.Equal(got, want) {
		t.Errorf("events\n  got  %q\n  want %q", got, want)
	}

	// The helper itself, to an events socket.
	dir, err := os.MkdirTemp("", "mt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "events.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var envelope proto.Envelope
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadBytes('\n')
		json.Unmarshal(line, &envelope)
		c.Write([]byte(`{"ok":true,"inserted":true}` + "\n"))
	}()
	paneEnv := map[string]string{hookevent.EnvEventSocket: sock, hookevent.EnvEventCapability: "cap", hookevent.EnvSurfaceID: "sf1"}
	var stderr bytes.Buffer
	hookevent.Run([]string{"testagent"}, hookevent.Options{
		Stdin: strings.NewReader(`{"event":"prompt","session":"s9","turn":"t9","text":"hi"}`), Stderr: &stderr,
		Getenv: func(k string) string { return paneEnv[k] },
	})
	ln.Close()
	wg.Wait()
	if envelope.Event.Provider != "testagent" || envelope.Event.Kind != proto.KindStarted ||
		envelope.Event.RunID.RawValue != hookevent.TurnRunID("testagent", "t9") || stderr.Len() != 0 {
		t.Errorf("sent %+v; stderr %q", envelope, stderr.String())
	}
}

func TestNativeIDClaim(t *testing.T) {
	register(t)
	c, err := nativeid.Decode("testagent", []byte(`{"session_id":"abc","hook_event_name":"start"}`))
	if err != nil || c.SessionID != "abc" || c.Format != nativeid.Native {
		t.Errorf("Decode = %+v, %v", c, err)
	}
}

// writeTranscript writes sessions/<id>.jsonl with records dated at.
func writeTranscript(t *testing.T, env transcript.Env, id string, at time.Time, lines ...string) string {
	t.Helper()
	p := filepath.Join(testprovider.SessionsDir(env), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, `{"time":%q,%s}`+"\n", at.UTC().Format(time.RFC3339Nano), l)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var conversation = []string{
	`"type":"prompt","turn":"t1","text":"fix the parser\nplease","cwd":"/w"`,
	`"type":"reply","turn":"t1","text":"fixed"`,
	`"type":"done","turn":"t1"`,
}

func TestTranscripts(t *testing.T) {
	env := register(t)
	p := writeTranscript(t, env, "s1", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), conversation...)
	src := all.Source("testagent")
	if src == nil || !slices.Contains(all.Names(), "testagent") {
		t.Fatalf("no testagent source in %v", all.Names())
	}
	files, err := src.Discover(context.Background(), env)
	if err != nil || len(files) != 1 || files[0].Path != p {
		t.Fatalf("Discover = %v, %v", files, err)
	}
	ts, err := src.Parse(context.Background(), env, p, transcript.ParseOptions{})
	if err != nil || len(ts) != 1 || ts[0].ID != "s1" || ts[0].PromptCount != 1 || ts[0].Title != "fix the parser" || len(ts[0].Items) != 2 {
		t.Fatalf("Parse = %+v, %v", ts, err)
	}
	got := providertest.ParseTurns(t, testprovider.Provider{}, p)
	want := []string{`start t1 10:00:00.000 "fix the parser"`, `end succeeded t1 10:00:00.000 "fixed"`}
	if !slices.Equal(got, want) {
		t.Errorf("turns %q, want %q", got, want)
	}
}

// TestNativeTurns runs a process called testagent in the foreground of a
// fake pane and lets the daemon's turn estimator find and read its
// transcript: the runs are the ones its hooks would report.
func TestNativeTurns(t *testing.T) {
	env := register(t)
	bin := filepath.Join(t.TempDir(), "testagent")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	pid := cmd.Process.Pid

	var mu sync.Mutex
	var events []proto.Event
	e := native.New(native.Config{
		Events: eventSink(func(_ context.Context, ev proto.Event) error {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
			return nil
		}),
		Env: env, Poll: 20 * time.Millisecond,
	})
	e.SurfaceStarted(native.Surface{ID: "sf1", SessionID: "ms1", Provider: "testagent", PID: pid, CWD: cmd.Dir,
		ForegroundPGID: func() (int, error) { return pid, nil }, NativeID: func() string { return "s1" }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()

	has := func(hook string, kind proto.EventKind) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(events, func(ev proto.Event) bool {
			return ev.HookName == hook && ev.Kind == kind && ev.RunID.RawValue == hookevent.TurnRunID("testagent", "t1")
		})
	}
	// An agent idle at its prompt has no run (issue 10): the transcript's
	// first turn is what opens one.
	writeTranscript(t, env, "s1", time.Now(), conversation...)
	if !poll.Until(30*time.Second, func() bool { return has(native.HookTurnCompleted, proto.KindSucceeded) }) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no turn read; events: %+v", events)
	}
	if !has(native.HookTurnStarted, proto.KindStarted) {
		t.Error("the turn completed without starting")
	}
	if a, ok := native.TitleActivity("testagent", "testagent: needs you"); !ok || a != native.Attention {
		t.Errorf("TitleActivity = %q, %t", a, ok)
	}
}

// FuzzParse and FuzzTurnLines are the shared kit's checks, as every
// provider runs them.
func FuzzParse(f *testing.F) {
	var seed strings.Builder
	for _, l := range conversation {
		fmt.Fprintf(&seed, `{"time":"2026-11-30T10:00:00Z",%s}`+"\n", l)
	}
	providertest.SeedRecords(f, []byte(seed.String()))
	path := filepath.Join(f.TempDir(), "s1.jsonl")
	src := testprovider.Provider{}.Transcripts()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		providertest.Repeatable(t, func(opts transcript.ParseOptions) []*transcript.Transcript {
			ts, err := src.Parse(context.Background(), transcript.Env{}, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			return ts
		}, providertest.SameSession)
	})
}

func FuzzTurnLines(f *testing.F) {
	for _, l := range conversation {
		f.Add([]byte(`{"time":"2026-11-30T10:00:00Z",` + l + `}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) { providertest.FuzzTurnLines(t, testprovider.Provider{}, data) })
}

// eventSink is a native.EventSink written as a function.
type eventSink func(context.Context, proto.Event) error

func (f eventSink) Emit(ctx context.Context, ev proto.Event) error { return f(ctx, ev) }
