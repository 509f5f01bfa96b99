package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func TestParseRef(t *testing.T) {
	provs := []string{"claude", "codex"}
	tests := []struct {
		name    string
		in      string
		want    Ref
		wantErr string
	}{
		{"bare id", "3f2a", Ref{ID: "3f2a"}, ""},
		{"provider id", "claude:3f2a", Ref{Provider: "claude", ID: "3f2a"}, ""},
		{"provider case", "Codex:abc", Ref{Provider: "codex", ID: "abc"}, ""},
		{"provider path", "claude:/tmp/x.jsonl", Ref{Provider: "claude", Path: "/tmp/x.jsonl"}, ""},
		{"absolute path", "/tmp/x.jsonl", Ref{Path: "/tmp/x.jsonl"}, ""},
		{"relative path", "./x.jsonl", Ref{Path: "./x.jsonl"}, ""},
		{"home path", "~/x.jsonl", Ref{Path: "~/x.jsonl"}, ""},
		{"unknown provider", "gemeni:abc", Ref{}, `unknown provider "gemeni"`},
		{"missing id", "claude:", Ref{}, "no id after the provider"},
		{"empty", "  ", Ref{}, "empty session reference"},
		{"control char", "ab\x1bc", Ref{}, "control"},
		{"space in id", "ab c", Ref{}, "has spaces"},
		{"colon id not a word", "12ab:cd", Ref{ID: "12ab:cd"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRef(tt.in, provs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	outside := t.TempDir()
	a := &testSource{name: "alpha", roots: []string{filepath.Join(root, "a")}}
	b := &testSource{name: "beta", roots: []string{filepath.Join(root, "b")}}
	srcs := []transcript.Source{a, b}
	writeSession(t, filepath.Join(root, "a", "1.sess"), testSession{ID: "abc123", Title: "one", Prompts: 1, Started: t0})
	writeSession(t, filepath.Join(root, "a", "2.sess"), testSession{ID: "abd456", Title: "two", Prompts: 1, Started: t0})
	writeSession(t, filepath.Join(root, "b", "1.sess"), testSession{ID: "abc999", Title: "three", Prompts: 1, Started: t0})
	writeSession(t, filepath.Join(root, "b", "same.sess"), testSession{ID: "zz", Title: "beta zz", Prompts: 1, Started: t0})
	writeSession(t, filepath.Join(root, "a", "same.sess"), testSession{ID: "zz", Title: "alpha zz", Prompts: 1, Started: t0})
	writeSession(t, filepath.Join(root, "b", "multi.sess"),
		testSession{ID: "m1", Title: "multi one", Prompts: 1, Started: t0},
		testSession{ID: "m2", Title: "multi two", Prompts: 1, Started: t0})
	loose := filepath.Join(outside, "loose.sess")
	writeSession(t, loose, testSession{ID: "loose1", Title: "not indexed", Prompts: 1, Started: t0})
	x := openIndex(t, "v1")
	if _, err := x.Refresh(ctx, srcs, transcript.Env{}, RefreshOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		ref       string
		wantTitle string
		wantProv  string
		wantErr   string
		ambiguous []string
	}{
		{"exact id", "abc123", "one", "alpha", "", nil},
		{"unique prefix", "abd", "two", "alpha", "", nil},
		{"ambiguous prefix", "abc", "", "", "ambiguous", []string{"alpha:abc123", "beta:abc999"}},
		{"provider narrows prefix", "beta:abc", "three", "beta", "", nil},
		{"same id two providers", "zz", "", "", "ambiguous", []string{"alpha:zz", "beta:zz"}},
		{"provider picks", "alpha:zz", "alpha zz", "alpha", "", nil},
		{"unknown id", "nope", "", "", "no such session", nil},
		{"indexed path", filepath.Join(root, "a", "2.sess"), "two", "alpha", "", nil},
		{"multi-session path", filepath.Join(root, "b", "multi.sess"), "", "", "ambiguous", []string{"beta:m1", "beta:m2"}},
		{"id inside multi file", "m2", "multi two", "beta", "", nil},
		{"unindexed path", loose, "not indexed", "alpha", "", nil},
		{"unindexed path forced provider", "beta:" + loose, "not indexed", "beta", "", nil},
		{"missing path", filepath.Join(root, "nope.sess"), "", "", "no such file", nil},
		{"directory", root + "/", "", "", "is a directory", nil},
		{"unknown provider", "gamma:abc", "", "", "unknown provider", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := x.Resolve(ctx, tt.ref, srcs, transcript.Env{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) err = %v, want %q", tt.ref, err, tt.wantErr)
				}
				if tt.ambiguous != nil {
					ae, ok := errors.AsType[*AmbiguousError](err)
					if !ok || strings.Join(ae.Candidates, " ") != strings.Join(tt.ambiguous, " ") {
						t.Fatalf("candidates = %v, want %v", err, tt.ambiguous)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.ref, err)
			}
			if r.Session.Title != tt.wantTitle || r.Source.Provider() != tt.wantProv {
				t.Fatalf("Resolve(%q) = %q from %s; want %q from %s", tt.ref, r.Session.Title, r.Source.Provider(), tt.wantTitle, tt.wantProv)
			}
			full, err := Load(ctx, r, transcript.Env{})
			if err != nil {
				t.Fatal(err)
			}
			if full.ID != r.Session.ID || len(full.Items) == 0 {
				t.Fatalf("Load = %s with %d items", full.ID, len(full.Items))
			}
		})
	}
	// A bare file name in the working directory.
	t.Chdir(outside)
	r, err := x.Resolve(ctx, "loose.sess", srcs, transcript.Env{})
	if err != nil || r.Session.ID != "loose1" {
		t.Fatalf("bare file name: %+v %v", r.Session, err)
	}
	// A file no parser recognises.
	junk := filepath.Join(outside, "junk.txt")
	os.WriteFile(junk, []byte("hello"), 0o644)
	if _, err := x.Resolve(ctx, junk, srcs, transcript.Env{}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("junk file: %v", err)
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"abc", "claude:abc", "claude:/x/y.jsonl", "./a", "~", ":", "a:b:c", "\x00"} {
		f.Add(s)
	}
	provs := []string{"claude", "codex", "muse"}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s, provs)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if (r.ID == "") == (r.Path == "") {
			t.Fatalf("ParseRef(%q) = %+v: exactly one of ID and Path must be set", s, r)
		}
		// Printing the reference back parses to the same thing.
		back := r.ID + r.Path
		if r.Provider != "" {
			back = r.Provider + ":" + back
		}
		r2, err := ParseRef(back, provs)
		if err != nil || r2 != r {
			t.Fatalf("round trip %q → %+v → %q → %+v, %v", s, r, back, r2, err)
		}
	})
}
