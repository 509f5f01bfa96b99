package cli

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/proto"
)

// testNow is the fixed clock of the output tests.
var testNow = time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// fixtureWorktree is the canned session api's worktree.
var fixtureWorktree = proto.WorktreeInfo{Path: "/src/api.worktrees/fix-login", Repo: "/src/api", Branch: "fix-login",
	BaseCommit: "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", Session: "api", SessionID: "3f1c2b9e-0000-4000-8000-000000000001",
	Live: true, Exists: true, Dirty: 2, Ahead: 3, Unpushed: 3, Setup: "ran"}

func ago(d time.Duration) string { return testNow.Add(-d).Format(time.RFC3339) }

// cannedOps answers every op a command with output reads, with every
// field of every result set, so that a renamed or dropped JSON field
// changes a golden file (and jsonFields checks that none was left unset).
func cannedOps(m *proto.Mux) {
	gone := fixtureWorktree
	gone.Path, gone.Branch, gone.Session, gone.SessionID, gone.Live, gone.Dirty, gone.Ahead, gone.Unpushed, gone.Setup = "/src/api.worktrees/old", "old", "", "3f1c2b9e-0000-4000-8000-000000000009", false, 0, 1, 0, ""
	answer[proto.None](m, proto.OpWorktrees, []proto.WorktreeInfo{fixtureWorktree, gone})
	answer[proto.None](m, proto.OpList, []proto.SessionInfo{
		{
			ID: "3f1c2b9e-0000-4000-8000-000000000001", Name: "api", Provider: "claude", State: "running", PID: 4242,
			CWD: "/src/api", CreatedAt: ago(3 * time.Hour), Command: "claude", SurfaceID: "sf-1",
			Title: "Fix the login bug", NativeSessionID: "9d2e7c1a-0000-4000-8000-00000000aaaa", NativeConfirmed: true,
			RunState: ptr("waitingApproval"), RunID: ptr("run-1"), Attention: 1, LastEventAt: ptr(ago(2 * time.Minute)),
			Activity: "attention", ActivitySince: ptr(ago(2 * time.Minute)), ActivityEvidence: "OSC 9 notification",
			ActivityPercent: ptr(40), Model: "claude-opus-5-5", ContextTokens: 41200, ContextWindow: 200000, Clients: 1,
			RSSBytes: ptr(int64(1288490188)), PSSBytes: ptr(int64(1073741824)), CPUPercent: ptr(12.5), Processes: 4, MemoryCeiling: 1 << 30,
			Worktree: &fixtureWorktree,
		},
		{
			ID: "3f1c2b9e-0000-4000-8000-000000000002", Name: "build", State: "exited", ExitCode: ptr(1),
			CWD: "/src/web", CreatedAt: ago(50 * time.Hour), Command: "make test", SurfaceID: "sf-2", Control: true,
		},
		{
			ID: "3f1c2b9e-0000-4000-8000-000000000003", Name: "docs", Provider: "codex", State: "restorable",
			CWD: "/src/docs", CreatedAt: ago(40 * time.Second), Command: "codex", NativeSessionID: "0199aaaa-bbbb",
			Reason: "the daemon restarted; `muster resume docs` continues the conversation",
		},
		{
			ID: "3f1c2b9e-0000-4000-8000-000000000004", Name: "quota", Provider: "claude", State: "running", PID: 4343,
			CWD: "/src/quota", CreatedAt: ago(20 * time.Minute), Command: "claude", SurfaceID: "sf-4",
			RunState: ptr("limited"), RunID: ptr("run-4"), LimitResetsAt: ptr("2026-03-05T15:00:00Z"), ContinueAfterLimit: true,
		},
		{
			// The row ls adds for an agent Claude Code's supervisor runs
			// (externalRows); canned here so its fields show in --json.
			ID: "0b6ecd0a", Name: "bg", Provider: "claude", Pane: proto.PaneExternal, State: proto.PaneExternal, Status: "idle", PID: 6634,
			CWD: "/src/bg", CreatedAt: ago(5 * time.Minute), Command: "claude attach 0b6ecd0a", NativeSessionID: "0b6ecd0a-e99d-41c7-817c-23c324ac7ffa",
			External: &proto.ExternalAgent{Supervisor: "claude agents", ID: "0b6ecd0a", Status: "idle", State: "working", Attach: "claude attach 0b6ecd0a"},
		},
	})
	answer[proto.AttentionArgs](m, proto.OpAttention, []proto.AttentionItem{
		{
			ID: 1, SessionID: "3f1c2b9e-0000-4000-8000-000000000001", SessionName: "api", SurfaceID: "sf-1", RunID: "run-1",
			Provider: "claude", Reason: "approval-requested", Message: "Claude needs your permission to use Bash",
			EventID: "ev-7", OpenedAt: ago(2 * time.Minute), Open: true,
		},
		{
			ID: 2, SessionID: "3f1c2b9e-0000-4000-8000-000000000004", SurfaceID: "sf-4", RunID: "run-9",
			Provider: "gemini", Reason: "failed", Message: "API Error: quota exceeded",
			EventID: "ev-3", OpenedAt: ago(5 * time.Hour), ResolvedAt: ptr(ago(4 * time.Hour)), Resolution: "acknowledged",
		},
	})
	answer[proto.AckArgs](m, proto.OpAck, proto.AckResult{Acknowledged: []int64{1, 4}, Already: []int64{2}})
	answer[proto.WaitArgs](m, proto.OpWait, proto.WaitResult{Status: proto.WaitGone, Sessions: []proto.WaitSession{
		{Name: "api", SessionID: "3f1c2b9e-0000-4000-8000-000000000001", State: "idle", Terminal: "succeeded", RunID: "run-1", Reached: true},
		{Name: "web", SessionID: "3f1c2b9e-0000-4000-8000-000000000005", Attention: 1, Gone: true},
		{Name: "db", SessionID: "3f1c2b9e-0000-4000-8000-000000000006", Reached: true, Pane: proto.PaneExited, ExitCode: ptr(3)},
	}})
	because := proto.Evidence{
		EventID: "ev-8", Kind: "succeeded", HookName: "Stop", Provider: "claude", Source: "hook",
		Message: "All tests pass.", OccurredAt: ago(10 * time.Minute), ReceivedAt: ago(10*time.Minute - time.Millisecond),
	}
	last := proto.Evidence{EventID: "ev-9", Kind: "idle", Provider: "claude", Source: "sweep", OccurredAt: ago(time.Minute), ReceivedAt: ago(time.Minute)}
	answer[proto.Target](m, proto.OpExplain, proto.Explanation{
		SessionID: "3f1c2b9e-0000-4000-8000-000000000001", Name: "api", State: ptr("idle"), Terminal: "succeeded",
		IdleAt: ptr(ago(time.Minute)), RunID: ptr("run-1"), RunStartedAt: ptr(ago(20 * time.Minute)),
		RunEndedAt: ptr(ago(10 * time.Minute)), ImpliedStart: true, NativeSessionID: "9d2e7c1a-0000-4000-8000-00000000aaaa",
		SurfaceID: "sf-1", Because: &because, Last: &last,
		Attention: []proto.AttentionItem{{
			ID: 3, SessionID: "3f1c2b9e-0000-4000-8000-000000000001", SessionName: "api", SurfaceID: "sf-1", RunID: "run-1",
			Provider: "claude", Reason: "succeeded", Message: "All tests pass.", EventID: "ev-8",
			OpenedAt: ago(10 * time.Minute), Open: true,
		}},
		Events: []proto.EventRecord{
			{Seq: 11, RunID: "run-1", Evidence: because, Effect: "applied"},
			{Seq: 12, RunID: "run-1", Evidence: last, Effect: "final"},
		},
		Activity: &proto.Activity{State: "waiting", Since: ago(10 * time.Minute), Evidence: "OSC 9;4;0;",
			Notification: "Claude is waiting for your input",
			Recent: []proto.ActivitySignal{{At: ago(11 * time.Minute), Evidence: "OSC 7501;state=working:app=claude-code"},
				{At: ago(10 * time.Minute), Evidence: "OSC 9;4;0;"}},
			Skipped: []string{"/home/u/.claude/projects/-src-api/9d2e7c1a.jsonl: not a regular file (a FIFO)"}},
		Limit: &proto.Limit{ResetsAt: "2026-03-05T15:00:00Z", Evidence: "failed from hook StopFailure (claude)",
			Message: "rate_limit: 5-hour limit reached ∙ resets 3pm (UTC)"},
		Cost: &proto.ProcessCost{RSSBytes: 1288490188, PSSBytes: 1073741824, CPUPercent: ptr(12.5), Processes: 4, MemoryCeiling: 1 << 30,
			SampledAt: ago(3 * time.Second), Evidence: "/proc/PID/stat"},
	})
	answer[proto.ResumeArgs](m, proto.OpResume, []proto.ResumeOutcome{
		{Name: "docs", Resumed: true, Argv: []string{"codex", "resume", "0199aaaa-bbbb"}},
		{Name: "fresh", Resumed: true, Argv: []string{"codex", "--no-daemon"}, NewConversation: true},
		{Name: "old", Reason: "its transcript is gone"},
	})
	answer[proto.None](m, proto.OpStatus, proto.DaemonStatus{
		PID: 4100, Version: "0.1.0-test", StartedAt: ago(26 * time.Hour), Home: "/home/u/.local/state/muster",
		Sessions: 3, Panes: 1, Protocol: proto.ControlVersion,
	})
}

