//go:build unix

package muse

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

// pngBytes is a PNG signature padded to n bytes: enough for a declared
// image/png; the parser never decodes images.
func pngBytes(n int) []byte {
	b := bytes.Repeat([]byte{0}, n)
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileRef(path string, bytesLen any, sha string) string {
	bl := ""
	if bytesLen != nil {
		bl = fmt.Sprintf(`,"bytes_len":%v`, bytesLen)
	}
	return fmt.Sprintf(`{"type":"file_ref","path":%q,"mime_type":"image/png"%s,"sha256":%q}`, path, bl, sha)
}

func partsItem(parts ...string) string {
	return item(`{"type":"message_parts","role":"user","parts":[` + strings.Join(parts, ",") + `]}`)
}

func TestImages(t *testing.T) {
	env := testEnv(t, nil)
	home := env.Home
	outside := t.TempDir()
	pic := pngBytes(300)
	sum := digest(pic)
	os.MkdirAll(filepath.Join(home, "Pictures"), 0o755)
	os.WriteFile(filepath.Join(home, "Pictures", "shot.png"), pic, 0o644)
	os.WriteFile(filepath.Join(outside, "secret.png"), pic, 0o644)
	os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(home, "Pictures", "link.png"))
	if err := os.Link(filepath.Join(outside, "secret.png"), filepath.Join(home, "Pictures", "hard.png")); err != nil {
		t.Fatal(err)
	}
	text := `{"type":"text","text":"what is on this screenshot?"}`

	tests := []struct {
		name     string
		parts    []string
		images   int
		warning  string // substring of the only warning; "" means none
		wantText string
	}{
		{"embedded", []string{text, fileRef("Pictures/shot.png", len(pic), sum)}, 1, "", "what is on this screenshot?"},
		{"symlink escape", []string{text, fileRef("Pictures/link.png", len(pic), sum)}, 0, "resolves outside the home directory", ""},
		{"hard link to a file outside home", []string{text, fileRef("Pictures/hard.png", len(pic), sum)}, 0, "has 2 hard links", ""},
		{"dot-dot escape", []string{text, fileRef("../"+filepath.Base(outside)+"/secret.png", len(pic), sum)}, 0, "escapes the home directory", ""},
		{"missing bytes_len", []string{text, fileRef("Pictures/shot.png", nil, sum)}, 0, "bytes_len is missing", ""},
		{"null bytes_len", []string{text, fileRef("Pictures/shot.png", "null", sum)}, 0, "bytes_len is missing", ""},
		{"string bytes_len", []string{text, fileRef("Pictures/shot.png", `"300"`, sum)}, 0, "not a bounded positive integer", ""},
		{"fractional bytes_len", []string{text, fileRef("Pictures/shot.png", 299.5, sum)}, 0, "not a bounded positive integer", ""},
		{"zero bytes_len", []string{text, fileRef("Pictures/shot.png", 0, sum)}, 0, "not a bounded positive integer", ""},
		{"huge bytes_len", []string{text, fileRef("Pictures/shot.png", 1e300, sum)}, 0, "not a bounded positive integer", ""},
		{"oversized bytes_len", []string{text, fileRef("Pictures/shot.png", 5<<20+1, sum)}, 0, "per-image cap", ""},
		{"mismatched bytes_len", []string{text, fileRef("Pictures/shot.png", len(pic)-1, sum)}, 0, "bytes_len says 299", ""},
		{"sha mismatch", []string{text, fileRef("Pictures/shot.png", len(pic), digest([]byte("x")))}, 0, "does not match its sha256", ""},
		{"missing file", []string{text, fileRef("Pictures/gone.png", len(pic), sum)}, 0, "resolve image", ""},
		{"image-only message replays as (image)", []string{fileRef("Pictures/shot.png", len(pic), sum)}, 1, "", "(image)"},
		{"image-only message with a rejected image still replays", []string{fileRef("Pictures/link.png", len(pic), sum)}, 0, "outside the home", "(image)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeAgent(t, t.TempDir(), "img", partsItem(tt.parts...))
			tr := parseOne(t, env, path)
			if tr.PromptCount != 1 || len(tr.Items) != 1 || tr.Items[0].Kind != transcript.UserPrompt {
				t.Fatalf("count %d items %+v", tr.PromptCount, tr.Items)
			}
			it := tr.Items[0]
			if len(it.Images) != tt.images {
				t.Fatalf("%d images, want %d; warnings %v", len(it.Images), tt.images, tr.Warnings)
			}
			if tt.images > 0 && (it.Images[0].MIME != "image/png" || !strings.HasPrefix(it.Images[0].DataURL, "data:image/png;base64,iVBORw0KGgo")) {
				t.Fatalf("image = %.80v", it.Images[0])
			}
			if tt.wantText != "" && it.Text != tt.wantText {
				t.Fatalf("text = %q, want %q", it.Text, tt.wantText)
			}
			switch {
			case tt.warning == "" && len(tr.Warnings) != 0:
				t.Fatalf("unexpected warnings %v", tr.Warnings)
			case tt.warning != "" && (len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], tt.warning) || !strings.HasPrefix(tr.Warnings[0], "line 1: image ")):
				t.Fatalf("warnings %v, want one containing %q", tr.Warnings, tt.warning)
			}
			// A summary scan never reads images, so it warns about none.
			sum := parse(t, env, path, transcript.ParseOptions{SummaryOnly: true})[0]
			if len(sum.Warnings) != 0 || sum.PromptCount != 1 {
				t.Fatalf("summary warnings %v count %d", sum.Warnings, sum.PromptCount)
			}
		})
	}
}

func TestImageCaps(t *testing.T) {
	env := testEnv(t, nil)
	big := pngBytes(5<<20 + 1)
	os.WriteFile(filepath.Join(env.Home, "big.png"), big, 0o644)
	each := pngBytes(4_900_000)
	os.WriteFile(filepath.Join(env.Home, "each.png"), each, 0o644)

	t.Run("per-image cap", func(t *testing.T) {
		path := writeAgent(t, t.TempDir(), "a", partsItem(fileRef("big.png", len(big), digest(big))))
		tr := parseOne(t, env, path)
		if len(tr.Items[0].Images) != 0 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "per-image cap") {
			t.Fatalf("images %d warnings %v", len(tr.Items[0].Images), tr.Warnings)
		}
	})
	t.Run("cumulative budget per parse", func(t *testing.T) {
		ref := fileRef("each.png", len(each), digest(each))
		var lines []string
		for range 6 {
			lines = append(lines, partsItem(ref))
		}
		path := writeAgent(t, t.TempDir(), "a", lines...)
		tr := parseOne(t, env, path)
		embedded := 0
		for _, it := range tr.Items {
			embedded += len(it.Images)
		}
		if embedded != 5 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "line 6: ") || !strings.Contains(tr.Warnings[0], "per-parse budget") {
			t.Fatalf("embedded %d warnings %v", embedded, tr.Warnings)
		}
		// The budget is per parse: a second parse embeds the same five.
		if tr2 := parseOne(t, env, path); len(tr2.Warnings) != 1 {
			t.Fatalf("second parse warnings %v", tr2.Warnings)
		}
	})
}
