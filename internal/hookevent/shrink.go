package hookevent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/proto"
)

// shrinkPayload brings a JSON payload over proto.MaxHookPayload under it
// by cutting its longest strings (a tool's input or output, a pasted
// prompt), so that the hook still reports its event: what maps a payload
// (names, ids, kinds) is short, and messages keep only their start anyway.
// Strings are cut at a rune boundary, longest first, to a length that
// shrinks until the payload fits; keys and numbers are kept.
func shrinkPayload(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, malformed("%d-byte payload: %v", len(b), err)
	}
	for limit := 64 << 10; limit >= 64; limit /= 4 {
		v = cutStrings(v, limit)
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, malformed("%d-byte payload: %v", len(b), err)
		}
		if out.Len() <= proto.MaxHookPayload {
			return out.Bytes(), nil
		}
	}
	return nil, fmt.Errorf("larger than %d bytes even with every string cut", proto.MaxHookPayload)
}

// cutStrings cuts every string of v longer than limit bytes.
func cutStrings(v any, limit int) any {
	switch v := v.(type) {
	case string:
		if len(v) <= limit {
			return v
		}
		i := limit
		for i > 0 && !utf8.RuneStart(v[i]) {
			i--
		}
		return v[:i] + "…"
	case map[string]any:
		for k, x := range v {
			v[k] = cutStrings(x, limit)
		}
	case []any:
		for i, x := range v {
			v[i] = cutStrings(x, limit)
		}
	}
	return v
}