// TestDaemonOutputs runs each command that prints what the daemon
// answered, in both output modes, against cannedOps and a fixed clock.
func TestDaemonOutputs(t *testing.T) {
	home := startCannedDaemon(t, cannedOps)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		// fieldsOf is the op whose result --json must show in full,
		// but for the fields in unset.
		fieldsOf string
		unset    []string
	}{
		{"ls", []string{"ls"}, ExitOK, "", nil},
		{"ls_json", []string{"ls", "--json"}, ExitOK, proto.OpList, nil},
		{"worktree_ls", []string{"worktree", "ls"}, ExitOK, "", nil},
		{"worktree_ls_json", []string{"worktree", "ls", "--json"}, ExitOK, proto.OpWorktrees, []string{"setup"}},
		{"attention", []string{"attention", "--all"}, ExitOK, "", nil},
		// host is the CLI's, filled for other hosts' items only.
		{"attention_json", []string{"attention", "--all", "--json"}, ExitOK, proto.OpAttention, []string{"host"}},
		{"ack", []string{"ack", "1", "2", "4"}, ExitOK, "", nil},
		{"ack_json", []string{"ack", "1", "2", "4", "--json"}, ExitOK, proto.OpAck, nil},
		{"wait", []string{"wait", "api", "web", "--until", "done"}, ExitGone, "", nil},
		{"wait_json", []string{"wait", "api", "web", "--until", "done", "--json"}, ExitGone, proto.OpWait, nil},
		{"explain", []string{"explain", "api"}, ExitOK, "", nil},
		// explain lists open attention items: none has a resolution.
		{"explain_json", []string{"explain", "api", "--json"}, ExitOK, proto.OpExplain, []string{"resolution", "host"}},
		{"resume", []string{"resume", "docs", "old"}, ExitError, "", nil},
		{"resume_json", []string{"resume", "docs", "old", "--json"}, ExitError, proto.OpResume, nil},
		{"daemon_status", []string{"daemon", "status"}, ExitOK, "", nil},
		// daemon status --json prints its own object (running and the
		// status fields), pinned by the golden alone.
		{"daemon_status_json", []string{"daemon", "status", "--json"}, ExitOK, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			f := &Factory{IO: ios, Now: func() time.Time { return testNow }, Getenv: func(k string) string {
				if k == "MUSTER_HOME" {
					return home
				}
				return ""
			}}
			code := Run(context.Background(), f, tt.args)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			checkGolden(t, out.String())
			if tt.fieldsOf != "" {
				op, _ := proto.Lookup(tt.fieldsOf)
				for _, name := range jsonFields(op.Result) {
					if !slices.Contains(tt.unset, name) && !strings.Contains(out.String(), `"`+name+`":`) {
						t.Errorf("--json lacks %q, a field of %v: set it in cannedOps", name, op.Result)
					}
				}
			}
		})
	}
}

