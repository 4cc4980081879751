package envelope

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// The keyring record of a namespace: a head that holds the namespace's
// wrapped data key, under a key no Helm release has (codec.KeyringKey).
// The first writer creates it (Backend.Create: one wins), every writer
// uses the data key it holds, so all writers of a namespace address its
// parts alike. Wrap's backend hides it from every listing and count.
//
// A record is bound to its namespace: its body is the wrapped data key
// and a frame that data key sealed for the record's place (headAD of the
// namespace and the record's key), so a record copied from another
// namespace does not open there. And a data key of a namespace that has a
// KEK of its own is used only if that KEK, or one not given for another
// namespace, wrapped it (Keyring.Allowed): whoever holds one namespace's
// KEK cannot make a record another namespace's writers accept. A record
// that fails either check is driver.ErrCorrupt for its namespace, and
// nothing is written there.
const (
	keyringName    = "helmstore-keyring"
	keyringVersion = 0
	keyringStatus  = "keyring"
)

var keyringKey = codec.KeyringKey

// recordProof is what a record's frame seals.
const recordProof = "helmstore keyring record v1"

// isKeyring reports whether h is a namespace's keyring record.
func isKeyring(h *driver.Head) bool { return h.Key == keyringKey }

// errNoRecord is readRecord's error for a namespace without a record.
var errNoRecord = errors.New("no keyring record")

// record is a namespace's keyring record as read.
type record struct {
	head    *driver.Head
	wrapped Wrapped
	key     *DataKey // unwrapped
	// legacy marks a record made before records were bound to their
	// namespace (no frame): it is used if Keyring.Allowed says so, and
	// bound by the next writer or rewrap pass.
	legacy bool
}

// readRecord returns ns's keyring record, checked to be ns's, its data key
// unwrapped; errNoRecord if there is none, driver.ErrCorrupt if it is
// damaged or not ns's, ErrKeyUnavailable if the Keyring cannot unwrap it.
func (s *sealing) readRecord(ctx context.Context, ns string) (*record, error) {
	hs, err := s.b.Heads(ctx, driver.Query{Namespace: ns, Key: keyringKey})
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, errNoRecord
	}
	h := hs[0]
	inner, err := h.Unseal()
	if h.Err != nil || err != nil {
		return nil, recordCorrupt(ns, errors.Join(h.Err, err).Error())
	}
	enc, frame, err := splitBody(inner)
	if err != nil {
		return nil, recordCorrupt(ns, err.Error())
	}
	w, err := DecodeWrapped(enc)
	if err != nil {
		return nil, recordCorrupt(ns, err.Error())
	}
	if !s.ring.Allowed(ns, w.KEK) {
		return nil, recordCorrupt(ns, "its data key is wrapped by "+w.KEK+", another namespace's key-encryption key")
	}
	dk, err := s.unwrap(ctx, ns, w, enc)
	if err != nil {
		return nil, fmt.Errorf("the keyring record of namespace %q: %w", ns, err)
	}
	rec := &record{head: h, wrapped: w, key: dk, legacy: len(frame) == 0}
	if !rec.legacy {
		if p, err := dk.Open(frame, headAD(ns, keyringKey)); err != nil || string(p) != recordProof {
			return nil, recordCorrupt(ns, "it was not made for this namespace (copied from another?)")
		}
	}
	return rec, nil
}

func recordCorrupt(ns, why string) error {
	return fmt.Errorf("%w: the keyring record of namespace %q: %s", driver.ErrCorrupt, ns, why)
}

// writeRecord stores ns's record of dk, wrapped as enc: created if old is
// nil (driver.ErrReleaseExists if another writer's won), else in place of
// old.
func (s *sealing) writeRecord(ctx context.Context, ns string, dk *DataKey, enc []byte, old *driver.Head) error {
	rec := &driver.Head{Namespace: ns, Key: keyringKey, Name: keyringName, Version: keyringVersion,
		Status: keyringStatus, Owner: driver.Owner}
	rec.Seal(append(wrappedBody(enc), dk.Seal([]byte(recordProof), headAD(ns, keyringKey))...))
	if old == nil {
		return s.b.Create(ctx, rec, nil)
	}
	rec.ModifiedAt, rec.Labels = old.ModifiedAt, old.Labels
	return s.b.Update(ctx, rec, nil)
}

// writeKey returns the data key for new writes in ns, and its wrapped
// form if the current KEK wrapped it: the one ns's keyring record holds,
// read on every write (a store wiped or emptied behind this one's back
// gets a new record), created if there is none. A legacy record is bound
// to ns on the way.
func (s *sealing) writeKey(ctx context.Context, ns string) (*DataKey, []byte, error) {
	for range 3 {
		rec, err := s.readRecord(ctx, ns)
		if err == nil {
			if rec.legacy {
				err := s.writeRecord(ctx, ns, rec.key, rec.wrapped.Encode(), rec.head)
				if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
					return nil, nil, err
				}
			}
			s.mu.Lock()
			w := s.wrapped[rec.key.id]
			s.mu.Unlock()
			return rec.key, w, nil
		}
		if !errors.Is(err, errNoRecord) {
			return nil, nil, err
		}
		dk, err := NewDataKey()
		if err != nil {
			return nil, nil, err
		}
		w, err := s.ring.Wrap(ctx, ns, dk)
		if err != nil {
			return nil, nil, err
		}
		enc := w.Encode()
		switch err := s.writeRecord(ctx, ns, dk, enc, nil); {
		case err == nil:
			s.mu.Lock()
			s.keys[dk.id], s.wrapped[dk.id] = dk, enc
			s.mu.Unlock()
			return dk, enc, nil
		case errors.Is(err, driver.ErrReleaseExists):
			continue // another writer's record won: read it
		default:
			return nil, nil, err
		}
	}
	return nil, nil, fmt.Errorf("%w: namespace %q: its keyring record kept changing", driver.ErrConflict, ns)
}

// recordKey returns the data key id that ns's keyring record holds,
// unwrapped, if the record holds that key under a KEK the Keyring has; nil
// otherwise.
func (s *sealing) recordKey(ctx context.Context, ns string, id [idSize]byte) *DataKey {
	rec, err := s.readRecord(ctx, ns)
	if err != nil || rec.key.id != id {
		return nil
	}
	return rec.key
}

// wrappedBody is bodyMagic and the wrapped key enc, length-prefixed.
func wrappedBody(enc []byte) []byte {
	b := []byte{bodyMagic}
	b = binary.BigEndian.AppendUint16(b, uint16(len(enc)))
	return append(b, enc...)
}

// splitBody splits a sealed body (inside its head's seal) into the
// wrapped key it carries, encoded, and the frame after it.
func splitBody(body []byte) (enc, frame []byte, err error) {
	if len(body) < 3 || body[0] != bodyMagic {
		return nil, nil, ErrNotSealed
	}
	n := int(binary.BigEndian.Uint16(body[1:]))
	if len(body) < 3+n {
		return nil, nil, corrupt("sealed head body: truncated wrapped key")
	}
	return body[3 : 3+n], body[3+n:], nil
}
