package termsignal

import (
	"testing"
)

// TestClientFilter checks what an attached client's terminal gets: the
// stream minus the sequences Muster consumes, however it is split.
func TestClientFilter(t *testing.T) {
	const osc, st = "\x1b]", "\x1b\\"
	pass := osc + "0;✳ Claude Code\x07" + // title
		osc + "8;id=1;https://x\x07link" + osc + "8;;\x07" + // hyperlink
		osc + "133;A\x07$ " + osc + "133;D;0\x07" + // prompt marks
		osc + "7;file://h/tmp\x07" + osc + "9;9;\"/tmp\"\x07" + osc + "9;12\x07" + // cwd, other ConEmu commands
		osc + "777;preexec\x07" + osc + "99;i=1:p=?;" + st + // another 777 extension, a kitty query
		osc + "11;?" + st + "\x1b[>0q" + "\a" + // colour query, XTVERSION, a bell
		osc + "2\x07" // an interpreted number without ';'
	consumed := osc + "7501;?\x07" + osc + "7501;state=working:app=claude-code" + st +
		osc + "9;4;3;\x07" + osc + "9;4;0;\x07" + osc + "9;Build finished\x07" +
		osc + "777;notify;Claude Code;needs you\x07" +
		osc + "99;i=8:d=0:p=title;T" + st + osc + "99;i=8:p=body;B" + st +
		"\x1bPtmux;\x1b\x1b]9;4;1;40\x07" + st
	in := "a" + consumed[:40] + consumed[40:] + "b" + pass + "c"
	want := "ab" + pass + "c"
	for _, size := range []int{1, 2, 3, 5, 17, len(in)} {
		f := NewClientFilter()
		var out []byte
		for i := 0; i < len(in); i += size {
			chunk, sigs := f.Feed([]byte(in[i:min(i+size, len(in))]), nil)
			if len(sigs) != 0 {
				t.Fatalf("size %d: the client filter reported %v", size, sigs)
			}
			out = append(out, chunk...)
		}
		out = f.Flush(out)
		if string(out) != want {
			t.Errorf("size %d:\n got %q\nwant %q", size, out, want)
		}
	}
}
