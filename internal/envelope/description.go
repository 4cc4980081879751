package envelope

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// A revision's description is stored beside its head's index fields, for
// summary listings that read no body (driver.Head.Description). It can
// quote a value: a failed upgrade's description is the Kubernetes error,
// which may hold a line of the manifest. So a store that encrypts stores it
// sealed like a body, by the namespace's data key and bound to its place:
// descriptionPrefix and the frame in base64url. A listing with the key
// shows it opened; a store without the key shows it as stored.

// maxSealedDescription bounds the description a head's summary holds
// sealed; a longer one is left out, and the summary marked as not
// recorded (driver.SummaryFields.HasSummary), so that a listing reads that
// release whole (its body holds the description, sealed as the body is).
const maxSealedDescription = 8 << 10

// descriptionPrefix begins a sealed description.
const descriptionPrefix = "helmstore-sealed:"

func descriptionAD(ns, key string) []byte { return []byte("description\x00" + ns + "\x00" + key) }

// sealDescription returns desc of release key in ns sealed by dk ("" for
// "").
func sealDescription(dk *DataKey, ns, key, desc string) string {
	if desc == "" {
		return ""
	}
	return descriptionPrefix + base64.RawURLEncoding.EncodeToString(dk.Seal([]byte(desc), descriptionAD(ns, key)))
}

// openDescription opens h's description in place, with dk if it sealed it
// (the key of h's body, if open found one) or else the data key the frame
// names. Only a head with its summary recorded (driver.Head.HasSummary)
// is opened: a listing reads the others whole, and a backend may have cut
// their description. A description that does not open makes h damaged (Err); a data
// key the Keyring cannot unwrap fails the call, as for a body.
func (s *sealing) openDescription(ctx context.Context, h *driver.Head, dk *DataKey) error {
	if h.Err != nil || !h.HasSummary || !strings.HasPrefix(h.Description, descriptionPrefix) {
		return nil
	}
	frame, err := base64.RawURLEncoding.DecodeString(h.Description[len(descriptionPrefix):])
	if err != nil {
		h.Err, h.Description = corrupt("its sealed description is not base64"), ""
		return nil
	}
	id, err := FrameKey(frame)
	if err != nil {
		h.Err, h.Description = err, ""
		return nil
	}
	if dk == nil || dk.id != id {
		if dk, err = s.keyOfDescription(ctx, h, id); err != nil {
			return err
		}
	}
	if dk == nil {
		h.Err, h.Description = corrupt(fmt.Sprintf("its description is sealed by data key %x, which neither its namespace's keyring record nor its head holds", id)), ""
		return nil
	}
	plain, err := dk.Open(frame, descriptionAD(h.Namespace, h.Key))
	if err != nil {
		h.Err, h.Description = fmt.Errorf("its description: %w", err), ""
		return nil
	}
	h.Description = string(plain)
	return nil
}

// keyOfDescription returns the data key id of h's namespace: known, or the
// one the namespace's keyring record holds, or else the one h's stored
// body carries (a head a listing returned without its body); nil if none
// of them is that key.
func (s *sealing) keyOfDescription(ctx context.Context, h *driver.Head, id [idSize]byte) (*DataKey, error) {
	s.mu.Lock()
	dk := s.keys[id]
	s.mu.Unlock()
	if dk != nil {
		return dk, nil
	}
	if dk := s.recordKey(ctx, h.Namespace, id); dk != nil {
		return dk, nil
	}
	hs, err := s.b.Heads(ctx, driver.Query{Namespace: h.Namespace, Key: h.Key})
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	dk, err = s.open(ctx, hs[0], nil)
	if err != nil || dk == nil || dk.id != id {
		return nil, err
	}
	return dk, nil
}
