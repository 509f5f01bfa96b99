package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// obj is a JSON object that keeps its keys in the order they were set, so
// that payloads and transcript records come out in the real CLIs' order.
type obj []field

type field struct {
	k string
	v any
}

// set replaces the value of k, or appends k.
func (o *obj) set(k string, v any) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, field{k, v})
}

// get returns the value of k.
func (o obj) get(k string) (any, bool) {
	for _, f := range o {
		if f.k == k {
			return f.v, true
		}
	}
	return nil, false
}

// with returns a copy of o with the fields of kv (key, value, key, value…)
// set in order.
func (o obj) with(kv ...any) obj {
	out := make(obj, len(o), len(o)+len(kv)/2)
	copy(out, o)
	for i := 0; i+1 < len(kv); i += 2 {
		out.set(kv[i].(string), kv[i+1])
	}
	return out
}

// o builds an obj from key, value pairs.
func o(kv ...any) obj { return obj(nil).with(kv...) }

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, as JavaScript's
// JSON.stringify and serde_json write.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustJSON marshals values built by this program; they always marshal.
func mustJSON(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeagent: marshal %T: %v", v, err))
	}
	return b
}

// newUUID is a random (version 4) UUID.
func newUUID() string { return uuid.NewString() }

// newUUIDv7 is a time-ordered UUID, as Codex uses for threads and turns.
func newUUIDv7() string {
	id, err := uuid.NewV7()
	if err != nil {
		return newUUID()
	}
	return id.String()
}

// randHex returns n random bytes in hex.
func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// isoMillis formats t as JavaScript's Date.toISOString does.
func isoMillis(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
