package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/testing/providertest"
)

func TestTurnsOfTranscripts(t *testing.T) {
	tests := []struct {
		provider, file string
		want           []string
	}{
		{"codex", "codex-01a22c19.jsonl", []string{
			`start 01a22c19 10:56:38.191 ""`,
			`end succeeded 01a22c19 10:56:38.399 "hi"`,
			`start 01a22c19 10:56:46.269 ""`,
			`end succeeded 01a22c19 10:56:46.675 "hi"`,
			`start 01a22c19 10:56:58.611 ""`,
			`end interrupted 01a22c19 10:57:11.216 "interrupted"`,
		}},
		{"codex", "codex-01a22c0e.jsonl", []string{
			`start 01a22c0f 10:45:18.638 ""`,
			`end interrupted 01a22c0f 10:47:57.011 "interrupted"`,
			`start 01a22c12 10:48:30.044 ""`,
			`end interrupted 01a22c12 10:53:11.288 "interrupted"`,
			`start 01a22c18 10:55:39.081 ""`,
			`end interrupted 01a22c18 10:55:43.073 "interrupted"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := providertest.ParseTurns(t, Provider{}, filepath.Join("testdata", "turns", tt.file))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurnLines(t *testing.T) {
	ev := func(payload string) string {
		return `{"timestamp":"2026-11-30T10:00:00Z","type":"event_msg","payload":` + payload + `}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"turn", []string{ev(`{"type":"task_started","turn_id":"t1"}`), ev(`{"type":"task_complete","turn_id":"t1","last_agent_message":"ok\nmore"}`)},
			[]string{`start t1 10:00:00.000 ""`, `end succeeded t1 10:00:00.000 "ok"`}},
		{"aborted without reason", []string{ev(`{"type":"turn_aborted","turn_id":"t1"}`)},
			[]string{`end interrupted t1 10:00:00.000 "aborted"`}},
		{"nested turn", []string{ev(`{"type":"task_started","turn_id":"t2","root_turn_id":"t1"}`)}, nil},
		{"no turn id (old versions)", []string{ev(`{"type":"task_started"}`)}, nil},
		{"not an event", []string{`{"type":"response_item","payload":{"type":"task_started","turn_id":"t1"}}`}, nil},
		{"bad payload", []string{`{"type":"event_msg","payload":"task_started"}`, `{"type":"event_msg","payload":{"type":"task_started"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, providertest.LineTurns(t, Provider{}, tt.lines...)); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}
func FuzzTurnLines(f *testing.F) {
	providertest.AddLineSeeds(f, filepath.Join("testdata", "turns", "codex-01a22c19.jsonl"), filepath.Join("testdata", "turns", "codex-01a22c0e.jsonl"))
	f.Fuzz(func(t *testing.T, data []byte) { providertest.FuzzTurnLines(t, Provider{}, data) })
}

// Codex fires no hook for an aborted turn (Esc, "No, and tell Codex what
// to do differently"), so only that end is HookSilent: the fusion rule
// applies it while the hooks report; a completed turn has its Stop hook.
func TestAbortedTurnsAreHookSilent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "turns", "codex-01a22c19.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := Provider{}.NewTurnParser()
	var turns []provider.Turn
	for _, l := range bytes.Split(b, []byte("\n")) {
		turns = p.Line(l, turns)
	}
	var silent, loud int
	for _, r := range turns {
		switch {
		case r.Op == provider.TurnEnd && r.Kind == proto.KindInterrupted:
			if !r.HookSilent {
				t.Errorf("aborted turn %s is not HookSilent", r.Key)
			}
			silent++
		case r.HookSilent:
			t.Errorf("%+v is HookSilent; Codex's hooks report it", r)
		default:
			loud++
		}
	}
	if silent == 0 || loud == 0 {
		t.Fatalf("the recording has %d aborted and %d other records; want both", silent, loud)
	}
}
