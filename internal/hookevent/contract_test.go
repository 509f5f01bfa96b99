package hookevent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/events"
)

// TestDaemonAcceptsEveryEnvelope checks every envelope the helper would
// send for the captured payloads against the daemon's own request decoder,
// with and without a pane (Codex sends without one).
func TestDaemonAcceptsEveryEnvelope(t *testing.T) {
	files := map[string]string{
		"claude": "claude.jsonl", "codex": "codex.jsonl", "gemini": "gemini.jsonl",
		"cursor": "cursor.jsonl", "opencode": "opencode.jsonl",
	}
	now := time.Now()
	n := 0
	for provider, file := range files {
		f, err := os.Open(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, MaxPayload)
		states := map[string]*State{}
		for sc.Scan() {
			line := bytes.Clone(sc.Bytes())
			in, err := parse(provider, line)
			if err != nil {
				t.Fatal(err)
			}
			st := states[in.Session]
			if st == nil {
				st = &State{Session: in.Session}
			}
			res, err := Map(provider, line, st, now)
			if err != nil {
				t.Fatal(err)
			}
			if res.State != nil {
				states[in.Session] = res.State
			}
			for _, m := range res.Events {
				for _, pane := range [][2]string{{"cap-0123456789abcdef", "surface-1"}, {"", ""}} {
					body, err := json.Marshal(wire(Envelope(provider, m, pane[0], pane[1])))
					if err != nil {
						t.Fatal(err)
					}
					req, code := events.Decode(body, now, time.Minute)
					if code != "" {
						t.Errorf("%s %s: daemon answers %s for %s", provider, m.HookName, code, body)
						continue
					}
					if req.Event.ID.RawValue != m.ID || req.Event.Kind != m.Kind || req.Event.SurfaceID.RawValue != pane[1] {
						t.Errorf("%s %s: decoded as %+v", provider, m.HookName, req.Event)
					}
					n++
				}
			}
		}
		f.Close()
	}
	if n == 0 {
		t.Fatal("no envelope checked")
	}
}
