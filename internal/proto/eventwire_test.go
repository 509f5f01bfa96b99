package proto

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

var decodeNow = time.Date(2026, 7, 16, 7, 0, 30, 0, time.UTC)

const goodLine = `{"schemaVersion":1,"capability":"cap","event":{"schemaVersion":1,"id":{"rawValue":"B9AA8B83-B42D-4C11-B838-36B84C73032A"},"runID":{"rawValue":"74C4B46D-9251-46AD-9200-61C97D98D43D"},"sessionID":"0190f6f3-2a50-7000-8000-000000000001","surfaceID":{"rawValue":"sf"},"provider":"codex","kind":"approval-requested","occurredAt":"2026-07-16T07:00:00Z","message":"Approve the dependency update.","hookName":"PermissionRequest"}}`

// mutate replaces old by new in goodLine (exactly once).
func mutate(t testing.TB, old, new string) string {
	if strings.Count(goodLine, old) != 1 {
		t.Fatalf("mutation %q does not match once", old)
	}
	return strings.Replace(goodLine, old, new, 1)
}

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{"the seed's example", goodLine, ""},
		{"unknown fields are ignored", mutate(t, `"message"`, `"extra":{"a":[1,2]},"message"`), ""},
		{"null session id", mutate(t, `"0190f6f3-2a50-7000-8000-000000000001"`, `null`), ""},
		{"no message or hook", mutate(t, `,"message":"Approve the dependency update.","hookName":"PermissionRequest"`, ``), ""},
		{"fractional seconds", mutate(t, `07:00:00Z`, `07:00:00.123456Z`), ""},
		{"offset", mutate(t, `07:00:00Z`, `09:00:00+02:00`), ""},
		{"no offset is UTC", mutate(t, `07:00:00Z`, `07:00:00`), ""},
		{"version as 1.0", mutate(t, `{"schemaVersion":1,"capability"`, `{"schemaVersion":1.0,"capability"`), ""},
		{"not UTF-8", mutate(t, `Approve`, "Appr\xffove"), ErrInvalidJSON},
		{"not JSON", `hello`, ErrInvalidJSON},
		{"truncated", goodLine[:len(goodLine)/2], ErrInvalidJSON},
		{"array", `[` + goodLine + `]`, ErrInvalidJSON},
		{"string", `"x"`, ErrInvalidJSON},
		{"empty", ``, ErrInvalidJSON},
		{"two objects", goodLine + goodLine, ErrInvalidJSON},
		{"version 2", mutate(t, `{"schemaVersion":1,"capability"`, `{"schemaVersion":2,"capability"`), ErrUnsupportedVersion},
		{"version as string", mutate(t, `{"schemaVersion":1,"capability"`, `{"schemaVersion":"1","capability"`), ErrUnsupportedVersion},
		{"event version 0", mutate(t, `"event":{"schemaVersion":1`, `"event":{"schemaVersion":0`), ErrUnsupportedVersion},
		{"version 2 beats a broken layout", `{"schemaVersion":2,"event":"whatever"}`, ErrUnsupportedVersion},
		{"version missing", mutate(t, `{"schemaVersion":1,"capability"`, `{"capability"`), ErrInvalidEvent},
		{"event missing", `{"schemaVersion":1,"capability":"x"}`, ErrInvalidEvent},
		{"event null", `{"schemaVersion":1,"capability":"x","event":null}`, ErrInvalidEvent},
		{"id as string", mutate(t, `"id":{"rawValue":"B9AA8B83-B42D-4C11-B838-36B84C73032A"}`, `"id":"B9AA8B83"`), ErrInvalidEvent},
		{"id missing", mutate(t, `"id":{"rawValue":"B9AA8B83-B42D-4C11-B838-36B84C73032A"},`, ``), ErrInvalidEvent},
		{"id empty", mutate(t, `"B9AA8B83-B42D-4C11-B838-36B84C73032A"`, `""`), ErrInvalidEvent},
		{"id with newline escape", mutate(t, `"B9AA8B83-B42D-4C11-B838-36B84C73032A"`, `"a\nb"`), ErrInvalidEvent},
		{"id too long", mutate(t, `"B9AA8B83-B42D-4C11-B838-36B84C73032A"`, `"`+strings.Repeat("a", 257)+`"`), ErrInvalidEvent},
		{"run id missing", mutate(t, `"runID":{"rawValue":"74C4B46D-9251-46AD-9200-61C97D98D43D"},`, ``), ErrInvalidEvent},
		{"session id number", mutate(t, `"0190f6f3-2a50-7000-8000-000000000001"`, `42`), ErrInvalidEvent},
		{"provider missing", mutate(t, `"provider":"codex",`, ``), ErrInvalidEvent},
		{"provider odd", mutate(t, `"provider":"codex"`, `"provider":"Co dex"`), ErrInvalidEvent},
		{"capability number", mutate(t, `"capability":"cap"`, `"capability":7`), ErrInvalidEvent},
		{"date missing", mutate(t, `"occurredAt":"2026-07-16T07:00:00Z",`, ``), ErrInvalidEvent},
		{"date not ISO", mutate(t, `2026-07-16T07:00:00Z`, `yesterday`), ErrInvalidEvent},
		{"date as number", mutate(t, `"2026-07-16T07:00:00Z"`, `1784185200`), ErrInvalidEvent},
		{"date in the future", mutate(t, `2026-07-16T07:00:00Z`, `2026-07-16T07:02:00Z`), ErrInvalidEvent},
		{"date in 1999", mutate(t, `2026-07-16T07:00:00Z`, `1999-12-31T23:59:59Z`), ErrInvalidEvent},
		{"February 30", mutate(t, `2026-07-16T07:00:00Z`, `2026-02-30T07:00:00Z`), ErrInvalidEvent},
		{"kind missing", mutate(t, `"kind":"approval-requested",`, ``), ErrInvalidEvent},
		{"kind number", mutate(t, `"kind":"approval-requested"`, `"kind":3`), ErrInvalidEvent},
		{"kind unknown", mutate(t, `"kind":"approval-requested"`, `"kind":"exploded"`), ErrUnknownKind},
		{"kind wrong case", mutate(t, `"kind":"approval-requested"`, `"kind":"Started"`), ErrUnknownKind},
		{"kind idle is not a wire kind", mutate(t, `"kind":"approval-requested"`, `"kind":"idle"`), ErrUnknownKind},
		{"reserved hook", mutate(t, `"PermissionRequest"`, `"muster.startupSweep"`), ErrReservedHookName},
		{"reserved hook any case", mutate(t, `"PermissionRequest"`, `"MUSTER.native.x"`), ErrReservedHookName},
		{"hook number", mutate(t, `"PermissionRequest"`, `5`), ErrInvalidEvent},
		{"hook with an escape sequence", mutate(t, `"PermissionRequest"`, `"Permission\u001b]52;c;eA==\u0007"`), ErrInvalidEvent},
		{"hook with C1 CSI", mutate(t, `"PermissionRequest"`, `"Permission\u009b2J"`), ErrInvalidEvent},
		{"hook with bidi override", mutate(t, `"PermissionRequest"`, `"Permission\u202eRequest"`), ErrInvalidEvent},
		{"session id with escape", mutate(t, `"0190f6f3-2a50-7000-8000-000000000001"`, `"0190\u001b[2J"`), ErrInvalidEvent},
		{"session id with line separator", mutate(t, `"0190f6f3-2a50-7000-8000-000000000001"`, `"0190\u2028x"`), ErrInvalidEvent},
		{"surface id with bidi isolate", mutate(t, `"surfaceID":{"rawValue":"sf"}`, `"surfaceID":{"rawValue":"s\u2066f"}`), ErrInvalidEvent},
		{"run id with DEL", mutate(t, `"74C4B46D-9251-46AD-9200-61C97D98D43D"`, `"74C4\u007f"`), ErrInvalidEvent},
		{"model", mutate(t, `"hookName"`, `"model":"gpt-5.1-codex","hookName"`), ""},
		{"model empty is none", mutate(t, `"hookName"`, `"model":"","hookName"`), ""},
		{"model with an escape sequence", mutate(t, `"hookName"`, `"model":"gpt\u001b]0;pwned\u0007","hookName"`), ErrInvalidEvent},
		{"model too long", mutate(t, `"hookName"`, `"model":"`+strings.Repeat("m", MaxModelLen+1)+`","hookName"`), ErrInvalidEvent},
		{"model number", mutate(t, `"hookName"`, `"model":5,"hookName"`), ErrInvalidEvent},
		{"hook name at the limit", mutate(t, `"PermissionRequest"`, `"`+strings.Repeat("h", MaxHookNameLen)+`"`), ""},
		{"hook name over the limit", mutate(t, `"PermissionRequest"`, `"`+strings.Repeat("h", MaxHookNameLen+1)+`"`), ErrInvalidEvent},
		{"message is free text", mutate(t, `"Approve the dependency update."`, `"a\u001b]52;c;eA==\u0007\n\tb\u009b2J\u202e"`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := DecodeEnvelope([]byte(tt.line), decodeNow, time.Minute)
			if got != tt.want {
				t.Errorf("Decode = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeFields(t *testing.T) {
	req, code := DecodeEnvelope([]byte(mutate(t, `07:00:00Z`, `09:00:00.5+02:00`)), decodeNow, time.Minute)
	if code != "" {
		t.Fatal(code)
	}
	ev := req.Event
	if req.Capability != "cap" || ev.ID.RawValue != "B9AA8B83-B42D-4C11-B838-36B84C73032A" ||
		ev.RunID.RawValue != "74C4B46D-9251-46AD-9200-61C97D98D43D" || *ev.SessionID != "0190f6f3-2a50-7000-8000-000000000001" ||
		ev.SurfaceID.RawValue != "sf" || ev.Provider != "codex" || ev.Kind != KindApprovalRequested ||
		ev.Message != "Approve the dependency update." || ev.HookName != "PermissionRequest" ||
		!ev.OccurredAt.Equal(time.Date(2026, 7, 16, 7, 0, 0, 5e8, time.UTC)) || ev.OccurredAt.Location() != time.UTC {
		t.Errorf("decoded %+v", req)
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 7, 16, 7, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"2026-07-16T07:00:00Z", "2026-07-16T07:00:00z", "2026-07-16t07:00:00Z", "2026-07-16 07:00:00Z",
		"2026-07-16T07:00:00", "2026-07-16T07:00", "2026-07-16T07:00:00.000Z", "2026-07-16T07:00:00,0Z",
		"2026-07-16T09:00:00+02:00", "2026-07-16T09:00:00+0200", "2026-07-16T09:00:00+02",
		"2026-07-16T02:00:00-05:00", "2026-07-16T07:00:00.000000000000Z",
	} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{
		"", "2026-07-16", "2026-07-16T", "2026-07-16T7:00:00Z", "2026-13-01T00:00:00Z", "2026-07-32T00:00:00Z",
		"2026-07-16T24:00:00Z", "2026-07-16T07:60:00Z", "2026-07-16T07:00:00.Z", "2026-07-16T07:00:00+2",
		"2026-07-16T07:00:00+25:00", "2026-07-16T07:00:00ZZ", "2026/07/16T07:00:00Z", "+2026-07-16T07:00:00Z",
		"2026-07-16T07:00:00 Z",
	} {
		if got, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", s, got)
		}
	}
	if got, err := ParseTime("2026-07-16T07:00:00.123456789123Z"); err != nil || got.Nanosecond() != 123456789 {
		t.Errorf("long fraction: %v, %v", got, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(goodLine))
	f.Add([]byte(`{"schemaVersion":1,"event":{"schemaVersion":1}}`))
	f.Add([]byte(`{"schemaVersion":2}`))
	f.Add([]byte(strings.Replace(goodLine, `07:00:00Z`, `09:00:00.5+02:00`, 1)))
	f.Add([]byte(strings.Replace(goodLine, `"kind":"approval-requested"`, `"kind":"nope"`, 1)))
	f.Fuzz(func(t *testing.T, line []byte) {
		req, code := DecodeEnvelope(line, decodeNow, time.Minute)
		if code == "" {
			// Round trip through the helper's encoder: what the daemon
			// accepts, re-encoded, decodes to the same.
			b, err := EncodeEnvelope(req)
			if err != nil {
				if strings.Contains(err.Error(), ErrTooLarge) {
					return // a request up to the fuzzer's size, not events.sock's
				}
				t.Fatalf("accepted %q, but cannot encode it: %v", line, err)
			}
			again, code2 := DecodeEnvelope(b[:len(b)-1], decodeNow, time.Minute)
			if code2 != "" {
				t.Fatalf("re-encoded %s rejected: %s", b, code2)
			}
			if !reflect.DeepEqual(again, req) {
				t.Fatalf("round trip changed the event:\n%+v\n%+v", req, again)
			}
			if !req.Event.Kind.Valid() || req.Event.ID.RawValue == "" || ReservedHookName(req.Event.HookName) {
				t.Fatalf("accepted an invalid event: %+v", req)
			}
			return
		}
		if !slices.Contains(EventErrorCodes, code) {
			t.Fatalf("unknown code %q", code)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-07-16T07:00:00Z", "2026-07-16T07:00:00.123+02:00", "2026-07-16 07:00", "2026-07-16T07:00:00,5-0530", "2026-12-31T23:59:60Z", "0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseTime(%q) not in UTC", s)
		}
		// What it accepts, printed as RFC 3339, parses to the same instant.
		again, err := ParseTime(got.Format(time.RFC3339Nano))
		if err != nil || !again.Equal(got) {
			t.Fatalf("ParseTime(%q) = %v; round trip %v, %v", s, got, again, err)
		}
	})
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	line := []byte(goodLine)
	for b.Loop() {
		if _, code := DecodeEnvelope(line, decodeNow, time.Minute); code != "" {
			b.Fatal(code)
		}
	}
}

// FuzzDecodeIgnoresFormatting is a differential test: a request and the
// same JSON re-encoded (whitespace gone, escapes undone, keys sorted,
// numbers as written) get the same answer. It began as the check that held
// a hand-written scanner to encoding/json; Decode has none now, and the
// test holds any future fast path to the same rule.
func FuzzDecodeIgnoresFormatting(f *testing.F) {
	for _, s := range []string{
		goodLine,
		strings.Replace(goodLine, `"Approve the dependency update."`, `"a\nb\t\"c\" \\ \/ \u00e9 \ud83d\ude00"`, 1),
		strings.Replace(goodLine, `"sessionID":"0190f6f3-2a50-7000-8000-000000000001"`, `"sessionID":null,"sessionID":"x"`, 1),
		strings.Replace(goodLine, `"kind"`, `"Kind"`, 1),
		strings.Replace(goodLine, `"kind"`, `"ſchemaVersion":2,"kind"`, 1),
		strings.Replace(goodLine, `"message"`, `"extra":[1,{"a":[true,false,null,-1.5e3]},"s"],"message"`, 1),
		strings.Replace(goodLine, `{"rawValue":"sf"}`, `{"rawValue":"sf","x":{}}`, 1),
		strings.Replace(goodLine, `"schemaVersion":1,"capability"`, `"schemaVersion":1.0,"capability"`, 1),
		strings.Replace(goodLine, `"schemaVersion":1,"capability"`, `"schemaVersion":1e0,"capability"`, 1),
		strings.Replace(goodLine, `"hookName":"PermissionRequest"`, `"hookName":null`, 1),
		strings.Replace(goodLine, `"PermissionRequest"`, `"Perm\u0000ission"`, 1),
		` ` + goodLine + "\r\n\t ",
		`{"schemaVersion":1,"event":{}}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		canon, ok := reencode(line)
		if !ok {
			return
		}
		req, code := DecodeEnvelope(line, decodeNow, time.Minute)
		again, code2 := DecodeEnvelope(canon, decodeNow, time.Minute)
		if code != code2 || !reflect.DeepEqual(req, again) {
			t.Fatalf("%q: %q %+v\nre-encoded %q: %q %+v", line, code, req, canon, code2, again)
		}
	})
}

// reencode decodes a JSON object generically and encodes it again. It
// reports false for what has no single re-encoding: invalid UTF-8 (the
// generic decoder would replace it), anything but one object, and keys
// that differ only in letter case (their order decides which one a field
// takes, and sorting changes the order).
func reencode(line []byte) ([]byte, bool) {
	if !utf8.Valid(line) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if _, ok := v.(map[string]any); !ok || caseVariants(v) {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// foldKey maps every rune of k to the least of its case folds (ſ, s and S
// are one), as encoding/json matches keys.
func foldKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

func caseVariants(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		seen := map[string]bool{}
		for k, x := range v {
			if seen[foldKey(k)] || caseVariants(x) {
				return true
			}
			seen[foldKey(k)] = true
		}
	case []any:
		for _, x := range v {
			if caseVariants(x) {
				return true
			}
		}
	}
	return false
}

// TestEveryMessageRoundTrips sends each message that crosses a process
// boundary through its one encoder and its one decoder, as the helper, the
// daemon and the clients use them, and checks that what arrives is what
// was sent: the events.sock request (with and without a pane, with a model
// and without) and its replies, and the attach frames of control.sock.
func TestEveryMessageRoundTrips(t *testing.T) {
	session := "0190f6f3-2a50-7000-8000-000000000001"
	event := Event{
		SchemaVersion: EventSchemaVersion,
		ID:            RawID{"B9AA8B83-B42D-4C11-B838-36B84C73032A"},
		RunID:         RawID{"74C4B46D-9251-46AD-9200-61C97D98D43D"},
		SessionID:     &session,
		SurfaceID:     RawID{"surface-1"},
		Provider:      "cursor",
		Kind:          KindApprovalRequested,
		OccurredAt:    time.Date(2026, 7, 16, 7, 0, 0, 123456789, time.UTC),
		Message:       "Bash: make test && echo <done>\n\x1b[2J",
		HookName:      "beforeShellExecution",
		Model:         "gpt-5",
	}
	noPane := event
	noPane.SurfaceID, noPane.Provider, noPane.SessionID = RawID{}, "codex", nil
	noModel := event
	noModel.Model, noModel.Message, noModel.HookName = "", "", ""
	for name, env := range map[string]Envelope{
		"in a pane":   {SchemaVersion: EventSchemaVersion, Capability: "cap-0123", Event: event},
		"no pane":     {SchemaVersion: EventSchemaVersion, Event: noPane},
		"no model":    {SchemaVersion: EventSchemaVersion, Capability: "cap-0123", Event: noModel},
		"at the edge": {SchemaVersion: EventSchemaVersion, Capability: "c", Event: withLimits(event)},
	} {
		line, err := EncodeEnvelope(env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
			t.Errorf("%s: %q is not one line", name, line)
		}
		got, code := DecodeEnvelope(line[:len(line)-1], event.OccurredAt, 0)
		if code != "" || !reflect.DeepEqual(got, env) {
			t.Errorf("%s: sent %+v\ndaemon read %+v (%q)", name, env, got, code)
		}
	}

	// What the daemon would refuse, the helper does not send.
	for name, mutate := range map[string]func(*Event){
		"hook name too long": func(e *Event) { e.HookName = strings.Repeat("h", MaxHookNameLen+1) },
		"reserved hook":      func(e *Event) { e.HookName = "muster.native.x" },
		"model with escape":  func(e *Event) { e.Model = "gpt\x1b[2J" },
		"session id spaced":  func(e *Event) { s := " x"; e.SessionID = &s },
		"no kind":            func(e *Event) { e.Kind = "" },
		"before 2000":        func(e *Event) { e.OccurredAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) },
		"too large":          func(e *Event) { e.Message = strings.Repeat("m", MaxEventRequest) },
	} {
		e := event
		mutate(&e)
		if line, err := EncodeEnvelope(Envelope{SchemaVersion: EventSchemaVersion, Event: e}); err == nil {
			t.Errorf("%s: encoded as %s", name, line)
		}
	}

	inserted, dup := true, false
	for _, resp := range append([]EventResponse{{OK: true, Inserted: &inserted}, {OK: true, Inserted: &dup}},
		func() (rs []EventResponse) {
			for _, c := range EventErrorCodes {
				rs = append(rs, EventResponse{Error: c})
			}
			return rs
		}()...) {
		line := EncodeEventResponse(resp)
		got, err := DecodeEventResponse(line[:len(line)-1])
		if err != nil || !reflect.DeepEqual(got, resp) {
			t.Errorf("reply %+v read back as %+v, %v", resp, got, err)
		}
	}
	if _, err := DecodeEventResponse(bytes.Repeat([]byte(" "), MaxEventResponse+1)); err == nil {
		t.Error("a reply over MaxEventResponse was read")
	}

	var wire bytes.Buffer
	frames := []struct {
		typ     byte
		payload []byte
	}{
		{FrameInput, []byte("ls\r")},
		{FrameResize, ResizePayload(MaxTermSize, 1)},
		{FrameOutput, bytes.Repeat([]byte("x"), 5000)},
		{FrameDetach, nil},
	}
	for _, f := range frames {
		if err := WriteFrame(&wire, f.typ, f.payload); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range frames {
		typ, payload, err := ReadFrame(&wire, nil)
		if err != nil || typ != f.typ || !bytes.Equal(payload, f.payload) {
			t.Errorf("frame %d %q read back as %d %q, %v", f.typ, f.payload, typ, payload, err)
		}
	}
	if cols, rows, err := ParseResize(ResizePayload(MaxTermSize, 1)); err != nil || cols != MaxTermSize || rows != 1 {
		t.Errorf("resize read back as %dx%d, %v", cols, rows, err)
	}
}

// withLimits is e with every bounded field at its limit.
func withLimits(e Event) Event {
	id := strings.Repeat("i", MaxIDLen)
	e.ID, e.RunID, e.SurfaceID, e.SessionID = RawID{id}, RawID{id}, RawID{id}, &id
	e.HookName = strings.Repeat("h", MaxHookNameLen)
	e.Model = strings.Repeat("m", MaxModelLen)
	e.Provider = "p" + strings.Repeat("-", 31)
	return e
}

func TestValidProvider(t *testing.T) {
	for p, want := range map[string]bool{
		"codex": true, "a": true, "0": true, "open.code_x-1": true, strings.Repeat("a", 32): true,
		"": false, "-a": false, ".a": false, "Codex": false, "co dex": false, strings.Repeat("a", 33): false, "é": false,
	} {
		if got := ValidProvider(p); got != want {
			t.Errorf("ValidProvider(%q) = %t, want %t", p, got, want)
		}
	}
}
