package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type row struct {
	Title   string
	Kind    kind
	Tags    []string
	Meta    map[string]any
	Ptr     *string
	Input   json.RawMessage
	Blob    []byte
	When    time.Time
	Nested  *row
	Arr     [2]string
	private string
}

type kind string

func TestValue(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	p := "token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	when := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	in := map[string]any{
		"rows": []row{{
			Title: "use " + key, Kind: kind("DB_PASSWORD=hunter2"), Tags: []string{"ok", key},
			Meta: map[string]any{key: 1, "n": 2, "list": []any{key}}, Ptr: &p,
			Input: json.RawMessage(`{"command":"mysql -u root -pS3cret db","n":1.50}`),
			Blob:  []byte(key), When: when, Nested: &row{Title: key}, Arr: [2]string{key, "b"}, private: key,
		}},
		"q":   key,
		"nil": nil,
	}
	out, n := Value(in)
	if n != 10 {
		t.Errorf("redacted %d, want 10", n)
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"abcdefghijklmnop", "ghp_", "hunter2", "S3cret"} {
		if strings.Contains(string(data), secret) { // Blob is base64 in JSON
			t.Errorf("%q left in %s", secret, data)
		}
	}
	r := out["rows"].([]row)[0]
	if string(r.Blob) != key || r.private != key {
		t.Error("bytes and unexported fields are not copied as they are")
	}
	if !r.When.Equal(when) || !strings.Contains(string(r.Input), `"n":1.50`) || r.Arr[1] != "b" || r.Meta["n"] != 2 {
		t.Errorf("values changed: %+v", r)
	}
	if p != "token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" || !strings.Contains(in["rows"].([]row)[0].Title, key) {
		t.Error("the input was modified")
	}
	if s, n := Value("plain"); s != "plain" || n != 0 {
		t.Errorf("Value(plain) = %q, %d", s, n)
	}
	var nothing any
	if v, n := Value(nothing); v != nil || n != 0 {
		t.Errorf("Value(nil) = %v, %d", v, n)
	}
}
