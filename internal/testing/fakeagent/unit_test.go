package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func decodeAll(chunks ...string) []key {
	var d keyDecoder
	var keys []key
	for _, c := range chunks {
		keys = d.decode([]byte(c), keys)
	}
	return keys
}

func runes(s string) []key {
	var ks []key
	for _, r := range s {
		ks = append(ks, key{kind: kRune, r: r})
	}
	return ks
}

func TestKeyDecoder(t *testing.T) {
	enter := key{kind: kEnter}
	tests := []struct {
		name   string
		chunks []string
		want   []key
	}{
		{"text and CR", []string{"hi\r"}, append(runes("hi"), enter)},
		{"LF", []string{"a\n"}, append(runes("a"), enter)},
		{"CRLF is one Enter", []string{"a\r\n"}, append(runes("a"), enter)},
		{"CRLF split across reads", []string{"a\r", "\nb"}, append(append(runes("a"), enter), runes("b")...)},
		{"two Enters", []string{"\r\r"}, []key{enter, enter}},
		{"controls", []string{"\x7f\x08\x03\x04"}, []key{{kind: kBackspace}, {kind: kBackspace}, {kind: kCtrlC}, {kind: kCtrlD}}},
		{"lone Esc", []string{"\x1b"}, []key{{kind: kEsc}}},
		{"Esc Esc", []string{"\x1b\x1b"}, []key{{kind: kEsc}, {kind: kEsc}}},
		{"arrow keys are skipped", []string{"\x1b[A\x1bOBx"}, runes("x")},
		{"CSI split across reads", []string{"\x1b[2", "00~y"}, runes("y")},
		{"OSC reply skipped", []string{"\x1b]11;rgb:0000/0000/0000\x07z"}, runes("z")},
		{"OSC with ST skipped", []string{"\x1b]11;x\x1b\\z"}, runes("z")},
		{"UTF-8 split", []string{"\xe2\x9c", "\xb3"}, runes("✳")},
		{"tab is a space", []string{"\t"}, runes(" ")},
		{"invalid UTF-8 dropped", []string{"\xffa"}, runes("a")},
		{"bracketed paste", []string{"\x1b[200~a\r\nb\x1b[201~\r"}, append(runes("a b"), enter)},
		{"focus reports skipped", []string{"\x1b[I\x1b[Ox"}, runes("x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAll(tt.chunks...)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(key{})); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		line string
		want command
	}{
		{"reply hello world", command{verb: "reply", arg: "hello world"}},
		{"  reply   spaced  ", command{verb: "reply", arg: "spaced"}},
		{"tool rm -rf /", command{verb: "tool", arg: "rm -rf /"}},
		{"run ls", command{verb: "run", arg: "ls"}},
		{"slow 300 make test", command{verb: "run", arg: "make test", ms: 300}},
		{"slow 300", command{verb: "reply", arg: "ok"}},
		{"slow x ls", command{verb: "reply", arg: "ok"}},
		{"fail", command{verb: "fail"}},
		{"sleep 250", command{verb: "sleep", ms: 250, arg: "ok"}},
		{"clear", command{verb: "clear"}},
		{"/clear", command{verb: "clear"}},
		{"exit", command{verb: "exit"}},
		{"/exit", command{verb: "exit"}},
		{"/quit", command{verb: "exit"}},
		{"say hi", command{verb: "reply", arg: "ok"}},
		{"reply", command{verb: "reply", arg: "ok"}},
		{"sleep -1", command{verb: "reply", arg: "ok"}},
		{"sleep soon", command{verb: "reply", arg: "ok"}},
		{"fail now", command{verb: "reply", arg: "ok"}},
		{"exit please", command{verb: "reply", arg: "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if got := parseCommand(tt.line); got != tt.want {
				t.Errorf("parseCommand(%q) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestMatchers(t *testing.T) {
	tests := []struct {
		name    string
		match   func(string, string) bool
		matcher string
		value   string
		want    bool
	}{
		{"claude empty", matchClaude, "", "Bash", true},
		{"claude star", matchClaude, "*", "Bash", true},
		{"claude exact", matchClaude, "Bash", "Bash", true},
		{"claude exact is not a prefix", matchClaude, "Bash", "BashOutput", false},
		{"claude alternatives", matchClaude, "Edit|Bash", "Bash", true},
		{"claude notification type", matchClaude, "permission_prompt|idle_prompt", "idle_prompt", true},
		{"claude notification other", matchClaude, "permission_prompt", "idle_prompt", false},
		{"claude regexp", matchClaude, "mcp__.*", "mcp__github__x", true},
		{"claude bad regexp", matchClaude, "(", "(", false},
		{"codex star", matchRegexp, "*", "Bash", true},
		{"codex regexp", matchRegexp, "^Ba", "Bash", true},
		{"codex regexp miss", matchRegexp, "^Edit$", "Bash", false},
		{"gemini exact", matchExact, "startup", "startup", true},
		{"gemini exact miss", matchExact, "startup", "resume", false},
		{"gemini star", matchExact, "*", "resume", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.match(tt.matcher, tt.value); got != tt.want {
				t.Errorf("match(%q, %q) = %v, want %v", tt.matcher, tt.value, got, tt.want)
			}
		})
	}
}

func TestStripJSONC(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"line comment", "{\"a\":1 // x\n}", "{\"a\":1 \n}"},
		{"block comment", "{/* x\ny */\"a\":1}", "{\n\"a\":1}"},
		{"slashes in strings kept", `{"u":"http://x/*y*/"}`, `{"u":"http://x/*y*/"}`},
		{"escaped quote", `{"q":"a\"//b"}`, `{"q":"a\"//b"}`},
		{"comment at end without newline", `{} // end`, `{} `},
		{"unterminated block", `{} /* open`, `{} `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stripJSONC([]byte(tt.in))); got != tt.want {
				t.Errorf("stripJSONC(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHooks(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		unit    time.Duration
		want    []hookHandler
		wantErr string
	}{
		{"empty", ``, time.Second, nil, ""},
		{"no hooks", `{"model":"x"}`, time.Second, nil, ""},
		{"claude shape", `{"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"a","timeout":10},{"type":"http","url":"u"},{"type":"command","command":"b"}]}]}}`,
			time.Second, []hookHandler{
				{event: "Stop", command: "a", timeout: 10 * time.Second, source: "f"},
				{event: "Stop", command: "b", timeout: time.Minute, source: "f", index: 2},
			}, ""},
		{"gemini milliseconds and names", `{"hooks":{"BeforeTool":[{"matcher":"run_.*","hooks":[{"name":"n","type":"command","command":"c","timeout":1500}]}]}}`,
			time.Millisecond, []hookHandler{{event: "BeforeTool", matcher: "run_.*", command: "c", name: "n", timeout: 1500 * time.Millisecond, source: "f"}}, ""},
		{"second group", `{"hooks":{"Stop":[{"hooks":[]},{"hooks":[{"type":"command","command":"z"}]}]}}`,
			time.Second, []hookHandler{{event: "Stop", command: "z", timeout: time.Minute, source: "f", group: 1}}, ""},
		{"bad json", `{"hooks":`, time.Second, nil, "parse f"},
		{"hooks not an object", `{"hooks":[1]}`, time.Second, nil, "parse f"},
		{"event not an array", `{"hooks":{"Stop":{}}}`, time.Second, nil, "hooks.Stop"},
		{"empty command", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":" "}]}]}}`, time.Second, nil, "empty command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseHooks([]byte(tt.doc), "f", tt.unit, time.Minute)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(hookHandler{})); diff != "" {
				t.Errorf("handlers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaudeProjectDir(t *testing.T) {
	tests := map[string]string{
		"/home/u/proj":          "-home-u-proj",
		"/tmp/my_repo.v2":       "-tmp-my-repo-v2",
		"/a b/c":                "-a-b-c",
		"/home/u/.local/x":      "-home-u--local-x",
		"/données":              "-donn-es",
		"/x/😀":                  "-x---",
		"/Users/Alice/Dev-2026": "-Users-Alice-Dev-2026",
	}
	for in, want := range tests {
		if got := claudeProjectDir(in); got != want {
			t.Errorf("claudeProjectDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRootCommands(t *testing.T) {
	tests := map[string]string{
		"touch gemini-created.txt && echo done": "touch, echo",
		"ls":                                    "ls",
		"a | b; c || d":                         "a, b, c, d",
		"":                                      "",
	}
	for in, want := range tests {
		if got := rootCommands(in); got != want {
			t.Errorf("rootCommands(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGeminiPatchLog(t *testing.T) {
	log := strings.Join([]string{
		`{"sessionId":"s","kind":"main"}`,
		`{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"<session_context>"}]}]}}`,
		`{"id":"u1","type":"user","content":[{"text":"say hi"}]}`,
		`{"$set":{"lastUpdated":"t"}}`,
		`{"id":"g1","type":"gemini","content":""}`,
		`{"id":"g1","type":"gemini","content":"hi"}`,
		`not json`,
		`{"id":"u2","type":"user","content":[{"text":"again"}]}`,
		`{"id":"g2","type":"gemini","content":[{"text":"o"},{"text":"k"}]}`,
		`{"$rewindTo":"u2"}`,
	}, "\n")
	var got []string
	for _, m := range geminiPatchLog([]byte(log)) {
		typ, text := geminiText(m)
		got = append(got, typ+":"+text)
	}
	want := []string{"user:<session_context>", "user:say hi", "gemini:hi"}
	if !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

func TestPersonaOf(t *testing.T) {
	tests := []struct {
		argv    []string
		want    string
		rest    []string
		wantErr bool
	}{
		{[]string{"/x/claude", "--resume", "a"}, "claude", []string{"--resume", "a"}, false},
		{[]string{"codex"}, "codex", nil, false},
		{[]string{"gemini", "-i", "x"}, "gemini", []string{"-i", "x"}, false},
		{[]string{"fakeagent", "x"}, "custom", []string{"x"}, false},
		{[]string{"fakeagent", "--persona", "codex", "resume"}, "codex", []string{"resume"}, false},
		{[]string{"claude", "--persona=gemini"}, "gemini", nil, false},
		{[]string{"fakeagent", "--", "--persona", "x"}, "custom", []string{"--", "--persona", "x"}, false},
		{[]string{"fakeagent", "--persona"}, "", nil, true},
		{[]string{"fakeagent", "--persona", "cursor"}, "", nil, true},
	}
	for _, tt := range tests {
		got, rest, err := personaOf(tt.argv)
		if (err != nil) != tt.wantErr || got != tt.want || !slices.Equal(rest, tt.rest) {
			t.Errorf("personaOf(%q) = %q %q %v", tt.argv, got, rest, err)
		}
	}
}

func TestParseDelay(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"200", 200 * time.Millisecond, false},
		{"1.5s", 1500 * time.Millisecond, false},
		{"0", 0, false},
		{"-5", 0, true},
		{"-1s", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		got, err := parseDelay(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseDelay(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestObjOrder(t *testing.T) {
	v := o("z", 1, "a", "<&>", "m", o("y", nil, "b", []obj{o("k", true)}))
	v.set("a", "again")
	got := string(mustJSON(v))
	want := `{"z":1,"a":"again","m":{"y":null,"b":[{"k":true}]}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := string(mustJSON(o("h", "<b>&"))); got != `{"h":"<b>&"}` {
		t.Errorf("HTML escaped: %s", got)
	}
}

func FuzzKeyDecoder(f *testing.F) {
	for _, s := range []string{"hi\r", "\x1b[A", "\x1b]11;?\x07", "\xe2\x9c\xb3", "\x1b", "a\r\nb", "\x1b[200~x\x1b[201~"} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		whole := decodeAll(string(in))
		for _, k := range whole {
			if k.kind == kRune && (k.r == 0xFFFD || k.r < 0x20) {
				t.Fatalf("bad rune key %q from %q", k.r, in)
			}
		}
		// Without escapes and line ends the split does not matter.
		if bytes.ContainsAny(in, "\x1b\r\n") || len(in) == 0 {
			return
		}
		i := split % (len(in) + 1)
		if i < 0 {
			i = -i
		}
		parts := decodeAll(string(in[:i]), string(in[i:]))
		if !cmp.Equal(whole, parts, cmp.AllowUnexported(key{})) {
			t.Fatalf("split at %d: %v vs %v", i, whole, parts)
		}
	})
}

func FuzzParseHooks(f *testing.F) {
	f.Add([]byte(`{"hooks":{"Stop":[{"matcher":"","hooks":[{"type":"command","command":"a","timeout":10}]}]}}`))
	f.Add([]byte("// c\n{/* x */\"hooks\":{}}"))
	f.Add([]byte(`{"hooks":{"A":[{"hooks":[{"type":"command","command":"x","timeout":1e300}]}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := stripJSONC(in)
		if !bytes.Equal(stripJSONC(s), s) {
			t.Fatalf("stripJSONC is not idempotent on %q", in)
		}
		hs, _, err := parseHooks(s, "f", time.Millisecond, time.Second)
		if err != nil && hs != nil {
			t.Fatalf("handlers with an error")
		}
		for _, h := range hs {
			if h.timeout <= 0 || strings.TrimSpace(h.command) == "" {
				t.Fatalf("bad handler %+v", h)
			}
		}
	})
}

func FuzzGeminiPatchLog(f *testing.F) {
	f.Add([]byte("{}\n{\"id\":\"a\",\"type\":\"user\",\"content\":\"x\"}\n{\"$rewindTo\":\"a\"}"))
	f.Add([]byte("{}\n{\"$set\":{\"messages\":[{\"id\":\"b\",\"type\":\"gemini\",\"content\":[{\"text\":\"y\"}]}]}}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, m := range geminiPatchLog(in) {
			if !json.Valid(m) {
				t.Fatalf("invalid message %q", m)
			}
			geminiText(m)
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"reply x", "tool a b", "sleep 5", "exit", "fail", "clear", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c := parseCommand(line)
		switch c.verb {
		case "reply", "tool", "run":
			if c.arg == "" {
				t.Fatalf("%q: %s without an argument", line, c.verb)
			}
		case "sleep":
			if c.ms < 0 {
				t.Fatalf("%q: negative sleep", line)
			}
		case "fail", "clear", "exit":
		default:
			t.Fatalf("%q: verb %q", line, c.verb)
		}
	})
}