// TestDaemonStatusNotRunningJSON: with no daemon, status --json still
// prints one document.
func TestDaemonStatusNotRunningJSON(t *testing.T) {
	f, output := usageEnv(t)
	if code := Run(t.Context(), f, []string{"daemon", "status", "--json"}); code != ExitUnreachable {
		t.Errorf("exit %d, want %d", code, ExitUnreachable)
	}
	out, _ := output()
	checkGolden(t, out)
}

// jsonFields lists the JSON object keys that values of type t can have,
// through pointers, slices, maps' values and embedded structs.
func jsonFields(t reflect.Type) []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t.PkgPath() == "time" {
			return
		}
		seen[t] = true
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
			walk(f.Type)
		}
	}
	walk(t)
	return names
}

// normalizePaths replaces temp dirs in out with stable names.
func normalizePaths(out string, dirs map[string]string) string {
	for dir, name := range dirs {
		out = strings.ReplaceAll(out, dir, name)
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			out = strings.ReplaceAll(out, real, name)
		}
	}
	return out
}

// TestTranscriptOutputs runs the commands that read transcripts on disk
// (newCLIEnv's three Claude sessions) against a fixed clock.
func TestTranscriptOutputs(t *testing.T) {
	e := newCLIEnv(t)
	e.now = func() time.Time { return testNow }
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"history", []string{"history"}},
		{"history_json", []string{"history", "--json"}},
		// --since counts back from the clock: 3d is 2026-03-02 12:00.
		{"history_since_json", []string{"history", "--json", "--since", "3d"}},
		{"show_json", []string{"show", "claude:aaaaaaaa-0000-4000-8000-000000000001", "--json"}},
		{"stats", []string{"stats", "--by", "model"}},
		{"stats_json", []string{"stats", "--json", "--by", "provider", "--since", "30d"}},
		// The ccusage-style reports; the clock's zone (UTC) dates them.
		{"stats_day", []string{"stats", "--by", "day"}},
		{"stats_week_json", []string{"stats", "--json", "--by", "week"}},
		{"stats_month", []string{"stats", "--by", "month"}},
		{"stats_session", []string{"stats", "--by", "session"}},
		{"stats_session_json", []string{"stats", "--json", "--by", "session"}},
		{"stats_project_json", []string{"stats", "--json", "--by", "project"}},
		{"stats_block", []string{"stats", "--by", "block"}},
		{"stats_block_json", []string{"stats", "--json", "--by", "block"}},
		// --until a date includes that day: only March 1 counts.
		{"stats_until_json", []string{"stats", "--json", "--by", "day", "--since", "2026-03-01", "--until", "2026-03-01"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := e.run(tt.args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			checkGolden(t, normalizePaths(out, map[string]string{e.home: "$HOME", e.muster: "$MUSTER_HOME"}))
		})
	}
}

