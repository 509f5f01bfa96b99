package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		want []string // key=value pairs
	}{
		{name: "members", in: `{"type":"user","n":-1.5e+3,"o":{"a":[1,{"b":null}]},"t":true,"f":false}`, ok: true,
			want: []string{`type="user"`, `n=-1.5e+3`, `o={"a":[1,{"b":null}]}`, `t=true`, `f=false`}},
		{name: "white space", in: " \t{ \"a\" : [ ] , \"b\" :{ } }\r ", ok: true, want: []string{`a=[ ]`, `b={ }`}},
		{name: "escapes", in: `{"k\"e\\y":"a\"b\\\"c\u00e9\n","x":"\\"}`, ok: true, want: []string{`k\"e\\y="a\"b\\\"c\u00e9\n"`, `x="\\"`}},
		{name: "empty object", in: `{}`, ok: true},
		{name: "array", in: `[1]`},
		{name: "null", in: `null`},
		{name: "empty", in: ``},
		{name: "truncated", in: `{"type":"user","message":{"content":"abc`},
		{name: "truncated after escape", in: `{"a":"b\`},
		{name: "bad escape", in: `{"a":"\x"}`},
		{name: "short unicode escape", in: `{"a":"\u12"}`},
		{name: "bad unicode escape", in: `{"a":"\u12g4"}`},
		{name: "trailing garbage", in: `{"a":1} x`},
		{name: "two objects", in: `{"a":1}{"b":2}`},
		{name: "missing colon", in: `{"a" 1}`},
		{name: "missing comma", in: `{"a":1 "b":2}`},
		{name: "trailing comma", in: `{"a":1,}`},
		{name: "array trailing comma", in: `{"a":[1,]}`},
		{name: "unquoted key", in: `{a:1}`},
		{name: "bad literal", in: `{"a":tru}`},
		{name: "leading zero", in: `{"a":01}`},
		{name: "bare minus", in: `{"a":-}`},
		{name: "dot without digits", in: `{"a":1.}`},
		{name: "exponent without digits", in: `{"a":1e}`},
		{name: "unclosed array", in: `{"a":[1,2}`},
		{name: "deep nesting", in: `{"a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, ok := Members([]byte(tt.in), nil)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if std := json.Valid([]byte(tt.in)) && strings.HasPrefix(strings.TrimSpace(tt.in), "{"); std != ok {
				t.Fatalf("ok = %v but encoding/json says %v", ok, std)
			}
			if !ok {
				return
			}
			var got []string
			for _, m := range ms {
				got = append(got, string(m.Key)+"="+string(m.Value))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("members (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidJSON(t *testing.T) {
	for _, in := range []string{`null`, ` [1, "a", {}] `, `"x"`, `-0.5`, `true`} {
		if !ValidJSON([]byte(in)) {
			t.Errorf("ValidJSON(%s) = false", in)
		}
	}
	for _, in := range []string{``, `nul`, `[1`, `"x`, `1 2`, `{"a"}`} {
		if ValidJSON([]byte(in)) {
			t.Errorf("ValidJSON(%s) = true", in)
		}
	}
}

// FuzzMembers checks the scanner against encoding/json wherever their
// rules coincide (no control characters, valid UTF-8).
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"d"}],"e":-1.5e3}`, `{"a":"\u00e9"}`, `[1]`, `{"a":`, `{}`, `{"a":tru}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, ok := Members(b, nil)
		valid := ValidJSON(b)
		if ok && !valid {
			t.Fatalf("Members ok but ValidJSON false: %q", b)
		}
		if !utf8.Valid(b) || strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 && r != ' ' && r != '\t' && r != '\n' && r != '\r' }) {
			return
		}
		// Raw tabs and newlines are invalid inside JSON strings only.
		if std := json.Valid(b); std != valid && !strings.ContainsAny(string(b), "\t\n\r") {
			t.Fatalf("ValidJSON = %v, encoding/json = %v for %q", valid, std, b)
		}
		if !ok {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			if !strings.ContainsAny(string(b), "\t\n\r") {
				t.Fatalf("Members ok but unmarshal failed: %v", err)
			}
			return
		}
		for _, m := range ms {
			if !ValidJSON(m.Value) {
				t.Fatalf("member value %q not valid", m.Value)
			}
		}
	})
}

