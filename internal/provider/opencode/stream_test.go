package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// TestParseJSONStreamsAndBounds: an export is read message by message and
// a legacy session's message and part files one at a time; a value over
// the limit is skipped with a warning (the others kept), and the items go
// to ParseOptions.Item when it is set.
func TestParseJSONStreamsAndBounds(t *testing.T) {
	defer func(n int) { maxValue = n }(maxValue)
	maxValue = 4096
	big := strings.Repeat("x", 5000)
	msg := func(id, text string) string {
		return fmt.Sprintf(`{"info":{"id":%q,"role":"user","time":{"created":1772359200000}},"parts":[{"id":"p%s","type":"text","text":%q}]}`, id, id, text)
	}
	dir := t.TempDir()
	export := filepath.Join(dir, "export.json")
	os.WriteFile(export, []byte(`{"info":{"id":"ses_x","title":"T"},"messages":[`+msg("m1", "first")+","+msg("m2", big)+","+msg("m3", "third")+`]}`), 0o600)

	storage := filepath.Join(dir, "storage")
	write := func(rel, body string) {
		p := filepath.Join(storage, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o600)
	}
	write("session/proj/ses_y.json", `{"id":"ses_y","title":"Y","time":{"created":1772359200000}}`)
	for i, text := range []string{"first", big, "third"} {
		id := fmt.Sprintf("msg_%d", i+1)
		write("message/ses_y/"+id+".json", fmt.Sprintf(`{"id":%q,"sessionID":"ses_y","role":"user","time":{"created":%d}}`, id, 1772359200000+i))
		write("part/"+id+"/prt_1.json", fmt.Sprintf(`{"id":"prt_1","type":"text","text":%q}`, text))
	}
	legacy := filepath.Join(storage, "session", "proj", "ses_y.json")

	for _, c := range []struct{ path, warning string }{
		{export, "message 2: over 4096 bytes; skipped"},
		{legacy, "prt_1.json: skipped: read " + filepath.Join(storage, "part", "msg_2", "prt_1.json") + ": 5038 bytes, over the 4096-byte limit"},
	} {
		var got []string
		ts := parse(t, c.path, transcript.ParseOptions{Item: func(it transcript.Item) { got = append(got, it.Text) }})
		tr := ts[0]
		if tr.PromptCount != 2 || strings.Join(got, ",") != "first,third" || len(tr.Items) != 0 {
			t.Errorf("%s: %d prompts, streamed %q, kept %d items", filepath.Base(c.path), tr.PromptCount, got, len(tr.Items))
		}
		if !strings.Contains(strings.Join(tr.Warnings, "\n"), c.warning) {
			t.Errorf("%s: warnings %q, want %q", filepath.Base(c.path), tr.Warnings, c.warning)
		}
		if tr := parse(t, c.path, transcript.ParseOptions{})[0]; len(tr.Items) != 2 {
			t.Errorf("%s without a sink: %d items", filepath.Base(c.path), len(tr.Items))
		}
	}
}
