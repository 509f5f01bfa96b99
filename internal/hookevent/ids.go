package hookevent

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
)

// namespace is the UUIDv5 namespace of every id this package derives. It is
// part of the wire contract: the daemon's native turn estimator derives the
// same run ids through TurnRunID, so it must never change.
var namespace = [16]byte{
	0x9b, 0xf7, 0x1a, 0x3d, 0x6e, 0x38, 0x47, 0x9a,
	0x9f, 0xb8, 0x5f, 0x47, 0x9e, 0x60, 0xc0, 0x4a,
}

// nameUUID is an RFC 9562 version 5 UUID (SHA-1, name-based) of name in
// namespace, formatted in lower case.
func nameUUID(name string) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write([]byte(name))
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = (u[6] & 0x0f) | 0x50 // version 5
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 9562 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// TurnRunID is the run id of one prompt turn: a UUIDv5 of the provider and
// the provider's own turn identifier (Claude Code prompt_id, Codex turn_id,
// Cursor conversation_id + "/" + generation_id, OpenCode sessionID + "/" +
// user message id). The daemon's native turn estimator calls it with the
// same arguments so that a hook and the estimator land on the same run.
func TurnRunID(provider, turnKey string) string {
	return nameUUID("run\x00" + provider + "\x00" + turnKey)
}

// eventID derives an event id that is stable across the helper's own retries
// and across a provider re-running a hook with the same payload: the run, the
// hook, the kind and a hash of the raw payload.
func eventID(runID, hook string, kind string, payload []byte) string {
	sum := sha256.Sum256(payload)
	return nameUUID("event\x00" + runID + "\x00" + hook + "\x00" + kind + "\x00" + hex.EncodeToString(sum[:]))
}

// supersededEventID is the id of the `interrupted` event synthesized for a
// run that a new prompt replaced without a terminal hook of its own. It
// depends on the old run only, so every helper that notices it agrees.
func supersededEventID(oldRunID string) string {
	return nameUUID("superseded\x00" + oldRunID)
}
