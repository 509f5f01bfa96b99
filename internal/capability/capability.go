// Package capability issues and checks the per-surface event capabilities of
// seed 004: a random token of 256 bits that a pane receives in
// MUSTER_EVENT_CAPABILITY and that authorizes events for that surface only.
//
// The Set keeps only the SHA-256 hash of each token, compares in constant
// time, and forgets a surface's token the moment the surface is revoked. It
// authorizes nothing else (not terminal input, not screen capture, not other
// surfaces) and does no I/O beyond reading random bytes.
package capability

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
)

// TokenBytes is the entropy of a token: 256 bits.
const TokenBytes = 32

// TokenLen is the length of a token as text (unpadded base64url).
var TokenLen = base64.RawURLEncoding.EncodedLen(TokenBytes)

// ErrUnknownSurface is returned when granting for an empty surface id.
var ErrUnknownSurface = errors.New("surface id is empty")

// Hash is the SHA-256 of a token; the only form a Set stores.
type Hash [sha256.Size]byte

// HashOf hashes a token.
func HashOf(token string) Hash { return sha256.Sum256([]byte(token)) }

// NewToken returns a fresh random token.
func NewToken() (string, error) {
	var b [TokenBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Set maps live surfaces to the hash of their token. It is safe for
// concurrent use.
type Set struct {
	mu     sync.RWMutex
	hashes map[string]Hash
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{hashes: map[string]Hash{}} }

// Grant issues a new token for surface, replacing any earlier one, and
// returns it. The token itself is not kept.
func (s *Set) Grant(surface string) (string, error) {
	if surface == "" {
		return "", ErrUnknownSurface
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.hashes[surface] = HashOf(tok)
	s.mu.Unlock()
	return tok, nil
}

// Restore grants surface a token it was granted before, by an earlier
// daemon image: the program holding it runs on, and a running program's
// environment cannot be given a new one.
func (s *Set) Restore(surface, token string) error {
	if surface == "" || token == "" {
		return ErrUnknownSurface
	}
	s.mu.Lock()
	s.hashes[surface] = HashOf(token)
	s.mu.Unlock()
	return nil
}

// Revoke forgets surface's token; later checks for it fail.
func (s *Set) Revoke(surface string) {
	s.mu.Lock()
	delete(s.hashes, surface)
	s.mu.Unlock()
}

// Check reports whether token is the live token of surface. The comparison
// of hashes takes the same time wherever they differ.
func (s *Set) Check(surface, token string) bool {
	got := HashOf(token)
	s.mu.RLock()
	want, ok := s.hashes[surface]
	s.mu.RUnlock()
	if !ok {
		// Compare anyway so that an unknown surface costs what a known one does.
		want = Hash{}
	}
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1 && ok
}

// Live reports whether surface holds a token.
func (s *Set) Live(surface string) bool {
	s.mu.RLock()
	_, ok := s.hashes[surface]
	s.mu.RUnlock()
	return ok
}
