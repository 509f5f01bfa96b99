package hookevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// fuzzMapper checks, for any input, that Map never panics, that an error is
// always ErrMalformed and changes nothing, that every event is well formed,
// that mapping is deterministic, and that the state it returns survives the
// JSON round trip of the state file.
func fuzzMapper(f *testing.F, provider, seedFile string) {
	b, err := os.ReadFile(filepath.Join("testdata", seedFile))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			f.Add([]byte(l), false)
		}
	}
	f.Add([]byte(`{}`), true)
	f.Add([]byte(`{"hook_event_name":"Stop","session_id":"\u0000"}`), true)
	f.Fuzz(func(t *testing.T, payload []byte, stateful bool) {
		var st *State
		if stateful {
			st = &State{Session: "s", Run: TurnRunID(provider, "old"), Open: true, Last: "started", Recent: []string{"x"}}
			// Most seeds carry their own session; reuse it so that the
			// state rules are exercised, not only the fresh-state path.
			if in, err := parse(provider, payload); err == nil {
				st.Session = in.Session
			}
		}
		res, err := Map(provider, payload, st, t0)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if len(res.Events) != 0 || res.State != nil || res.Drop {
				t.Fatalf("malformed payload changed something: %+v", res)
			}
			return
		}
		if len(res.Events) > 3 {
			t.Fatalf("%d events", len(res.Events))
		}
		for _, e := range res.Events {
			checkMapped(t, provider, e)
			// What the helper maps, the daemon reads as sent.
			for _, pane := range [][2]string{{"cap-0123", "surface-1"}, {"", ""}} {
				sent := Envelope(e, pane[0], pane[1])
				line, err := proto.EncodeEnvelope(sent)
				if err != nil {
					t.Fatalf("mapped %+v, cannot send it: %v", e, err)
				}
				got, code := proto.DecodeEnvelope(bytes.TrimSuffix(line, []byte("\n")), t0, 0)
				if code != "" || !reflect.DeepEqual(got, sent) {
					t.Fatalf("sent %s\ndaemon read %+v (%q)", line, got, code)
				}
			}
		}
		again, _ := Map(provider, payload, st, t0)
		if !reflect.DeepEqual(res, again) {
			t.Fatalf("not deterministic:\n%+v\n%+v", res, again)
		}
		if res.State != nil {
			raw, err := json.Marshal(res.State)
			if err != nil {
				t.Fatal(err)
			}
			var back State
			if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(&back, res.State) {
				t.Fatalf("state does not round-trip: %s (%v)", raw, err)
			}
		}
	})
}

func FuzzMapClaude(f *testing.F)   { fuzzMapper(f, "claude", "claude.jsonl") }
func FuzzMapCodex(f *testing.F)    { fuzzMapper(f, "codex", "codex.jsonl") }
func FuzzMapGemini(f *testing.F)   { fuzzMapper(f, "gemini", "gemini.jsonl") }
func FuzzMapCursor(f *testing.F)   { fuzzMapper(f, "cursor", "cursor.jsonl") }
func FuzzMapOpenCode(f *testing.F) { fuzzMapper(f, "opencode", "opencode.jsonl") }
