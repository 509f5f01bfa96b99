package hookevent

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// TestDaemonAcceptsEveryEnvelope sends every event the helper maps from the
// captured payloads through the helper's encoder and the daemon's decoder
// (both proto's), with and without a pane (Codex sends without one), and
// checks that the daemon reads what the payload said, the model included:
// Codex and Cursor name one in every hook, Claude Code in none it maps.
func TestDaemonAcceptsEveryEnvelope(t *testing.T) {
	files := map[string]string{
		"claude": "claude.jsonl", "codex": "codex.jsonl", "gemini": "gemini.jsonl",
		"cursor": "cursor.jsonl", "opencode": "opencode.jsonl",
	}
	models := map[string]int{}
	now := time.Now()
	n := 0
	for provider, file := range files {
		f, err := os.Open(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, proto.MaxHookPayload)
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
					sent := Envelope(m, pane[0], pane[1])
					body, err := proto.EncodeEnvelope(sent)
					if err != nil {
						t.Fatal(err)
					}
					got, code := proto.DecodeEnvelope(bytes.TrimSuffix(body, []byte("\n")), now, time.Minute)
					if code != "" {
						t.Errorf("%s %s: daemon answers %s for %s", provider, m.HookName, code, body)
						continue
					}
					if !reflect.DeepEqual(got, sent) {
						t.Errorf("%s %s: sent %+v, daemon read %+v", provider, m.HookName, sent, got)
					}
					if got.Event.Model != in.Model {
						t.Errorf("%s %s: model %q, the payload names %q", provider, m.HookName, got.Event.Model, in.Model)
					}
					if got.Event.Model != "" {
						models[provider]++
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
	if models["codex"] == 0 || models["cursor"] == 0 || models["claude"] != 0 {
		t.Errorf("events naming a model, by provider: %v; want some of Codex and Cursor, none of Claude Code", models)
	}
}
