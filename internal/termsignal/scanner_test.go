package termsignal

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scanChunks feeds chunks to a new Scanner, then flushes it, and returns the
// whole filtered output and copies of all the signals.
func scanChunks(chunks [][]byte) ([]byte, []Signal) {
	s := New()
	var out []byte
	var all []Signal
	for _, c := range chunks {
		var sigs []Signal
		out, sigs = s.Feed(c, out)
		all = append(all, sigs...)
	}
	out = s.Flush(out)
	return out, all
}

func scan(in []byte) ([]byte, []Signal) { return scanChunks([][]byte{in}) }

// checkSplits fails unless in gives the same output and signals when fed
// byte by byte, and split in two at every boundary, as when fed whole.
func checkSplits(t *testing.T, in []byte) {
	t.Helper()
	wantOut, wantSigs := scan(in)
	check := func(how string, chunks [][]byte) bool {
		t.Helper()
		out, sigs := scanChunks(chunks)
		if !bytes.Equal(out, wantOut) {
			t.Errorf("%s: output %q, fed whole %q", how, out, wantOut)
			return false
		}
		if diff := cmp.Diff(wantSigs, sigs); diff != "" {
			t.Errorf("%s: signals differ (-whole +split):\n%s", how, diff)
			return false
		}
		return true
	}
	bytewise := make([][]byte, len(in))
	for i := range in {
		bytewise[i] = in[i : i+1]
	}
	if !check("byte by byte", bytewise) {
		return
	}
	for i := 1; i < len(in); i++ {
		if !check(fmt.Sprintf("split at %d", i), [][]byte{in[:i], in[i:]}) {
			return
		}
	}
}

func sigStrings(sigs []Signal) []string {
	var ss []string
	for _, s := range sigs {
		ss = append(ss, s.String())
	}
	return ss
}

const (
	st    = "\x1b\\"
	osc   = "\x1b]"
	tmuxW = "\x1bPtmux;"
)

