package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Image caps from seed 002: one image may embed at most MaxImageBytes, and
// one parse at most MaxImageBytesPerParse in total.
const (
	MaxImageBytes         = 5 << 20
	MaxImageBytesPerParse = 25 << 20
)

// ImageRef points at an image file a transcript attached by reference (Muse
// `file_ref` parts).
type ImageRef struct {
	// Path is relative to the user's home directory.
	Path string
	// MIME is the declared type; empty means sniff the content.
	MIME string
	// BytesLen is the declared size; it is required (<= 0 is rejected) and
	// must equal the size on disk.
	BytesLen int64
	// SHA256 is the hex digest the file must match.
	SHA256 string
}

// ImageBudget bounds what one parse embeds. Create one per parse with
// NewImageBudget and pass it to every EmbedImage/Take call of that parse.
type ImageBudget struct {
	PerImage int64
	Total    int64
	used     int64
}

// NewImageBudget returns the seed's caps: 5 MiB per image, 25 MiB per parse.
func NewImageBudget() *ImageBudget {
	return &ImageBudget{PerImage: MaxImageBytes, Total: MaxImageBytesPerParse}
}

// Used is how many image bytes the parse has embedded so far.
func (b *ImageBudget) Used() int64 { return b.used }

// check reports whether n more bytes fit, without taking them.
func (b *ImageBudget) check(n int64) error {
	if n > b.PerImage {
		return fmt.Errorf("image of %d bytes exceeds the %d-byte per-image cap", n, b.PerImage)
	}
	if b.used+n > b.Total {
		return fmt.Errorf("image of %d bytes exceeds the remaining per-parse budget (%d of %d bytes used)", n, b.used, b.Total)
	}
	return nil
}

// Take reserves n bytes for an image that is already in memory (inline
// base64 attachments), failing when a cap would be exceeded.
func (b *ImageBudget) Take(n int64) error {
	if n < 0 {
		return errors.New("negative image size")
	}
	if err := b.check(n); err != nil {
		return err
	}
	b.used += n
	return nil
}

// imageMIMEs are the types a replay may show inline. SVG is left out on
// purpose: it can carry script.
var imageMIMEs = map[string]bool{
	"image/png":  true,
	"image/jpeg": true,
	"image/gif":  true,
	"image/webp": true,
	"image/bmp":  true,
	"image/avif": true,
}

// ImageMIME normalises a declared image type ("image/PNG; x=y" →
// "image/png") and reports whether a replay may embed it.
func ImageMIME(declared string) (string, bool) {
	mt, _, err := mime.ParseMediaType(declared)
	if err != nil {
		return "", false
	}
	if mt == "image/jpg" {
		mt = "image/jpeg"
	}
	return mt, imageMIMEs[mt]
}

// DataURL encodes data as a base64 data URL.
func DataURL(mimeType string, data []byte) string {
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mimeType) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mimeType)
	b.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(data)
	enc.Close()
	return b.String()
}

