package native

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/termsignal"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func progress(p termsignal.Progress) termsignal.Signal {
	raw := "9;4;" + string(rune('0'+p)) + ";"
	return termsignal.Signal{Kind: termsignal.KindProgress, OSC: 9, Progress: p, Percent: -1, Raw: raw}
}

// percent is OSC 9;4;1 with a value.
func percent(v int) termsignal.Signal {
	return termsignal.Signal{Kind: termsignal.KindProgress, OSC: 9, Progress: termsignal.ProgressNormal, Percent: v, Raw: "9;4;1;" + strconv.Itoa(v)}
}

func ptrInt(v int) *int { return &v }

func title(s string) termsignal.Signal {
	return termsignal.Signal{Kind: termsignal.KindTitle, OSC: 0, Title: s, Raw: "0;" + s}
}

func status(params string) termsignal.Signal {
	st, _, _ := strings.Cut(strings.TrimPrefix(params, "state="), ":")
	return termsignal.Signal{Kind: termsignal.KindAgentStatus, OSC: 7501, State: st, Params: params, Raw: "7501;" + params}
}

func notify(osc int, t, b string) termsignal.Signal {
	return termsignal.Signal{Kind: termsignal.KindNotify, OSC: osc, Title: t, Body: b, Raw: "777;notify;" + t + ";" + b}
}

var bell = termsignal.Signal{Kind: termsignal.KindBell, OSC: -1}