func TestScanner(t *testing.T) {
	long := strings.Repeat("a", MaxOSC)
	tests := []struct {
		name    string
		in      string
		wantOut string
		want    []string
	}{
		{"plain text", "hello\r\nworld", "hello\r\nworld", nil},
		{"empty", "", "", nil},
		{"bell", "a\x07b\x07\x07", "a\x07b\x07\x07", []string{"bell", "bell", "bell"}},
		{"utf-8 with 0x9c bytes passes", "✳ 日本語 Москва", "✳ 日本語 Москва", nil},
		{"lone 0x9c is not ST", "a\x9cb", "a\x9cb", nil},

		// Titles.
		{"claude title", osc + "0;✳ Claude Code\x07rest", "rest", []string{`title[0] "✳ Claude Code"`}},
		{"title with ST", osc + "0;✳ Claude Code" + st, "", []string{`title[0] "✳ Claude Code"`}},
		{"cjk title", osc + "2;日本語のテスト\x07", "", []string{`title[2] "日本語のテスト"`}},
		{"cyrillic title", osc + "2;Москва" + st, "", []string{`title[2] "Москва"`}},
		{"semicolons in title", osc + "2;a;b title;" + st, "", []string{`title[2] "a;b title;"`}},
		{"empty title", osc + "0;\x07", "", []string{`title[0] ""`}},
		{"icon name", osc + "1;icon\x07", "", []string{`title[1] "icon"`}},
		{"codex spinner", osc + "0;⠋ repo-codex\x07" + osc + "0;⠙ repo-codex\x07", "",
			[]string{`title[0] "⠋ repo-codex"`, `title[0] "⠙ repo-codex"`}},
		{"bell after title", osc + "0;t\x07\x07", "\x07", []string{`title[0] "t"`, "bell"}},
		{"title without semicolon", osc + "0\x07" + osc + "2" + st, "", nil},
		{"leading zeros", osc + "00;z\x07", "", []string{`title[0] "z"`}},

		// OSC 9;4.
		{"progress remove", osc + "9;4;0;\x07", "", []string{"progress[9] remove"}},
		{"progress remove bare", osc + "9;4;0\x07", "", []string{"progress[9] remove"}},
		{"progress normal", osc + "9;4;1;42\x07", "", []string{"progress[9] normal 42%"}},
		{"progress clamped", osc + "9;4;1;250" + st, "", []string{"progress[9] normal 100%"}},
		{"progress huge", osc + "9;4;1;99999999999999999999999\x07", "", []string{"progress[9] normal 100%"}},
		{"progress normal no value", osc + "9;4;1\x07", "", []string{"progress[9] normal"}},
		{"progress normal bad value", osc + "9;4;1;x\x07", "", []string{"progress[9] normal"}},
		{"progress error", osc + "9;4;2\x07", "", []string{"progress[9] error"}},
		{"progress error value", osc + "9;4;2;10\x07", "", []string{"progress[9] error 10%"}},
		{"progress indeterminate", osc + "9;4;3;\x07", "", []string{"progress[9] indeterminate"}},
		{"progress indeterminate ignores value", osc + "9;4;3;50\x07", "", []string{"progress[9] indeterminate"}},
		{"progress paused", osc + "9;4;4;7" + st, "", []string{"progress[9] paused 7%"}},
		{"progress bad state", osc + "9;4;5\x07" + osc + "9;4;\x07" + osc + "9;4;10\x07", "", nil},

		// OSC 9: notification or ConEmu command.
		{"osc 9 notification", osc + "9;Claude needs your permission\x07", "",
			[]string{`notify[9] "" "Claude needs your permission"`}},
		{"osc 9 notification with semicolons", osc + "9;build done; 3 warnings\x07", "",
			[]string{`notify[9] "" "build done; 3 warnings"`}},
		{"osc 9 starting with digits", osc + "9;12abc\x07", "", []string{`notify[9] "" "12abc"`}},
		{"conemu command", osc + "9;12\x07" + osc + "9;1;500\x07" + osc + "9;5\x07", "", nil},
		{"conemu cwd", osc + "9;9;/home/u\x07", "", []string{`cwd[9] host="" "/home/u"`}},
		{"conemu cwd quoted", osc + `9;9;"C:\Users\u"` + st, "", []string{`cwd[9] host="" "C:\\Users\\u"`}},
		{"osc 9 empty", osc + "9;\x07" + osc + "9;9;\x07", "", nil},

		// OSC 777.
		{"777 notify", osc + "777;notify;Claude Code;Claude needs your permission\x07", "",
			[]string{`notify[777] "Claude Code" "Claude needs your permission"`}},
		{"777 body with semicolons", osc + "777;notify;T;a;b;c" + st, "", []string{`notify[777] "T" "a;b;c"`}},
		{"777 title only", osc + "777;notify;T\x07", "", []string{`notify[777] "T" ""`}},
		{"777 other extensions", osc + "777;precmd\x07" + osc + "777;preexec;x\x07", "", nil},

		// kitty OSC 99.
		{"99 simple", osc + "99;;Hello world" + st, "", []string{`notify[99] id="0" "Hello world" ""`}},
		{"99 chunked like claude", osc + "99;i=8276:d=0:p=title;Claude Code" + st +
			osc + "99;i=8276:p=body;Claude needs your permission" + st +
			osc + "99;i=8276:d=1:a=focus;" + st, "",
			[]string{`notify[99] id="8276" "Claude Code" "Claude needs your permission"`}},
		{"99 chunks joined", osc + "99;i=a:d=0;Hel" + st + osc + "99;i=a:d=0;lo" + st +
			osc + "99;i=a:d=0:p=body;wor" + st + osc + "99;i=a:p=body;ld" + st, "",
			[]string{`notify[99] id="a" "Hello" "world"`}},
		{"99 ids interleaved", osc + "99;i=1:d=0;One" + st + osc + "99;i=2:d=0;Two" + st +
			osc + "99;i=1;!" + st + osc + "99;i=2;?" + st, "",
			[]string{`notify[99] id="1" "One!" ""`, `notify[99] id="2" "Two?" ""`}},
		{"99 base64", osc + "99;i=1:e=1;SGVsbG8=" + st, "", []string{`notify[99] id="1" "Hello" ""`}},
		{"99 base64 chunks unpadded", osc + "99;i=2:d=0:e=1;SGk" + st + osc + "99;i=2:p=body:e=1;VGhlcmU=" + st, "",
			[]string{`notify[99] id="2" "Hi" "There"`}},
		{"99 bad base64 ignored", osc + "99;i=3:e=1:d=0;!!!" + st + osc + "99;i=3:p=body;b" + st, "",
			[]string{`notify[99] id="3" "" "b"`}},
		{"99 close", osc + "99;i=4:d=0;T" + st + osc + "99;i=4:p=close;" + st + osc + "99;i=4:p=body;B" + st, "",
			[]string{`notify[99] id="4" "" "B"`}},
		{"99 query passes", osc + "99;i=opentui-notifications:p=?;" + st + "x",
			osc + "99;i=opentui-notifications:p=?;" + st + "x", nil},
		{"99 query with bel passes", osc + "99;p=?;\x07", osc + "99;p=?;\x07", nil},
		{"99 no payload separator", osc + "99;i=5\x07", "", nil},

		// OSC 133 and 633.
		{"133 marks", osc + "133;A\x07$ " + osc + "133;B\x07ls\r\n" + osc + "133;C\x07out\r\n" + osc + "133;D;0\x07",
			"$ ls\r\nout\r\n", []string{"prompt[133] A", "prompt[133] B", "prompt[133] C", `prompt[133] D exit=0 params="0"`}},
		{"133 D without exit", osc + "133;D" + st, "", []string{"prompt[133] D exit=-1"}},
		{"133 D exit 1", osc + "133;D;1\x07", "", []string{`prompt[133] D exit=1 params="1"`}},
		{"133 D masked", osc + "133;D;256\x07" + osc + "133;D;-1\x07" + osc + "133;D;99999999999999999999999\x07", "",
			[]string{`prompt[133] D exit=0 params="256"`, `prompt[133] D exit=255 params="-1"`,
				`prompt[133] D exit=255 params="99999999999999999999999"`}},
		{"133 D err takes precedence", osc + "133;D;0;err=2\x07", "",
			[]string{`prompt[133] D exit=2 err="2" params="0;err=2"`}},
		{"133 D err text", osc + "133;D;1;err=CMD_FAILED\x07" + osc + "133;D;err=x;aid=3\x07", "",
			[]string{`prompt[133] D exit=1 err="CMD_FAILED" params="1;err=CMD_FAILED"`,
				`prompt[133] D exit=-1 err="x" params="err=x;aid=3"`}},
		{"133 A options", osc + "133;A;aid=7;k=i\x07", "", []string{`prompt[133] A params="aid=7;k=i"`}},
		{"633 D", osc + "633;D;130\x07" + osc + "633;E;ls -l\x07" + osc + "633;P;Cwd=/x\x07", "",
			[]string{`prompt[633] D exit=130 params="130"`}},
		{"133 other marks", osc + "133;P;k=i\x07" + osc + "133;AB\x07" + osc + "133;\x07", "", nil},

		// OSC 7501.
		{"7501 working", osc + "7501;state=working:app=codex" + st, "",
			[]string{`agent-status[7501] "working" params="state=working:app=codex"`}},
		{"7501 blocked", osc + "7501;state=blocked:app=codex:kind=permission" + st, "",
			[]string{`agent-status[7501] "blocked" params="state=blocked:app=codex:kind=permission"`}},
		{"7501 clear", osc + "7501;state=clear" + st, "", []string{`agent-status[7501] "clear" params="state=clear"`}},
		{"7501 query is reported", osc + "7501;?\x07", "", []string{`status-query[7501] "7501;?"`}},
		{"7501 query st is reported", osc + "7501;?" + st, "", []string{`status-query[7501] "7501;?"`}},
		{"7501 empty", osc + "7501;\x07", "", nil},

		// OSC 7.
		{"osc 7", osc + "7;file://host/home/u/my%20dir%zz\x07", "", []string{`cwd[7] host="host" "/home/u/my dir%zz"`}},
		{"osc 7 hex cases", osc + "7;file://h/%e6%97%A5%2F\x07", "", []string{`cwd[7] host="h" "/日/"`}},
		{"osc 7 no host", osc + "7;file:///tmp" + st, "", []string{`cwd[7] host="" "/tmp"`}},
		{"osc 7 kitty", osc + "7;kitty-shell-cwd://h/a%20b\x07", "", []string{`cwd[7] host="h" "/a%20b"`}},
		{"osc 7 bare path", osc + "7;/srv\x07", "", []string{`cwd[7] host="" "/srv"`}},
		{"osc 7 other", osc + "7;http://x/y\x07" + osc + "7;file://host\x07", "", nil},

		// Passed through byte for byte.
		{"osc 8 hyperlink", osc + "8;id=a;https://x\x07text" + osc + "8;;\x07", osc + "8;id=a;https://x\x07text" + osc + "8;;\x07", nil},
		{"osc 11 query", osc + "11;?" + st, osc + "11;?" + st, nil},
		{"osc 10 query bel", osc + "10;?\x07", osc + "10;?\x07", nil},
		{"osc 112 no semicolon", osc + "112\x07", osc + "112\x07", nil},
		{"osc 52 long", osc + "52;c;" + long + long + "\x07", osc + "52;c;" + long + long + "\x07", nil},
		{"osc non-numeric", osc + "Lx\x07", osc + "Lx\x07", nil},
		{"osc number too long", osc + "1234567;x\x07", osc + "1234567;x\x07", nil},
		{"osc 9c in passthrough", osc + "8;;https://x/日本\x07", osc + "8;;https://x/日本\x07", nil},
		{"csi", "\x1b[38;5;174m▐\x1b[0m", "\x1b[38;5;174m▐\x1b[0m", nil},
		{"dcs", "\x1bP+q4d73" + st, "\x1bP+q4d73" + st, nil},
		{"dcs like tmux", "\x1bPtmu" + st + "\x1bPtmuxx" + st, "\x1bPtmu" + st + "\x1bPtmuxx" + st, nil},
		{"dcs can aborts", "\x1bPq\x18x\x07", "\x1bPq\x18x\x07", []string{"bell"}},
		{"dcs bel is data", "\x1bPq\x07" + st, "\x1bPq\x07" + st, nil},
		{"apc bel is data", "\x1b_Ga=q;\x07" + st + "\x07", "\x1b_Ga=q;\x07" + st + "\x07", []string{"bell"}},
		{"lone st", st, st, nil},
		{"esc esc", "\x1b\x1b[1m", "\x1b\x1b[1m", nil},
		{"esc esc osc", "\x1b" + osc + "0;t\x07", "\x1b", []string{`title[0] "t"`}},
		{"trailing esc flushed", "ab\x1b", "ab\x1b", nil},
		{"trailing osc prefix flushed", "ab" + osc + "11", "ab" + osc + "11", nil},
		{"trailing dcs prefix flushed", "ab\x1bPtm", "ab\x1bPtm", nil},
		{"unterminated title dropped", "ab" + osc + "0;abc", "ab", nil},

		// Aborts.
		{"can aborts", osc + "0;abc\x18def", "def", nil},
		{"sub aborts", osc + "9;4;3\x1adef", "def", nil},
		{"esc aborts", osc + "0;abc\x1b[1mX", "\x1b[1mX", nil},
		{"esc esc aborts", osc + "0;abc\x1b" + osc + "0;new\x07", "\x1b", []string{`title[0] "new"`}},
		{"can passes in passthrough", osc + "8;;abc\x18def", osc + "8;;abc\x18def", nil},
		{"esc aborts passthrough", osc + "8;;ab\x1b[1m", osc + "8;;ab\x1b[1m", nil},
		{"can aborts number", osc + "0\x18x" + osc + "12\x18y", "x" + osc + "12\x18y", nil},

		// Size cap.
		{"largest title", osc + "0;" + long[:MaxOSC-2] + "\x07", "", []string{`title[0] "` + long[:MaxOSC-2] + `"`}},
		{"oversize title dropped", osc + "0;" + long[:MaxOSC-1] + "\x07tail", "tail", nil},
		{"oversize notify dropped", osc + "9;" + long + long + st + "tail", "tail", nil},
		{"oversize then aborted", osc + "9;" + long + long + "\x1b[mX", "\x1b[mX", nil},

		// tmux passthrough.
		{"tmux progress", tmuxW + "\x1b\x1b]9;4;3;\x07" + st + "x", "x", []string{"progress[9] indeterminate"}},
		{"tmux 777", tmuxW + "\x1b\x1b]777;notify;Claude Code;Claude needs your permission\x07" + st, "",
			[]string{`notify[777] "Claude Code" "Claude needs your permission"`}},
		{"tmux kitty st doubled", tmuxW + "\x1b\x1b]99;i=8276:d=0:p=title;Claude Code\x1b\x1b\\" + st +
			tmuxW + "\x1b\x1b]99;i=8276:p=body;Claude needs your permission\x1b\x1b\\" + st, "",
			[]string{`notify[99] id="8276" "Claude Code" "Claude needs your permission"`}},
		{"tmux query unwrapped", tmuxW + "\x1b\x1b]11;?\x07" + st, osc + "11;?\x07", nil},
		{"tmux dcs and csi unwrapped", tmuxW + "\x1b\x1bP+q4d73\x1b\x1b\\\x1b\x1b[?1016$p" + st,
			"\x1bP+q4d73" + st + "\x1b[?1016$p", nil},
		{"tmux 7501 query unwrapped", tmuxW + "\x1b\x1b]7501;?\x07" + st, "", []string{`status-query[7501] "7501;?"`}},
		{"tmux nested", tmuxW + "\x1b\x1bPtmux;\x1b\x1b\x1b\x1b]0;deep\x07\x1b\x1b\\" + st + "z", "z",
			[]string{`title[0] "deep"`}},
		{"tmux bell", tmuxW + "\x07" + st, "\x07", []string{"bell"}},
		{"tmux plain text", tmuxW + "hi ✳" + st, "hi ✳", nil},
		{"tmux broken by esc", tmuxW + "\x1b\x1b]0;t\x1b[31mX", "\x1b[31mX", nil},
		{"tmux can", tmuxW + "\x1b\x1b]0;t\x18after", "after", nil},
		{"tmux unterminated", tmuxW + "\x1b\x1b]9;4;1;5\x07abc", "abc", []string{"progress[9] normal 5%"}},
		// The next wrapper's ESC P aborts an OSC left open by the last one.
		{"tmux osc split across wrappers", tmuxW + "\x1b\x1b]0;ab" + st + tmuxW + "cd\x07" + st, "cd\x07",
			[]string{"bell"}},
		{"tmux osc ended outside wrapper", tmuxW + "\x1b\x1b]0;ab" + st + "cd\x07", "",
			[]string{`title[0] "abcd"`}},
		{"tmux empty", tmuxW + st + "x", "x", nil},
		{"tmux too deep", tmuxW + "\x1b\x1bPtmux;\x1b\x1b\x1b\x1bPtmux;" + strings.Repeat("\x1b", 8) + "Ptmux;" +
			strings.Repeat("\x1b", 16) + "Ptmux;x",
			"\x1bPtmux;x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sigs := scan([]byte(tt.in))
			if !bytes.Equal(out, []byte(tt.wantOut)) {
				t.Errorf("output:\n got %q\nwant %q", out, tt.wantOut)
			}
			if diff := cmp.Diff(tt.want, sigStrings(sigs)); diff != "" {
				t.Errorf("signals (-want +got):\n%s", diff)
			}
			if len(tt.in) < 4096 {
				checkSplits(t, []byte(tt.in))
			}
		})
	}
}