// EmbedImage reads the image ref points at and returns it as a data URL,
// following seed 002: the path is relative to home, and the file is read
// only when its canonical target (symlinks resolved) stays inside home, it
// has no second hard link (st_nlink > 1 is refused: a link can name a
// file outside home), its size equals the required ref.BytesLen (checked before reading), and the
// bytes match ref.SHA256. The read is bounded by BytesLen+1 and done on a
// descriptor opened without following a final symlink and checked to be the
// same file that was inspected, so a file swapped in after the checks is
// never read. Caps come from budget (NewImageBudget when nil); only an
// embedded image consumes it. Every rejection is an error; nothing panics.
func EmbedImage(home string, ref ImageRef, budget *ImageBudget) (Image, error) {
	if budget == nil {
		budget = NewImageBudget()
	}
	if home == "" {
		return Image{}, errors.New("no home directory to resolve the image path against")
	}
	rel := ref.Path
	switch {
	case rel == "":
		return Image{}, errors.New("image path is empty")
	case strings.IndexByte(rel, 0) >= 0:
		return Image{}, errors.New("image path contains a NUL byte")
	case filepath.IsAbs(rel):
		return Image{}, fmt.Errorf("image path %q is absolute; it must be relative to home", rel)
	}
	rel = filepath.Clean(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return Image{}, fmt.Errorf("image path %q escapes the home directory", ref.Path)
	}
	if ref.BytesLen <= 0 {
		return Image{}, errors.New("image bytes_len is missing or not positive")
	}
	if err := budget.check(ref.BytesLen); err != nil {
		return Image{}, err
	}
	want, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(ref.SHA256)), "sha256:"))
	if err != nil || len(want) != sha256.Size {
		return Image{}, errors.New("image sha256 is missing or not a hex SHA-256 digest")
	}
	mimeType := ""
	if ref.MIME != "" {
		mt, ok := ImageMIME(ref.MIME)
		if !ok {
			return Image{}, fmt.Errorf("image type %q is not embeddable", ref.MIME)
		}
		mimeType = mt
	}

	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		return Image{}, fmt.Errorf("resolve home: %w", err)
	}
	realHome, err = filepath.Abs(realHome)
	if err != nil {
		return Image{}, fmt.Errorf("resolve home: %w", err)
	}
	target, err := filepath.EvalSymlinks(filepath.Join(realHome, rel))
	if err != nil {
		return Image{}, fmt.Errorf("resolve image: %w", err)
	}
	if !within(realHome, target) {
		return Image{}, fmt.Errorf("image path %q resolves outside the home directory", ref.Path)
	}
	before, err := os.Lstat(target)
	if err != nil {
		return Image{}, fmt.Errorf("stat image: %w", err)
	}
	if !before.Mode().IsRegular() {
		return Image{}, fmt.Errorf("image %q is not a regular file", ref.Path)
	}
	if before.Size() != ref.BytesLen {
		return Image{}, fmt.Errorf("image %q is %d bytes on disk, bytes_len says %d", ref.Path, before.Size(), ref.BytesLen)
	}

	f, err := OpenFile(target)
	if err != nil {
		return Image{}, fmt.Errorf("open image: %w", err)
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return Image{}, fmt.Errorf("stat image: %w", err)
	}
	if !os.SameFile(before, after) {
		return Image{}, fmt.Errorf("image %q changed while it was being checked", ref.Path)
	}
	// A hard link inside home can name a file that lives outside it, and
	// nothing on disk says which name is the original: refuse any file
	// with a second name. Checked on the open descriptor, so a link made
	// after the path checks is still seen.
	switch n, ok := linkCount(after); {
	case !ok:
		return Image{}, fmt.Errorf("image %q: cannot count its hard links", ref.Path)
	case n > 1:
		return Image{}, fmt.Errorf("image %q has %d hard links; a file with more than one name is not embedded", ref.Path, n)
	}
	if after.Size() != ref.BytesLen {
		return Image{}, fmt.Errorf("image %q is %d bytes on disk, bytes_len says %d", ref.Path, after.Size(), ref.BytesLen)
	}
	data := make([]byte, 0, ref.BytesLen)
	buf := bytes.NewBuffer(data)
	if _, err := io.Copy(buf, io.LimitReader(f, ref.BytesLen+1)); err != nil {
		return Image{}, fmt.Errorf("read image: %w", err)
	}
	data = buf.Bytes()
	if int64(len(data)) != ref.BytesLen {
		return Image{}, fmt.Errorf("image %q changed size while it was read", ref.Path)
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], want) {
		return Image{}, fmt.Errorf("image %q does not match its sha256", ref.Path)
	}
	if mimeType == "" {
		mt, ok := ImageMIME(http.DetectContentType(data))
		if !ok {
			return Image{}, fmt.Errorf("image %q has no declared type and is not a known image", ref.Path)
		}
		mimeType = mt
	}
	budget.used += ref.BytesLen
	return Image{MIME: mimeType, DataURL: DataURL(mimeType, data), Path: ref.Path}, nil
}

// within reports whether path is dir or below it; both are clean absolute
// paths.
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}
