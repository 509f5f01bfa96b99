package stats

import (
	"bytes"
	"testing"
)

// TestDeepDetailIsRefused: a stored detail of 16 MiB of '[' (gjson.Valid
// overflowed the stack on it, killing the process) is not decoded.
func TestDeepDetailIsRefused(t *testing.T) {
	if _, ok := decodeBrief(bytes.Repeat([]byte("["), 16<<20)); ok {
		t.Error("a deep detail was decoded")
	}
}
