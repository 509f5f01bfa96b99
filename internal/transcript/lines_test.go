package transcript

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestLineScanner(t *testing.T) {
	long := strings.Repeat("x", 300<<10) // longer than the read buffer
	tests := []struct {
		name  string
		in    string
		max   int
		want  []string
		long  []int // line numbers reported TooLong
		lines int
	}{
		{name: "empty", in: "", want: nil},
		{name: "no final newline", in: "a\nb", want: []string{"a", "b"}},
		{name: "crlf and blank lines", in: "a\r\n\r\nb\n", want: []string{"a", "", "b"}},
		{name: "line longer than the buffer", in: "a\n" + long + "\nb\n", want: []string{"a", long, "b"}},
		{name: "too long is dropped", in: "a\n" + long + "\nb", max: 1000, want: []string{"a", "", "b"}, long: []int{2}},
		{name: "too long last line", in: "a\n" + long, max: 1000, want: []string{"a", ""}, long: []int{2}},
		{name: "exact max", in: "abcd\nabcde\n", max: 4, want: []string{"abcd", ""}, long: []int{2}},
	}
	readers := map[string]func(string) io.Reader{
		// Unknown size: the full buffer.
		"stream": func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		// Known size: a buffer fitted to it.
		"sized": func(s string) io.Reader { return strings.NewReader(s) },
	}
	for _, tt := range tests {
		for kind, reader := range readers {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				s := NewLineScanner(reader(tt.in), tt.max)
				var got []string
				var long []int
				for s.Scan() {
					got = append(got, string(s.Bytes()))
					if s.TooLong() {
						long = append(long, s.Line())
					}
					if s.Line() != len(got) {
						t.Fatalf("Line() = %d after %d lines", s.Line(), len(got))
					}
				}
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("lines (-want +got):\n%.500s", diff)
				}
				if diff := cmp.Diff(tt.long, long); diff != "" {
					t.Errorf("too long (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestLineScannerFileGrows reads a file that an agent appends a line longer
// than the fitted buffer to after it was opened.
func TestLineScannerFileGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewLineScanner(f, 0)
	if got := s.r.Size(); got >= maxBuffer {
		t.Fatalf("buffer for a 2-byte file is %d bytes", got)
	}
	long := strings.Repeat("y", 100<<10)
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString(long + "\nb\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var got []string
	for s.Scan() {
		got = append(got, string(s.Bytes()))
	}
	if diff := cmp.Diff([]string{"a", long, "b"}, got); diff != "" || s.Err() != nil {
		t.Fatalf("lines (-want +got):\n%.300s %v", diff, s.Err())
	}
}

func TestLineScannerReadError(t *testing.T) {
	s := NewLineScanner(iotest.TimeoutReader(strings.NewReader(strings.Repeat("a", 300<<10))), 0)
	for s.Scan() {
	}
	if s.Err() == nil {
		t.Fatal("read error not reported")
	}
}

func TestHeadlineAndClip(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"first non-blank line", "\n\n  fix   the\tbug \nmore", "fix the bug"},
		{"empty", " \n\t", ""},
		{"clipped", strings.Repeat("é", 150), strings.Repeat("é", 99) + "…"},
		{"exact", strings.Repeat("a", 100), strings.Repeat("a", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Headline(tt.in); got != tt.want {
				t.Errorf("Headline = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Clip("  abcdef ", 3); got != "ab…" {
		t.Errorf("Clip = %q", got)
	}
}

func TestRenameKeys(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"renames", `{"path":"a","old_text":"x","other":1}`, `{"file_path":"a","old_string":"x","other":1}`},
		{"keeps an existing target", `{"path":"a","file_path":"b"}`, `{"path":"a","file_path":"b"}`},
		{"not an object", `["path"]`, `["path"]`},
		{"invalid", `{"path":`, ``},
		{"a control character in a string", "{\"path\":\"a\x00\"}", ``},
		{"nothing to rename", `{"x":1}`, `{"x":1}`},
	}
	renames := map[string]string{"path": "file_path", "old_text": "old_string"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(RenameKeys([]byte(tt.in), renames)); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
