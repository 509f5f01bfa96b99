package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// testSource is a transcript.Source over "*.sess" files whose content is a
// JSON Session or an array of them (several sessions in one file, like a
// database). It counts its parses so tests can prove what a refresh read.
type testSource struct {
	name        string
	roots       []string
	parses      atomic.Int64
	fullParses  atomic.Int64
	discoverErr error
	mu          sync.Mutex
	parsed      []string
	// unreadable paths fail to read as a file without permission would,
	// also for root, whom chmod 0 does not stop.
	unreadable map[string]bool
}

func (s *testSource) Provider() string                  { return s.name }
func (s *testSource) Roots(env transcript.Env) []string { return s.roots }

func (s *testSource) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	if s.discoverErr != nil {
		return nil, s.discoverErr
	}
	var out []transcript.File
	for _, r := range s.roots {
		err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".sess") {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			out = append(out, transcript.StatFile(p, fi))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *testSource) setUnreadable(path string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unreadable == nil {
		s.unreadable = map[string]bool{}
	}
	s.unreadable[path] = on
}

func (s *testSource) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	s.parses.Add(1)
	if !opts.SummaryOnly {
		s.fullParses.Add(1)
	}
	s.mu.Lock()
	s.parsed = append(s.parsed, path)
	denied := s.unreadable[path]
	s.mu.Unlock()
	if denied {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var many []testSession
	if err := json.Unmarshal(data, &many); err != nil {
		var one testSession
		if err := json.Unmarshal(data, &one); err != nil {
			return []*transcript.Transcript{{Session: transcript.Session{Provider: s.name, Path: path, Warnings: []string{"line 1: " + err.Error()}}}}, nil
		}
		many = []testSession{one}
	}
	var out []*transcript.Transcript
	for _, ts := range many {
		t := &transcript.Transcript{Session: transcript.Session{
			Provider: s.name, ID: ts.ID, Path: path, Title: ts.Title, FirstPrompt: ts.Title, CWD: ts.CWD,
			PromptCount: ts.Prompts, ToolCallCount: len(ts.Tools), Model: ts.Model,
			StartedAt: ts.Started, EndedAt: ts.Started.Add(time.Minute),
			ParentID: ts.Parent, ParentCallID: ts.ParentCall,
		}}
		if !opts.SummaryOnly {
			t.Items = append(t.Items, transcript.Item{Kind: transcript.UserPrompt, Text: ts.Title})
			for _, r := range ts.Replies {
				t.Items = append(t.Items, transcript.Item{Kind: transcript.AssistantText, Text: r})
			}
			for i, tool := range ts.Tools {
				t.Items = append(t.Items, transcript.Item{Kind: transcript.ToolUse, Tool: tool})
				if i < len(ts.Outputs) {
					t.Items = append(t.Items, transcript.Item{Kind: transcript.ToolResult, Tool: tool, Text: ts.Outputs[i]})
				}
			}
		}
		out = append(out, t)
	}
	return out, nil
}

type testSession struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	CWD     string    `json:"cwd,omitempty"`
	Prompts int       `json:"prompts"`
	Tools   []string  `json:"tools,omitempty"`
	Model   string    `json:"model,omitempty"`
	Started time.Time `json:"started"`
	// Replies and Outputs (one per tool) are items of a full parse.
	Replies []string `json:"replies,omitempty"`
	Outputs []string `json:"outputs,omitempty"`
	// Parent and ParentCall make a sub-agent session.
	Parent     string `json:"parent,omitempty"`
	ParentCall string `json:"parent_call,omitempty"`
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func writeSession(t testing.TB, path string, ss ...testSession) {
	t.Helper()
	var v any = ss[0]
	if len(ss) > 1 {
		v = ss
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openIndex(t testing.TB, version string) *Index {
	t.Helper()
	st, err := store.OpenIndex(context.Background(), filepath.Join(t.TempDir(), "muster.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, version)
}

func sessionName(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012d", i*7919, i) }
