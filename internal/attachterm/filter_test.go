package attachterm

import "testing"

func TestAltFilter(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"plain", []string{"hello\x1b[31mred"}, "hello\x1b[31mred"},
		{"enter and leave", []string{"a\x1b[?1049hvim\x1b[?1049lb"}, "a\x1b7\x1b[2Jvim\x1b[2J\x1b8b"},
		{"other modes kept", []string{"\x1b[?25l\x1b[?1049;1h"}, "\x1b[?25l\x1b[?1h\x1b7\x1b[2J"},
		{"47 and 1047", []string{"\x1b[?47h\x1b[?1047l"}, "\x1b[2J\x1b[2J"},
		{"split in the middle", []string{"x\x1b[?10", "49hy"}, "x\x1b7\x1b[2Jy"},
		{"split after ESC", []string{"x\x1b", "[?1049ly"}, "x\x1b[2J\x1b8y"},
		{"split after CSI", []string{"x\x1b[", "?1049ly"}, "x\x1b[2J\x1b8y"},
		{"not private", []string{"\x1b[1049h"}, "\x1b[1049h"},
		{"other final", []string{"\x1b[?1049$p"}, "\x1b[?1049$p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Filter
			var got string
			for _, p := range tt.in {
				got += string(f.Filter([]byte(p)))
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
