package httpauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// sealer encrypts and authenticates the values proxy mode hands to clients
// and browsers (client ids, state, codes, refresh tokens) with a key derived
// from JWT_SECRET, so that they are opaque, tamper-proof and valid on every
// replica sharing the secret. The purpose is bound as additional data: a
// value sealed as one kind never opens as another.
type sealer struct{ aead cipher.AEAD }

func newSealer(secret []byte) (*sealer, error) {
	block, err := aes.NewCipher(deriveKey(secret, "seal"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return b64.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

var errSealed = errors.New("invalid, forged or expired value")

// open decrypts text sealed for purpose into v.
func (s *sealer) open(purpose, text string, v any) error {
	if text == "" || len(text) > 16<<10 {
		return errSealed
	}
	raw, err := b64.DecodeString(text)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return errSealed
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return errSealed
	}
	if json.Unmarshal(plain, v) != nil {
		return errSealed
	}
	return nil
}

// usedSet remembers single-use values (authorisation codes, refresh tokens)
// until they expire anyway.
type usedSet struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// claim marks id used until exp; it returns false when id was used before.
func (u *usedSet) claim(id string, exp, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = make(map[string]time.Time)
	}
	if len(u.m) >= 1024 {
		for k, e := range u.m {
			if now.After(e) {
				delete(u.m, k)
			}
		}
	}
	if _, ok := u.m[id]; ok {
		return false
	}
	u.m[id] = exp
	return true
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return b64.EncodeToString(b)
}