func TestSignalFields(t *testing.T) {
	_, sigs := scan([]byte(osc + "7501;state=blocked:app=codex:kind=permission" + st +
		osc + "133;A;aid=7;k=i\x07" + osc + "9;4;1;42\x07" + "\x07"))
	if len(sigs) != 4 {
		t.Fatalf("got %d signals, want 4: %v", len(sigs), sigs)
	}
	status, prompt, progress, bell := sigs[0], sigs[1], sigs[2], sigs[3]
	if got := status.Param("kind"); got != "permission" {
		t.Errorf("Param(kind) = %q, want permission", got)
	}
	if got := status.Param("nope"); got != "" {
		t.Errorf("Param(nope) = %q, want empty", got)
	}
	if status.Raw != "7501;state=blocked:app=codex:kind=permission" {
		t.Errorf("Raw = %q", status.Raw)
	}
	if got := prompt.Param("aid"); got != "7" {
		t.Errorf("133 Param(aid) = %q, want 7", got)
	}
	if progress.Raw != "9;4;1;42" || progress.Progress != ProgressNormal || progress.Percent != 42 {
		t.Errorf("progress = %+v", progress)
	}
	if bell.Kind != KindBell || bell.OSC != -1 || bell.Raw != "" {
		t.Errorf("bell = %+v", bell)
	}
}

