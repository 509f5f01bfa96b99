package diff

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func render(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteByte(byte(l.Kind))
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestStrings(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"empty", "", "", ""},
		{"insert only", "", "a\nb\n", "+a\n+b\n"},
		{"delete only", "a\nb", "", "-a\n-b\n"},
		{"change middle", "a\nb\nc\n", "a\nB\nc\n", " a\n-b\n+B\n c\n"},
		{"insert middle", "a\nc", "a\nb\nc", " a\n+b\n c\n"},
		{"crlf", "a\r\nb\r\n", "a\nb\n", " a\n b\n"},
		{"interleaved", "x\na\ny\nb\nz", "a\nq\nb", "-x\n a\n-y\n+q\n b\n-z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(Strings(tt.old, tt.new))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLinesApply checks that every script rebuilds both sides, including
// past the edit bound where the middle becomes a replace-all.
func TestLinesApply(t *testing.T) {
	var a, b []string
	for i := range 4000 {
		a = append(a, string(rune('a'+i%7)))
		b = append(b, string(rune('a'+i%5)))
	}
	for _, n := range []int{10, 200, 4000} {
		ops := Lines(a[:n], b[:n])
		var gotA, gotB []string
		for _, l := range ops {
			if l.Kind != Insert {
				gotA = append(gotA, l.Text)
			}
			if l.Kind != Delete {
				gotB = append(gotB, l.Text)
			}
		}
		if !cmp.Equal(gotA, a[:n]) || !cmp.Equal(gotB, b[:n]) {
			t.Fatalf("n=%d: script does not rebuild its inputs", n)
		}
	}
}

func TestParsePatch(t *testing.T) {
	codex := `*** Begin Patch
*** Add File: hello.txt
+hi
+there
*** Update File: src/app.py
*** Move to: src/main.py
@@ def f():
 x = 1
-y = 2
+y = 3
+z = 4
*** Delete File: old.txt
*** End Patch`
	unified := `diff --git a/a.go b/a.go
index 1..2 100644
--- a/a.go
+++ b/a.go
@@ -1,3 +1,3 @@
 package a
--- x
+++ y
 end
diff --git a/n.txt b/n.txt
new file mode 100644
--- /dev/null
+++ b/n.txt
@@ -0,0 +1 @@
+new
`
	tests := []struct {
		name  string
		patch string
		want  []string // op path moveto +added -removed
	}{
		{"codex", codex, []string{"add hello.txt  +2 -0", "update src/app.py src/main.py +2 -1", "delete old.txt  +0 -0"}},
		{"unified", unified, []string{"update a.go  +1 -1", "add n.txt  +1 -0"}},
		{"garbage", "hello\nworld", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, fp := range ParsePatch(tt.patch) {
				got = append(got, fp.Op+" "+fp.Path+" "+fp.MoveTo+" +"+strconv.Itoa(fp.Added)+" -"+strconv.Itoa(fp.Removed))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\n*** End Patch")
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
	f.Fuzz(func(t *testing.T, s string) {
		a := ParsePatch(s)
		b := ParsePatch(s)
		if !cmp.Equal(a, b) {
			t.Fatal("parse is not deterministic")
		}
		for _, fp := range a {
			if ad, rm := Count(fp.Lines); ad != fp.Added || rm != fp.Removed {
				t.Fatal("counts disagree with lines")
			}
		}
	})
}

func FuzzStrings(f *testing.F) {
	f.Add("a\nb\nc", "a\nc\nd")
	f.Fuzz(func(t *testing.T, a, b string) {
		var gotA, gotB []string
		for _, l := range Strings(a, b) {
			if l.Kind != Insert {
				gotA = append(gotA, l.Text)
			}
			if l.Kind != Delete {
				gotB = append(gotB, l.Text)
			}
		}
		if !cmp.Equal(gotA, SplitLines(a)) || !cmp.Equal(gotB, SplitLines(b)) {
			t.Fatal("script does not rebuild its inputs")
		}
	})
}