// TestHooksOutputs: hooks status and setup in a home with no agent
// config yet. Only --json: the text's columns are as wide as the temp
// paths.
func TestHooksOutputs(t *testing.T) {
	e := newCLIEnv(t)
	e.path = fakeAgents(t, "claude", "codex", "gemini", "cursor-agent", "opencode")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"status_before_json", []string{"hooks", "status", "--json"}},
		{"setup_json", []string{"hooks", "setup", "--json"}},
		{"status_after_json", []string{"hooks", "status", "--json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := e.run(tt.args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			checkGolden(t, normalizePaths(out, map[string]string{e.home: "$HOME", e.muster: "$MUSTER_HOME"}))
		})
	}
}

// fakeAgents makes a directory of empty executables with the given names,
// for PATH.
func fakeAgents(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHooksSetupOnlyForAgentsOnPath: a bare `hooks setup` installs hooks
// for the agent CLIs this machine has and says which it skipped and why;
// naming a provider installs it anyway.
func TestHooksSetupOnlyForAgentsOnPath(t *testing.T) {
	e := newCLIEnv(t)
	e.path = fakeAgents(t, "claude")
	code, out, errOut := e.run("hooks", "setup")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "claude: installed in ") {
		t.Errorf("claude, on PATH, not installed:\n%s", out)
	}
	for _, p := range []string{"codex", "gemini", "opencode"} {
		if !strings.Contains(out, p+": skipped: ") || !strings.Contains(out, "not found on PATH (muster hooks setup "+p+" installs anyway)") {
			t.Errorf("%s, not on PATH, not reported as skipped:\n%s", p, out)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, ".config", "opencode", "plugins", "muster.js")); err == nil {
		t.Error("the OpenCode plugin was written although opencode is not installed")
	}
	if code, out, errOut := e.run("hooks", "setup", "gemini"); code != ExitOK || !strings.Contains(out, "gemini: installed in ") {
		t.Errorf("hooks setup gemini: exit %d\n%s%s", code, out, errOut)
	}
}
