package memstore

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
)

// Tamper returns a drivertest.Tamperer that edits the space of s (a store
// opened on memstore) behind its back.
func Tamper(t *testing.T, s helm3.Store) drivertest.Tamperer {
	b, ok := envelope.Under(engine.Of(s).Backend()).(*memBackend)
	if !ok {
		t.Fatalf("%T is not a memstore store", s)
	}
	return tamperer{b.s}
}

type tamperer struct{ s *space }

func (tp tamperer) record(ns, key string) (*record, error) {
	r, ok := tp.s.heads[ns][key]
	if !ok {
		return nil, fmt.Errorf("no head %q in namespace %q", key, ns)
	}
	return r, nil
}

func (tp tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	tp.s.mu.RLock()
	defer tp.s.mu.RUnlock()
	r, err := tp.record(ns, key)
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	d := r.head.DigestText()
	return drivertest.StoredHead{Body: slices.Clone(r.head.Body), Chart: d.Chart, Values: d.Values, Manifest: d.Manifest}, nil
}

// SetHead stores the digests as a store that keeps them as text would: one
// that does not parse makes the head unreadable (its record's damage).
func (tp tamperer) SetHead(ctx context.Context, ns, key string, sh drivertest.StoredHead) error {
	tp.s.mu.Lock()
	defer tp.s.mu.Unlock()
	r, err := tp.record(ns, key)
	if err != nil {
		return err
	}
	d := r.head.DigestText()
	d.Chart, d.Values, d.Manifest = sh.Chart, sh.Values, sh.Manifest
	r.head.Body = slices.Clone(sh.Body)
	if err := r.head.SetDigestText(d); err != nil && r.damage == nil {
		r.damage = err
	}
	return nil
}

func (tp tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	tp.s.mu.RLock()
	defer tp.s.mu.RUnlock()
	p, err := tp.part(ns, d)
	if err != nil {
		return nil, err
	}
	return slices.Clone(p.frame), nil
}

func (tp tamperer) part(ns, d string) (*storedPart, error) {
	dg, err := driver.ParseDigest(d)
	if err != nil {
		return nil, err
	}
	p, ok := tp.s.parts[ns][dg]
	if !ok {
		return nil, fmt.Errorf("no part %s in namespace %q", d, ns)
	}
	return p, nil
}

func (tp tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	tp.s.mu.Lock()
	defer tp.s.mu.Unlock()
	p, err := tp.part(ns, d)
	if err != nil {
		return err
	}
	p.frame = slices.Clone(frame)
	return nil
}

func (tp tamperer) DeletePart(ctx context.Context, ns, d string) error {
	tp.s.mu.Lock()
	defer tp.s.mu.Unlock()
	dg, err := driver.ParseDigest(d)
	if err != nil {
		return err
	}
	delete(tp.s.parts[ns], dg)
	return nil
}

// GarbleHead makes the head unreadable to the backend itself, as a labels
// column that is not JSON would.
func (tp tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	tp.s.mu.Lock()
	defer tp.s.mu.Unlock()
	r, err := tp.record(ns, key)
	if err != nil {
		return err
	}
	r.damage = fmt.Errorf("release %q in namespace %q: %w: its stored labels cannot be read", key, ns, helm3.ErrCorrupt)
	return nil
}

// Wipe empties the space of s (a store opened on memstore) behind its back,
// as a server restarted without persistence would: the stores open on it
// stay open.
func Wipe(t *testing.T, s helm3.Store) {
	b, ok := envelope.Under(engine.Of(s).Backend()).(*memBackend)
	if !ok {
		t.Fatalf("%T is not a memstore store", s)
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	b.s.heads = map[string]map[string]*record{}
	b.s.parts = map[string]map[driver.Digest]*storedPart{}
}

// Reshape damages the fields of memstore's records. A head record has
// only its body to lose (its other fields are what the engine wrote, typed);
// a part record has a frame, a reference count and a size. Go values
// cannot change type: there is no WrongType variant.
func (tp tamperer) Reshape(ctx context.Context, tg drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	tp.s.mu.Lock()
	defer tp.s.mu.Unlock()
	if i > 0 {
		return "", drivertest.ErrNoVariant
	}
	if tg.Key != "" {
		r, err := tp.record(tg.Namespace, tg.Key)
		if err != nil {
			return "", err
		}
		if shape != drivertest.MissingField {
			return "", drivertest.ErrNoVariant
		}
		r.head.Body = nil
		return "head body removed", nil
	}
	p, err := tp.part(tg.Namespace, tg.Part)
	if err != nil {
		return "", err
	}
	switch shape {
	case drivertest.MissingField:
		p.frame = nil
		return "part frame removed", nil
	case drivertest.HugeCount:
		p.refs = 1 << 30
		return "part refs set to 2^30", nil
	case drivertest.HugeSize:
		p.size = 1 << 40
		return "part size set to 2^40", nil
	}
	return "", drivertest.ErrNoVariant
}