func BenchmarkMembers(b *testing.B) {
	line := []byte(`{"parentUuid":"x","isSidechain":false,"message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"` +
		strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 200) + `"}]},"type":"user","timestamp":"2026-11-30T10:50:11.739Z"}`)
	b.SetBytes(int64(len(line)))
	var ms []Member
	for b.Loop() {
		var ok bool
		if ms, ok = Members(line, ms); !ok {
			b.Fatal("invalid")
		}
	}
}

func TestElements(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want []string
	}{
		{` [ 1 , "a,b" ,{"c":[2]} ] `, true, []string{`1`, `"a,b"`, `{"c":[2]}`}},
		{`[]`, true, nil},
		{`[1,]`, false, nil},
		{`[1 2]`, false, nil},
		{`[1] x`, false, nil},
		{`{"a":1}`, false, nil},
		{`[`, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			els, ok := Elements([]byte(tt.in), nil)
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			var got []string
			for _, e := range els {
				got = append(got, string(e))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestScalars(t *testing.T) {
	ms, ok := Members([]byte(`{"s":"plain","e":"a\"b\u00e9\ud83d\ude00","n":42,"f":1.9e2,"neg":-3,"big":1e300,"t":true,"x":null,"k\"q":1}`), nil)
	if !ok {
		t.Fatal("invalid")
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"plain string", Str(Lookup(ms, "s")), "plain"},
		{"escaped string", Str(Lookup(ms, "e")), "a\"bé😀"},
		{"non-string", Str(Lookup(ms, "n")), ""},
		{"missing", Str(Lookup(ms, "nope")), ""},
		{"StrEqual", StrEqual(Lookup(ms, "s"), "plain"), true},
		{"StrEqual escaped", StrEqual(Lookup(ms, "e"), "a\"bé😀"), false},
		{"int", Int(Lookup(ms, "n")), int64(42)},
		{"float", Int(Lookup(ms, "f")), int64(190)},
		{"negative", Int(Lookup(ms, "neg")), int64(-3)},
		{"out of range", Int(Lookup(ms, "big")), int64(0)},
		{"not a number", Int(Lookup(ms, "s")), int64(0)},
		{"true", Bool(Lookup(ms, "t")), true},
		{"null is not true", Bool(Lookup(ms, "x")), false},
		{"escaped key as written", string(Lookup(ms, `k\"q`)), "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestStrUnescape(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 smile"`, `"lone \ud83d here"`, `"lone low \ude00"`,
		`"\ud83d\u0041"`, `"mixed \\n not newline"`, `"\u0000nul"`, `"end\\"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := Str([]byte(in)); got != want {
			t.Errorf("Str(%s) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{` "padded" `, "\t\"tab\"\r\n", `"\u00e9" `} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := Str([]byte(in)); got != want {
			t.Errorf("Str(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{`"\x"`, `"\u12"`, `"\u12zz"`, `""x"`, `"a"b"`, `"a`, `"a\"`, `"a" x`, `"a""b"`, `"\"`} {
		if got := Str([]byte(in)); got != "" {
			t.Errorf("Str(%s) = %q, want empty", in, got)
		}
	}
}

func FuzzStr(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\ud83d\ude00"`, `"\ud83d"`, `"x\n"`, `"" `, ` "a"`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Str(b)
		if !utf8.Valid(b) {
			return // encoding/json turns invalid UTF-8 into U+FFFD; Str keeps it
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			// Not a string, or one with raw control characters, which
			// encoding/json refuses and Str keeps.
			if got != "" && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 }) {
				t.Fatalf("Str(%q) = %q, but encoding/json refuses it: %v", b, got, err)
			}
			return
		}
		if got != want {
			t.Fatalf("Str(%q) = %q, want %q", b, got, want)
		}
	})
}

// deepJSON is 16 MiB of '[': gjson.Valid overflows the goroutine stack on
// it (a fatal error); ValidJSON stops at maxDepth.
func deepJSON() []byte { return bytes.Repeat([]byte("["), 16<<20) }

func TestValidJSONOnDeepNesting(t *testing.T) {
	deep := deepJSON()
	if ValidJSON(deep) || ValidJSONString(string(deep)) {
		t.Error("16 MiB of '[' is valid JSON")
	}
	if _, ok := Members(append([]byte(`{"a":`), deep...), nil); ok {
		t.Error("Members accepted 16 MiB of '['")
	}
	ok := bytes.Repeat([]byte("["), maxDepth-1)
	ok = append(ok, bytes.Repeat([]byte("]"), maxDepth-1)...)
	if !ValidJSON(ok) || !ValidJSONString(string(ok)) {
		t.Errorf("%d levels of nesting refused", maxDepth-1)
	}
}
