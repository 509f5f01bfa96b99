package transcript

import (
	"strings"
	"testing"
)

func TestValueGet(t *testing.T) {
	doc := Parse(` {"a":{"b":[{"name":"x"},{"name":"y\u00e9"}],"n":null},"dup":1,"dup":2,"k\u0065y":"esc","s":"str"} `)
	cases := []struct {
		path, raw string
	}{
		{"a.b.1.name", `"y\u00e9"`},
		{"a.b.0.name", `"x"`},
		{"a.b.2.name", ``},
		{"a.b.-1", ``},
		{"a.n", `null`},
		{"a.missing", ``},
		{"dup", `1`}, // the first of two members wins
		{"key", `"esc"`},
		{"s.x", ``}, // a step into a string
		{"", ``},
	}
	for _, c := range cases {
		if got := doc.Get(c.path).Raw; got != c.raw {
			t.Errorf("Get(%q) = %q, want %q", c.path, got, c.raw)
		}
	}
	if got := doc.Get("a.b.1.name").Str(); got != "yé" {
		t.Errorf("Str = %q", got)
	}
}

// TestValueConversions: as lenient as gjson's, which the providers relied on.
func TestValueConversions(t *testing.T) {
	cases := []struct {
		raw    string
		str    string
		i      int64
		f      float64
		b      bool
		exists bool
		null   bool
	}{
		{``, "", 0, 0, false, false, true},
		{`null`, "", 0, 0, false, true, true},
		{`true`, "true", 1, 1, true, true, false},
		{`false`, "false", 0, 0, false, true, false},
		{`12`, "12", 12, 12, true, true, false},
		{`-3.9`, "-3.9", -3, -3.9, true, true, false},
		{`0`, "0", 0, 0, false, true, false},
		{`"42"`, "42", 42, 42, false, true, false},
		{`"true"`, "true", 0, 0, true, true, false},
		{`"a\nb"`, "a\nb", 0, 0, false, true, false},
		{`{"a":1}`, `{"a":1}`, 0, 0, false, true, false},
		{`[1]`, `[1]`, 0, 0, false, true, false},
	}
	for _, c := range cases {
		v := Value{Raw: c.raw}
		if v.String() != c.str || v.Int() != c.i || v.Float() != c.f || v.Bool() != c.b || v.Exists() != c.exists || v.IsNull() != c.null {
			t.Errorf("%s: String %q Int %d Float %v Bool %v Exists %v IsNull %v", c.raw, v.String(), v.Int(), v.Float(), v.Bool(), v.Exists(), v.IsNull())
		}
	}
}

func TestValueForEach(t *testing.T) {
	var got []string
	Parse(`{"a":1,"b\"c":[true,"x"],"d":{}}`).ForEach(func(k string, v Value) bool {
		got = append(got, k+"="+v.Raw)
		v.ForEach(func(_ string, e Value) bool {
			got = append(got, " "+e.Raw)
			return true
		})
		return k != "b\"c" // stop after the second member
	})
	want := `a=1| 1|b"c=[true,"x"]| true| "x"`
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("ForEach visited %s, want %s", s, want)
	}
	n := 0
	Value{}.ForEach(func(string, Value) bool { n++; return true })
	if n != 0 {
		t.Error("a missing value was visited")
	}
	if a := Parse(`[1,[2],{"x":3}]`).Array(); len(a) != 3 || a[2].Get("x").Int() != 3 {
		t.Errorf("Array = %v", a)
	}
}

// TestValueOnHostileInput: a Value must come from a validated document,
// but one that did not, however deep or broken, reads as missing instead
// of exhausting the stack.
func TestValueOnHostileInput(t *testing.T) {
	deep := Parse(strings.Repeat(`{"a":`, 1<<20))
	if deep.Get("a.a").Exists() {
		t.Error("a path into an unterminated document was found")
	}
	n := 0
	deep.ForEach(func(string, Value) bool { n++; return true })
	if n != 0 {
		t.Errorf("ForEach visited %d members of an unterminated document", n)
	}
	brackets := Parse(strings.Repeat("[", 16<<20))
	if brackets.Get("0").Exists() || len(brackets.Array()) != 0 {
		t.Error("16 MiB of '[' gave an element")
	}
	if got := Parse("{\"a\":\"\xff\xfe\"}").Get("a").Str(); got != "\xff\xfe" {
		t.Errorf("invalid UTF-8 read as %q, want it kept as written", got)
	}
}

// FuzzValue: on any input, Value's readers never panic, and on an object
// ValidJSON accepts, ForEach visits exactly the members Members returns.
func FuzzValue(f *testing.F) {
	f.Add(`{"a":[1,{"b":"c"}],"d\u0065":true}`)
	f.Add(`[{"a":1},2,"x"]`)
	f.Add(`{"a":`)
	f.Fuzz(func(t *testing.T, s string) {
		v := Parse(s)
		_ = v.Get("a.0.b").String()
		_, _, _ = v.Int(), v.Float(), v.Bool()
		var keys []string
		v.ForEach(func(k string, e Value) bool {
			keys = append(keys, k)
			_ = e.Array()
			return true
		})
		members, ok := Members([]byte(s), nil)
		if !ok || !ValidJSON([]byte(s)) {
			return
		}
		if len(keys) != len(members) {
			t.Fatalf("ForEach visited %d members, Members found %d", len(keys), len(members))
		}
		for i, m := range members {
			if want := Str([]byte(`"` + string(m.Key) + `"`)); keys[i] != want {
				t.Fatalf("key %d = %q, want %q", i, keys[i], want)
			}
		}
	})
}
