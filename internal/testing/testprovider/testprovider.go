// Package testprovider is testagent, a provider that exists only in tests:
// the proof that a provider is one package and one registration. It has
// every capability a real one has — launch and resume with a
// caller-assigned id, launch-time hooks, hook installation, hook mapping
// (its light subpackage testagenthook), native capture, transcripts with
// one parser shared by history and the turn reader, and window titles —
// and a test registers it (all.Register) and drives it through the
// daemon's launch, the hook helper, the installer, capture, history and
// the native turn reader, none of which names it.
//
// testagent keeps everything under $TESTAGENT_HOME (default ~/.testagent):
// hooks.json, and sessions/<id>.jsonl, one record a line:
//
//	{"time":"2026-…Z","type":"prompt","turn":"t1","text":"…","cwd":"/w"}
//	{"time":"…","type":"reply","turn":"t1","text":"…"}
//	{"time":"…","type":"done","turn":"t1"}      (or "failed", with text)
package testprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/testing/testprovider/testagenthook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider's name.
const Name = testagenthook.Name

// Provider is testagent.
type Provider struct{}

var (
	_ provider.Launcher          = Provider{}
	_ provider.Transcripts       = Provider{}
	_ provider.TranscriptChecker = Provider{}
	_ provider.HookInstaller     = Provider{}
	_ provider.HookMapper        = Provider{}
	_ provider.NativeCapturer    = Provider{}
	_ provider.TurnReader        = Provider{}
	_ provider.TitleReader       = Provider{}
)

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// home is $TESTAGENT_HOME, or ~/.testagent.
func home(env transcript.Env) (string, error) {
	return env.CheckedDir("TESTAGENT_HOME", "", ".testagent")
}

// SessionsDir is where the transcripts are.
func SessionsDir(env transcript.Env) string {
	d, _ := home(env)
	if d == "" {
		return ""
	}
	return filepath.Join(d, "sessions")
}

// Launch implements provider.Launcher.
func (Provider) Launch() provider.Launch {
	return provider.Launch{
		Executables: []string{"testagent"},
		AssignsID:   true,
		NewArgs:     func(id string) []string { return []string{"--session", id} },
		ResumeArgs:  func(id string) []string { return []string{"--resume", id} },
		Install:     "it exists only in tests",
		HookArgs:    func(settings string) []string { return []string{"--hooks", settings} },
	}
}

// HasTranscript implements provider.TranscriptChecker.
func (Provider) HasTranscript(env transcript.Env, id string) bool {
	fi, err := os.Stat(filepath.Join(SessionsDir(env), id+".jsonl"))
	return err == nil && fi.Mode().IsRegular()
}

// HookInstall implements provider.HookInstaller: $TESTAGENT_HOME/hooks.json,
// {"hooks": {event: [{"hooks": [{"command": …}]}]}}.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			d, err := home(env)
			return filepath.Join(d, "hooks.json"), err
		},
		JSON: &provider.HookJSON{
			Events: []provider.HookEvent{{Name: "start", Capture: true}, {Name: "prompt"}, {Name: "tool"}, {Name: "stop"}, {Name: "end"}},
			Entries: func(_ provider.HookEvent, cmds []string) []any {
				hs := make([]any, len(cmds))
				for i, c := range cmds {
					hs[i] = provider.Object{{Key: "command", Value: c}}
				}
				return []any{provider.Object{{Key: "hooks", Value: hs}}}
			},
		},
	}
}

// HookMapping implements provider.HookMapper.
func (Provider) HookMapping() *hookmap.Mapping { return &testagenthook.Mapping }

// CapturesNativePayload implements provider.NativeCapturer.
func (Provider) CapturesNativePayload() {}