func TestTitleState(t *testing.T) {
	s := New()
	s.Feed([]byte(osc+"0;✳ Claude Code\x07"), nil)
	if got := s.Title(); got != "✳ Claude Code" {
		t.Errorf("Title() = %q after OSC 0", got)
	}
	s.Feed([]byte(osc+"1;icon only\x07"), nil)
	if got := s.Title(); got != "✳ Claude Code" {
		t.Errorf("Title() = %q after OSC 1, want it unchanged", got)
	}
	s.Feed([]byte(tmuxW+"\x1b\x1b]2;wrapped\x07"+st), nil)
	if got := s.Title(); got != "wrapped" {
		t.Errorf("Title() = %q after wrapped OSC 2", got)
	}
	s.Feed([]byte(osc+"2;"), nil)
	s.Feed([]byte("split;title"+st), nil)
	if got := s.Title(); got != "split;title" {
		t.Errorf("Title() = %q after split OSC 2", got)
	}
}

func TestFeedReusesBuffers(t *testing.T) {
	s := New()
	buf := make([]byte, 0, 64)
	out, sigs := s.Feed([]byte("a\x07"), buf)
	if &out[0] != &buf[:1][0] {
		t.Error("Feed did not append to out")
	}
	if len(sigs) != 1 {
		t.Fatalf("got %d signals, want 1", len(sigs))
	}
	out, sigs = s.Feed([]byte("b"), out[:0])
	if string(out) != "b" || len(sigs) != 0 {
		t.Errorf("second Feed = %q, %v", out, sigs)
	}
	// Held-back bytes come out on a later Feed.
	out, _ = s.Feed([]byte("x\x1b]1"), nil)
	if string(out) != "x" {
		t.Errorf("Feed held nothing back: %q", out)
	}
	out, _ = s.Feed([]byte("1;?\x07"), nil)
	if string(out) != "\x1b]11;?\x07" {
		t.Errorf("held-back bytes = %q", out)
	}
}

