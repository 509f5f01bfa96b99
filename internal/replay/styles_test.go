package replay

import (
	"bytes"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"
)

// TestCodeStylesAreChromas: the copied style files are chroma's github and
// github-dark styles as go.mod pins them (after a chroma upgrade, copy
// chroma's styles/github*.xml into chroma-styles/).
func TestCodeStylesAreChromas(t *testing.T) {
	st := codeStyles()
	for _, c := range []struct {
		name string
		ours *chroma.Style
	}{{"github", st.light}, {"github-dark", st.dark}} {
		theirs := styles.Get(c.name)
		if theirs.Name != c.name {
			t.Fatalf("chroma has no style %q", c.name)
		}
		var a, b bytes.Buffer
		if err := codeFormatter.WriteCSS(&a, c.ours); err != nil {
			t.Fatal(err)
		}
		if err := codeFormatter.WriteCSS(&b, theirs); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("chroma-styles/%s.xml differs from chroma's style:\nours:   %.300s\nchroma: %.300s", c.name, a.String(), b.String())
		}
	}
}
