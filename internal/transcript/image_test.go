//go:build unix

package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func tinyPNG(t *testing.T, w int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, 1))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEmbedImage(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	pic := tinyPNG(t, 3)
	writeFile(t, filepath.Join(home, "pics", "a.png"), pic)
	writeFile(t, filepath.Join(root, "outside.png"), pic)
	if err := os.Symlink(filepath.Join(root, "outside.png"), filepath.Join(home, "pics", "escape.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.png", filepath.Join(home, "pics", "inside.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(home, "up")); err != nil {
		t.Fatal(err)
	}
	// A hard link inside home to a file outside it: the link itself is a
	// regular file under home, so only the link count gives it away.
	if err := os.Link(filepath.Join(root, "outside.png"), filepath.Join(home, "pics", "hard.png")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, "pics", "fifo.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "notes.txt"), []byte("hello, not an image at all"))
	good := ImageRef{Path: "pics/a.png", MIME: "image/png", BytesLen: int64(len(pic)), SHA256: sum(pic)}

	tests := []struct {
		name    string
		ref     func(ImageRef) ImageRef
		wantErr string
	}{
		{"embeds a matching file", func(r ImageRef) ImageRef { return r }, ""},
		{"follows a symlink that stays inside home", func(r ImageRef) ImageRef { r.Path = "pics/inside.png"; return r }, ""},
		{"accepts an uppercase digest with prefix", func(r ImageRef) ImageRef { r.SHA256 = "sha256:" + strings.ToUpper(r.SHA256); return r }, ""},
		{"sniffs a missing type", func(r ImageRef) ImageRef { r.MIME = ""; return r }, ""},
		{"rejects a symlink escape", func(r ImageRef) ImageRef { r.Path = "pics/escape.png"; return r }, "outside the home"},
		{"rejects a directory symlink escape", func(r ImageRef) ImageRef { r.Path = "up/outside.png"; return r }, "outside the home"},
		{"rejects a hard link to a file outside home", func(r ImageRef) ImageRef { r.Path = "pics/hard.png"; return r }, "has 2 hard links"},
		{"rejects a dot-dot escape", func(r ImageRef) ImageRef { r.Path = "../outside.png"; return r }, "escapes the home"},
		{"rejects a nested dot-dot escape", func(r ImageRef) ImageRef { r.Path = "pics/../../outside.png"; return r }, "escapes the home"},
		{"rejects an absolute path", func(r ImageRef) ImageRef { r.Path = filepath.Join(home, "pics/a.png"); return r }, "absolute"},
		{"rejects an empty path", func(r ImageRef) ImageRef { r.Path = ""; return r }, "empty"},
		{"rejects home itself", func(r ImageRef) ImageRef { r.Path = "."; return r }, "escapes"},
		{"rejects a missing bytes_len", func(r ImageRef) ImageRef { r.BytesLen = 0; return r }, "bytes_len is missing"},
		{"rejects a negative bytes_len", func(r ImageRef) ImageRef { r.BytesLen = -5; return r }, "bytes_len is missing"},
		{"rejects a mismatched bytes_len", func(r ImageRef) ImageRef { r.BytesLen++; return r }, "bytes_len says"},
		{"rejects an oversized bytes_len", func(r ImageRef) ImageRef { r.BytesLen = MaxImageBytes + 1; return r }, "per-image cap"},
		{"rejects a sha mismatch", func(r ImageRef) ImageRef { r.SHA256 = sum([]byte("other")); return r }, "does not match its sha256"},
		{"rejects a malformed sha", func(r ImageRef) ImageRef { r.SHA256 = "abc"; return r }, "sha256 is missing"},
		{"rejects a missing file", func(r ImageRef) ImageRef { r.Path = "pics/none.png"; return r }, "resolve image"},
		{"rejects a fifo", func(r ImageRef) ImageRef { r.Path = "pics/fifo.png"; return r }, "not a regular file"},
		{"rejects a directory", func(r ImageRef) ImageRef { r.Path = "pics"; return r }, "not a regular file"},
		{"rejects svg", func(r ImageRef) ImageRef { r.MIME = "image/svg+xml"; return r }, "not embeddable"},
		{"rejects text without a type", func(r ImageRef) ImageRef {
			return ImageRef{Path: "notes.txt", BytesLen: 26, SHA256: sum([]byte("hello, not an image at all"))}
		}, "not a known image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			budget := NewImageBudget()
			img, err := EmbedImage(home, tt.ref(good), budget)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if img.DataURL != "" || budget.Used() != 0 {
					t.Fatalf("rejected image still embedded: %+v, used %d", img, budget.Used())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)
			if img.DataURL != want || img.MIME != "image/png" {
				t.Fatalf("got %+v, want data URL %q", img, want)
			}
			if budget.Used() != int64(len(pic)) {
				t.Fatalf("budget used %d, want %d", budget.Used(), len(pic))
			}
		})
	}
}

func TestEmbedImageCaps(t *testing.T) {
	home := t.TempDir()
	pic := tinyPNG(t, 40)
	writeFile(t, filepath.Join(home, "a.png"), pic)
	ref := ImageRef{Path: "a.png", MIME: "image/png", BytesLen: int64(len(pic)), SHA256: sum(pic)}
	n := int64(len(pic))

	t.Run("per-image cap is inclusive", func(t *testing.T) {
		b := &ImageBudget{PerImage: n, Total: 10 * n}
		if _, err := EmbedImage(home, ref, b); err != nil {
			t.Fatal(err)
		}
		b.PerImage = n - 1
		if _, err := EmbedImage(home, ref, b); err == nil || !strings.Contains(err.Error(), "per-image cap") {
			t.Fatalf("err = %v, want per-image cap", err)
		}
	})
	t.Run("cumulative budget stops the third image", func(t *testing.T) {
		b := &ImageBudget{PerImage: n, Total: 2*n + n/2}
		for i := range 2 {
			if _, err := EmbedImage(home, ref, b); err != nil {
				t.Fatalf("image %d: %v", i, err)
			}
		}
		if _, err := EmbedImage(home, ref, b); err == nil || !strings.Contains(err.Error(), "per-parse budget") {
			t.Fatalf("err = %v, want per-parse budget", err)
		}
		if b.Used() != 2*n {
			t.Fatalf("used %d, want %d", b.Used(), 2*n)
		}
	})
	t.Run("rejections do not consume the budget", func(t *testing.T) {
		b := &ImageBudget{PerImage: n, Total: n}
		bad := ref
		bad.SHA256 = sum(nil)
		if _, err := EmbedImage(home, bad, b); err == nil {
			t.Fatal("sha mismatch embedded")
		}
		if _, err := EmbedImage(home, ref, b); err != nil {
			t.Fatalf("budget consumed by a rejected image: %v", err)
		}
	})
	t.Run("default caps", func(t *testing.T) {
		b := NewImageBudget()
		if b.PerImage != 5<<20 || b.Total != 25<<20 {
			t.Fatalf("caps = %d/%d", b.PerImage, b.Total)
		}
		if err := b.Take(5 << 20); err != nil {
			t.Fatal(err)
		}
		if err := b.Take(5<<20 + 1); err == nil {
			t.Fatal("Take over the per-image cap succeeded")
		}
		for range 4 {
			if err := b.Take(5 << 20); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Take(1); err == nil {
			t.Fatal("Take over the per-parse budget succeeded")
		}
	})
}

func TestEmbedImageHomeIsSymlink(t *testing.T) {
	root := t.TempDir()
	pic := tinyPNG(t, 2)
	writeFile(t, filepath.Join(root, "real", "a.png"), pic)
	link := filepath.Join(root, "home")
	if err := os.Symlink(filepath.Join(root, "real"), link); err != nil {
		t.Fatal(err)
	}
	_, err := EmbedImage(link, ImageRef{Path: "a.png", MIME: "image/png", BytesLen: int64(len(pic)), SHA256: sum(pic)}, nil)
	if err != nil {
		t.Fatal(err)
	}
}