// TitleActivity implements provider.TitleReader: "testagent: working",
// "testagent: waiting", "testagent: needs you".
func (Provider) TitleActivity(title string) (string, bool) {
	switch strings.TrimSpace(strings.TrimPrefix(title, "testagent:")) {
	case "working":
		return provider.ActivityWorking, true
	case "waiting":
		return provider.ActivityWaiting, true
	case "needs you":
		return provider.ActivityAttention, true
	}
	return "", false
}

// record is one transcript line.
type record struct {
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	Turn string    `json:"turn"`
	Text string    `json:"text"`
	CWD  string    `json:"cwd"`
}

// decode is the one parser of the format, for history and turns alike.
func decode(line []byte) (record, bool) {
	var r record
	if json.Unmarshal(line, &r) != nil || r.Type == "" {
		return record{}, false
	}
	return r, true
}

// Transcripts implements provider.Transcripts.
func (Provider) Transcripts() transcript.Source { return source{} }

type source struct{}

func (source) Provider() string { return Name }

func (source) Roots(env transcript.Env) []string {
	if d := SessionsDir(env); d != "" {
		return []string{d}
	}
	return nil
}

func (source) Discover(_ context.Context, env transcript.Env) ([]transcript.File, error) {
	entries, _ := os.ReadDir(SessionsDir(env))
	var files []transcript.File
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, transcript.StatFile(filepath.Join(SessionsDir(env), e.Name()), fi))
		}
	}
	return files, nil
}

func (source) Parse(_ context.Context, _ transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open testagent transcript: %w", err)
	}
	defer f.Close()
	t := &transcript.Transcript{Session: transcript.Session{
		Provider: Name, Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"),
	}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		r, ok := decode(sc.Bytes())
		if !ok {
			t.Warnings = append(t.Warnings, fmt.Sprintf("line %d: not a record; skipped", n))
			continue
		}
		if t.StartedAt.IsZero() {
			t.StartedAt = r.Time
		}
		t.EndedAt = r.Time
		if t.CWD == "" {
			t.CWD = r.CWD
		}
		var it transcript.Item
		switch r.Type {
		case "prompt":
			t.PromptCount++
			if t.FirstPrompt == "" {
				t.FirstPrompt, t.Title = r.Text, transcript.Headline(r.Text)
			}
			it = transcript.Item{Kind: transcript.UserPrompt, Time: r.Time, Text: r.Text}
		case "reply":
			it = transcript.Item{Kind: transcript.AssistantText, Time: r.Time, Text: r.Text}
		default:
			continue
		}
		if !opts.SummaryOnly {
			t.Items = append(t.Items, it)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read testagent transcript: %w", err)
	}
	return []*transcript.Transcript{t}, nil
}

// NewTurnParser implements provider.TurnReader.
func (Provider) NewTurnParser() provider.TurnParser { return &turns{} }

type turns struct{ last string }

func (p *turns) Line(raw []byte, out []provider.Turn) []provider.Turn {
	r, ok := decode(raw)
	if !ok || r.Turn == "" {
		return out
	}
	switch r.Type {
	case "prompt":
		return append(out, provider.Turn{Op: provider.TurnStart, Key: r.Turn, At: r.Time, Text: transcript.Headline(r.Text)})
	case "reply":
		p.last = transcript.Headline(r.Text)
	case "done":
		return append(out, provider.Turn{Op: provider.TurnEnd, Key: r.Turn, Kind: proto.KindSucceeded, At: r.Time, Text: p.last})
	case "failed":
		return append(out, provider.Turn{Op: provider.TurnEnd, Key: r.Turn, Kind: proto.KindFailed, At: r.Time, Text: r.Text})
	}
	return out
}

// NewTurnLocator implements provider.TurnReader: sessions/<id>.jsonl.
func (Provider) NewTurnLocator(env transcript.Env) provider.TurnLocator { return locator{env} }

type locator struct{ env transcript.Env }

func (l locator) Locate(_ context.Context, q provider.TurnQuery) string {
	if q.NativeID == "" {
		return ""
	}
	p := filepath.Join(SessionsDir(l.env), q.NativeID+".jsonl")
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}
