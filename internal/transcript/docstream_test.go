package transcript

import (
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

func TestWalkObject(t *testing.T) {
	doc := ` {"sessionId": "s1", "n": 12, "ok": true, "nested": {"a": [1, "}]\"x"]},
	"messages": [ {"id": "m1", "text": "a \"quoted\" ] } text"}, {"id":"m2","big":"` + strings.Repeat("x", 200) + `"}, {"id": broken}, 7 ],
	"after": null, "last": -1.5e3 }`
	var got []string
	walk := func(doc string, max int) error {
		got = got[:0]
		// One byte per read: every boundary falls inside a token somewhere.
		return WalkObject(iotest.OneByteReader(strings.NewReader(doc)), max, map[string]bool{"messages": true}, func(v DocValue) bool {
			got = append(got, fmt.Sprintf("%s[%d]=%s long=%v bad=%v", v.Key, v.Index, v.Value.Raw, v.TooLong, v.Malformed))
			return true
		})
	}
	if err := walk(doc, 100); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`sessionId[-1]="s1" long=false bad=false`,
		`n[-1]=12 long=false bad=false`,
		`ok[-1]=true long=false bad=false`,
		`nested[-1]={"a": [1, "}]\"x"]} long=false bad=false`,
		`messages[0]={"id": "m1", "text": "a \"quoted\" ] } text"} long=false bad=false`,
		`messages[1]= long=true bad=false`,
		`messages[2]= long=false bad=true`,
		`messages[3]=7 long=false bad=false`,
		`after[-1]=null long=false bad=false`,
		`last[-1]=-1.5e3 long=false bad=false`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{``, `[1,2]`, `{"a": 1`, `{"messages": [1, 2`, `{"a" 1}`, `{"a": "unterminated`} {
		if err := walk(bad, 100); err == nil {
			t.Errorf("WalkObject(%q) = nil, want an error", bad)
		}
	}
	// The values before a truncation are passed.
	if err := walk(`{"a": 1, "messages": [{"id": 1}, {"id":`, 100); err == nil || len(got) != 2 {
		t.Errorf("truncated: %v, %q", err, got)
	}
}