func TestKittyBounds(t *testing.T) {
	t.Run("per id cap", func(t *testing.T) {
		chunk := osc + "99;i=big:d=0;" + strings.Repeat("✳", 1000) + st // 3000 bytes
		in := strings.Repeat(chunk, 20) + osc + "99;i=big:p=body;tail" + st
		_, sigs := scan([]byte(in))
		if len(sigs) != 1 {
			t.Fatalf("got %d signals, want 1", len(sigs))
		}
		n := len(sigs[0].Title) + len(sigs[0].Body)
		if n > maxNoteBytes || n < maxNoteBytes-4 {
			t.Errorf("title+body = %d bytes, want about %d", n, maxNoteBytes)
		}
		if !strings.HasSuffix(sigs[0].Title, "✳") {
			t.Errorf("title ends inside a character: %q", sigs[0].Title[len(sigs[0].Title)-4:])
		}
	})
	t.Run("open ids", func(t *testing.T) {
		var in strings.Builder
		for i := range maxNotes + 2 {
			fmt.Fprintf(&in, osc+"99;i=%d:d=0;t%d"+st, i, i)
		}
		s := New()
		s.Feed([]byte(in.String()), nil)
		if len(s.notes) != maxNotes {
			t.Errorf("%d notes open, want %d", len(s.notes), maxNotes)
		}
		_, sigs := s.Feed([]byte(osc+"99;i=0;x"+st+osc+"99;i=9;x"+st), nil)
		if diff := cmp.Diff([]string{`notify[99] id="0" "x" ""`, `notify[99] id="9" "t9x" ""`}, sigStrings(sigs)); diff != "" {
			t.Errorf("oldest id not dropped (-want +got):\n%s", diff)
		}
	})
}

