package pane

import (
	"bytes"
	"testing"
)

func TestRingKeepsTheLastBytes(t *testing.T) {
	var all []byte
	r := newRing(10)
	for i, chunk := range []string{"abc", "defgh", "ijklmnop", "q", "rstuvwxyz0123", "4"} {
		r.Write([]byte(chunk))
		all = append(all, chunk...)
		for n := 0; n <= 12; n++ {
			want := all[max(0, len(all)-min(n, 10)):]
			if got := r.Tail(n); !bytes.Equal(got, want) {
				t.Fatalf("after write %d Tail(%d) = %q, want %q", i, n, got, want)
			}
		}
	}
}