func TestActivity(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		sigs     []termsignal.Signal
		gap      time.Duration // between signals
		want     Activity      // Since is checked as an offset from t0
		wantAt   int           // index of the signal that set the state
	}{
		{name: "no signals", want: Activity{}},
		{name: "progress shown", sigs: []termsignal.Signal{progress(termsignal.ProgressIndeterminate)},
			want: Activity{State: Working, Evidence: "OSC 9;4;3;"}},
		{name: "progress percent", sigs: []termsignal.Signal{progress(termsignal.ProgressNormal)},
			want: Activity{State: Working, Evidence: "OSC 9;4;1;"}},
		{name: "progress value", sigs: []termsignal.Signal{progress(termsignal.ProgressIndeterminate), percent(42)},
			want: Activity{State: Working, Evidence: "OSC 9;4;1;42", Percent: ptrInt(42)}},
		{name: "progress value moves, since stays", sigs: []termsignal.Signal{percent(42), percent(43), percent(43)},
			want: Activity{State: Working, Evidence: "OSC 9;4;1;43", Percent: ptrInt(43)}},
		{name: "progress value gone", sigs: []termsignal.Signal{percent(42), progress(termsignal.ProgressIndeterminate)},
			want: Activity{State: Working, Evidence: "OSC 9;4;3;"}},
		{name: "progress removed", sigs: []termsignal.Signal{progress(termsignal.ProgressIndeterminate), progress(termsignal.ProgressRemove)},
			want: Activity{State: Waiting, Evidence: "OSC 9;4;0;"}, wantAt: 1},
		{name: "working repeated keeps since", sigs: []termsignal.Signal{progress(termsignal.ProgressIndeterminate), progress(termsignal.ProgressIndeterminate), progress(termsignal.ProgressNormal)},
			want: Activity{State: Working, Evidence: "OSC 9;4;3;"}},
		{name: "osc 777 notification", sigs: []termsignal.Signal{progress(termsignal.ProgressIndeterminate), notify(777, "Claude Code", "Claude needs your permission")},
			want: Activity{State: Attention, Evidence: "OSC 777;notify;Claude Code;Claude needs your permission", Notification: "Claude Code: Claude needs your permission"}, wantAt: 1},
		{name: "osc 9 notification has no title", sigs: []termsignal.Signal{{Kind: termsignal.KindNotify, OSC: 9, Body: "Claude needs your permission", Raw: "9;Claude needs your permission"}},
			want: Activity{State: Attention, Evidence: "OSC 9;Claude needs your permission", Notification: "Claude needs your permission"}},
		{name: "attention then working again", sigs: []termsignal.Signal{notify(777, "a", "b"), progress(termsignal.ProgressIndeterminate)},
			want: Activity{State: Working, Evidence: "OSC 9;4;3;"}, wantAt: 1},
		{name: "bell", sigs: []termsignal.Signal{bell}, want: Activity{State: Attention, Evidence: "BEL", Notification: "bell"}},
		{name: "bells debounced", sigs: []termsignal.Signal{bell, progress(termsignal.ProgressIndeterminate), bell}, gap: 100 * time.Millisecond,
			want: Activity{State: Working, Evidence: "OSC 9;4;3;"}, wantAt: 1},
		{name: "bells apart count", sigs: []termsignal.Signal{bell, progress(termsignal.ProgressIndeterminate), bell}, gap: 600 * time.Millisecond,
			want: Activity{State: Attention, Evidence: "BEL", Notification: "bell"}, wantAt: 2},
		{name: "7501 blocked", provider: "codex", sigs: []termsignal.Signal{status("state=working:app=codex"), status("state=blocked:app=codex:kind=permission")},
			want: Activity{State: Attention, Evidence: "OSC 7501;state=blocked:app=codex:kind=permission", Notification: "blocked (permission)"}, wantAt: 1},
		{name: "7501 done", sigs: []termsignal.Signal{status("state=working:app=codex"), status("state=done:app=codex")},
			want: Activity{State: Waiting, Evidence: "OSC 7501;state=done:app=codex"}, wantAt: 1},
		{name: "7501 clear", sigs: []termsignal.Signal{status("state=working:app=codex"), status("state=clear")},
			want: Activity{Evidence: "OSC 7501;state=clear"}, wantAt: 1},
		{name: "7501 unknown state ignored", sigs: []termsignal.Signal{status("state=working:app=codex"), status("state=thinking")},
			want: Activity{State: Working, Evidence: "OSC 7501;state=working:app=codex"}},
		{name: "codex spinner title", provider: "codex", sigs: []termsignal.Signal{title("⠋ repo-codex")},
			want: Activity{State: Working, Evidence: "OSC 0;⠋ repo-codex"}},
		{name: "codex titles ignored after 7501", provider: "codex", sigs: []termsignal.Signal{status("state=blocked:app=codex:kind=permission"), title("⠧ repo-codex")},
			want: Activity{State: Attention, Evidence: "OSC 7501;state=blocked:app=codex:kind=permission", Notification: "blocked (permission)"}},
		{name: "codex action required title", provider: "codex", sigs: []termsignal.Signal{title("⠋ repo-codex"), title("[ ! ] Action Required | repo-codex")},
			want: Activity{State: Attention, Evidence: "OSC 0;[ ! ] Action Required | repo-codex", Notification: "[ ! ] Action Required | repo-codex"}, wantAt: 1},
		{name: "codex idle title", provider: "codex", sigs: []termsignal.Signal{title("⠋ repo-codex"), title("repo-codex")},
			want: Activity{State: Waiting, Evidence: "OSC 0;repo-codex"}, wantAt: 1},
		{name: "gemini ready padded", provider: "gemini", sigs: []termsignal.Signal{title("◇  Ready (repo-gemini)" + strings.Repeat(" ", 40))},
			want: Activity{State: Waiting, Evidence: "OSC 0;◇  Ready (repo-gemini)"}},
		{name: "gemini working", provider: "gemini", sigs: []termsignal.Signal{title("✦  Working… (repo-gemini)")},
			want: Activity{State: Working, Evidence: "OSC 0;✦  Working… (repo-gemini)"}},
		{name: "gemini action required", provider: "gemini", sigs: []termsignal.Signal{title("✋  Action Required (repo-gemini)")},
			want: Activity{State: Attention, Evidence: "OSC 0;✋  Action Required (repo-gemini)", Notification: "✋  Action Required (repo-gemini)"}},
		{name: "gemini exit title", provider: "gemini", sigs: []termsignal.Signal{title("✦  Working… (repo-gemini)"), title("")},
			want: Activity{Evidence: "OSC 0;"}, wantAt: 1},
		{name: "titles mean nothing for a shell", provider: "", sigs: []termsignal.Signal{title("✦  Working… (repo-gemini)")}, want: Activity{}},
		{name: "claude title means nothing", provider: "claude", sigs: []termsignal.Signal{title("✳ Claude Code")}, want: Activity{}},
		{name: "gemini glyph titles belong to gemini", provider: "codex", sigs: []termsignal.Signal{title("◇  Ready (x)")},
			want: Activity{State: Waiting, Evidence: "OSC 0;◇  Ready (x)"}},
		{name: "icon name ignored", provider: "gemini", sigs: []termsignal.Signal{{Kind: termsignal.KindTitle, OSC: 1, Title: "✦  Working…", Raw: "1;✦  Working…"}}, want: Activity{}},
		{name: "prompt marks ignored", sigs: []termsignal.Signal{{Kind: termsignal.KindPrompt, OSC: 133, Mark: 'D', ExitCode: 0, Raw: "133;D;0"}}, want: Activity{}},
		{name: "control characters dropped", sigs: []termsignal.Signal{notify(777, "a\x07b", "c\x1bd")},
			want: Activity{State: Attention, Evidence: "OSC 777;notify;ab;cd", Notification: "ab: cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr activityTracker
			tr.bell.Interval = DefaultBellInterval
			gap := tt.gap
			if gap == 0 {
				gap = time.Second
			}
			for i, sig := range tt.sigs {
				tr.apply(tt.provider, sig, t0.Add(time.Duration(i)*gap))
			}
			want := tt.want
			if want.State != "" || want.Evidence != "" {
				want.Since = t0.Add(time.Duration(tt.wantAt) * gap)
			}
			if diff := cmp.Diff(want, tr.cur); diff != "" {
				t.Errorf("activity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestActivityLongEvidenceClipped(t *testing.T) {
	var tr activityTracker
	tr.apply("", notify(777, strings.Repeat("é", 300), "x"), t0)
	if len(tr.cur.Evidence) > maxEvidence+len("…") || len(tr.cur.Notification) > maxEvidence+len("…") {
		t.Fatalf("evidence %d bytes, notification %d bytes", len(tr.cur.Evidence), len(tr.cur.Notification))
	}
	if !strings.HasSuffix(tr.cur.Notification, "…") {
		t.Errorf("notification %q not marked as cut", tr.cur.Notification)
	}
}

// TestActivityFromCaptures replays the PTY output of the real CLIs (see
// testdata/README.md) through the scanner in small chunks and lists every
// activity the pane goes through.
func TestActivityFromCaptures(t *testing.T) {
	tests := []struct {
		file     string
		provider string
		want     []string
	}{
		// Claude Code with TERM_PROGRAM=ghostty: progress while working, an
		// OSC 777 notification for the permission dialog.
		{"claude-6.bin", "claude", []string{
			"waiting OSC 9;4;0;",
			"working OSC 9;4;3;",
			"waiting OSC 9;4;0;",
			"attention OSC 777;notify;Claude Code;Claude needs your permission [Claude Code: Claude needs your permission]",
			"working OSC 9;4;3;",
			"waiting OSC 9;4;0;",
		}},
		// iTerm2: OSC 9 only.
		{"claude-7.bin", "claude", []string{
			"attention OSC 9;Claude needs your permission [Claude needs your permission]",
		}},
		// kitty: a three-chunk OSC 99 notification.
		{"claude-8.bin", "claude", []string{
			"attention OSC 99;i=8276:p=body;Claude needs your permission [Claude Code: Claude needs your permission]",
		}},
		// Codex: OSC 7501 wins over its spinner and Action Required titles.
		{"codex-5.bin", "codex", []string{
			"waiting OSC 0;repo-codex",
			"working OSC 7501;state=working:app=codex",
			"waiting OSC 7501;state=idle:app=codex",
			"working OSC 7501;state=working:app=codex",
			"waiting OSC 7501;state=done:app=codex",
			"working OSC 7501;state=working:app=codex",
			"waiting OSC 7501;state=done:app=codex",
			"working OSC 7501;state=working:app=codex",
			"attention OSC 7501;state=blocked:app=codex:kind=permission [blocked (permission)]",
			"working OSC 7501;state=working:app=codex",
			"waiting OSC 7501;state=idle:app=codex",
			" OSC 7501;state=clear",
		}},
		// Gemini CLI: the title glyphs only.
		{"gemini-3.bin", "gemini", []string{
			"waiting OSC 0;◇  Ready (repo-gemini)",
			"working OSC 0;✦  Working… (repo-gemini)",
			"waiting OSC 0;◇  Ready (repo-gemini)",
			"working OSC 0;✦  Working… (repo-gemini)",
			"attention OSC 0;✋  Action Required (repo-gemini) [✋  Action Required (repo-gemini)]",
			"working OSC 0;✦  Working… (repo-gemini)",
			"waiting OSC 0;◇  Ready (repo-gemini)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var tr activityTracker
			tr.bell.Interval = DefaultBellInterval
			sc := termsignal.New()
			var got []string
			now := t0
			var out []byte
			for len(data) > 0 {
				n := min(len(data), 97)
				var sigs []termsignal.Signal
				out, sigs = sc.Feed(data[:n], out[:0])
				data = data[n:]
				for _, sig := range sigs {
					now = now.Add(time.Second)
					if changed, _ := tr.apply(tt.provider, sig, now); changed {
						line := tr.cur.State + " " + tr.cur.Evidence
						if tr.cur.Notification != "" {
							line += " [" + tr.cur.Notification + "]"
						}
						got = append(got, line)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("activity sequence (-want +got):\n%s", diff)
			}
		})
	}
}