func TestAppendTitle(t *testing.T) {
	tests := []struct {
		name, title, want string
	}{
		{"plain", "✳ Claude Code", "\x1b]2;✳ Claude Code\x1b\\"},
		{"semicolons", "a;b", "\x1b]2;a;b\x1b\\"},
		{"controls dropped", "a\x07b\x1bc\nd\u009ce", "\x1b]2;abcde\x1b\\"},
		{"invalid utf-8 dropped", "a\x9cb\xe2", "\x1b]2;ab\x1b\\"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendTitle(nil, tt.title)
			if string(got) != tt.want {
				t.Errorf("AppendTitle = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConformance(t *testing.T) {
	tests := []struct {
		file     string
		keep     []string // must pass through
		stripped []string // must not appear in the output
	}{
		{"claude-6.bin", nil,
			[]string{osc + "0;", osc + "9;", osc + "777;", osc + "7501;", "\x1bPtmux;"}},
		{"claude-7.bin", nil,
			[]string{osc + "0;", osc + "9;", osc + "7501;", "\x1bPtmux;"}},
		{"claude-8.bin", nil,
			[]string{osc + "0;", osc + "99;", osc + "7501;", "\x1bPtmux;"}},
		{"codex-5.bin", []string{osc + "10;?" + st, osc + "11;?" + st},
			[]string{osc + "0;", osc + "7501;"}},
		{"gemini-4.bin", []string{osc + "11;?" + st},
			[]string{osc + "0;"}},
		{"opencode-2.bin", []string{osc + "99;i=opentui-notifications:p=?;" + st, osc + "1337;Capabilities" + st,
			osc + "66;w=1; " + st, osc + "112\x07", osc + "4;0;?\x07", "\x1bP+q4d73" + st, "\x1b[?2026$p",
			"\x1b_Gi=31337,s=1,v=1,a=q,t=d,f=24;AAAA" + st, osc + "22;\x07"},
			[]string{osc + "0;", "\x1bPtmux;"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			out, sigs := scan(in)
			for _, k := range tt.keep {
				if !bytes.Contains(out, []byte(k)) {
					t.Errorf("output lost %q", k)
				}
			}
			for _, k := range tt.stripped {
				if bytes.Contains(out, []byte(k)) {
					t.Errorf("output still has %q", k)
				}
			}
			// Everything outside escape sequences passes: the plain text of
			// the output is the plain text of the input.
			if got, want := countNonEscape(out), countNonEscape(in); got > want {
				t.Errorf("output has %d plain bytes, input %d", got, want)
			}
			var golden strings.Builder
			for _, s := range sigs {
				golden.WriteString(s.String())
				golden.WriteByte('\n')
			}
			checkGolden(t, filepath.Join("testdata", strings.TrimSuffix(tt.file, ".bin")+".signals"), golden.String())

			// Splitting the real stream into reads of any size changes nothing.
			for _, size := range []int{1, 2, 3, 7, 64, 4096} {
				var chunks [][]byte
				for i := 0; i < len(in); i += size {
					chunks = append(chunks, in[i:min(i+size, len(in))])
				}
				gotOut, gotSigs := scanChunks(chunks)
				if !bytes.Equal(gotOut, out) {
					t.Errorf("reads of %d bytes: output differs", size)
				}
				if diff := cmp.Diff(sigs, gotSigs); diff != "" {
					t.Errorf("reads of %d bytes: signals differ:\n%s", size, diff)
				}
			}
		})
	}
}

// countNonEscape counts bytes that are not ESC; a rough measure of text.
func countNonEscape(p []byte) int { return len(p) - bytes.Count(p, []byte{esc}) }

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestBellLimiter(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		interval time.Duration
		at       []time.Duration // offsets from t0
		want     []bool
	}{
		{"zero interval allows all", 0, []time.Duration{0, 0, time.Millisecond}, []bool{true, true, true}},
		{"burst collapses", time.Second, []time.Duration{0, 10 * time.Millisecond, 999 * time.Millisecond, time.Second},
			[]bool{true, false, false, true}},
		{"measured from the last allowed", time.Second,
			[]time.Duration{0, 600 * time.Millisecond, 1200 * time.Millisecond, 1800 * time.Millisecond, 2200 * time.Millisecond},
			[]bool{true, false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := BellLimiter{Interval: tt.interval}
			for i, d := range tt.at {
				if got := l.Allow(t0.Add(d)); got != tt.want[i] {
					t.Errorf("bell %d at +%v: Allow = %v, want %v", i, d, got, tt.want[i])
				}
			}
		})
	}
}

func TestMemoryBounded(t *testing.T) {
	s := New()
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	s.Feed([]byte(osc+"0;"), nil)
	for range 64 { // 2 MiB of title
		if out, sigs := s.Feed(chunk, nil); len(out) != 0 || len(sigs) != 0 {
			t.Fatalf("oversize title leaked: %d bytes, %d signals", len(out), len(sigs))
		}
	}
	if c := cap(s.buf); c > 2*MaxOSC {
		t.Errorf("buffer grew to %d bytes", c)
	}
	out, sigs := s.Feed([]byte("\x07after"), nil)
	if string(out) != "after" || len(sigs) != 0 {
		t.Errorf("after oversize title: %q, %v", out, sigs)
	}
}

func TestNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{KindAgentStatus.String(), "agent-status"},
		{Kind(0).String(), "kind(0)"},
		{Kind(99).String(), "kind(99)"},
		{ProgressPaused.String(), "paused"},
		{Progress(7).String(), "progress(7)"},
		{Signal{Kind: KindBell}.String(), "bell"},
		{Signal{}.String(), "kind(0)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
