package castest

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
)

// WithEmbedded extends t, a backend's tamperer, to the part frames head
// objects embed (cas.HeadRecord.Embedded), reading and writing the heads
// through the backend's own ObjectStore s (by compare-and-swap, as a user
// with write access to the service would edit them). Part returns part d
// from its part object or, if it has none, from a head of ns embedding it;
// SetPart and DeletePart damage every copy: the part object, if there is
// one, and the frame in each head embedding d. Each fails if d has no copy
// at all. t's other methods are used as they are.
//
// If t is a drivertest.Reshaper, so is the result: Reshape is t's (which
// must find embedded parts itself).
func WithEmbedded(t drivertest.Tamperer, s cas.ObjectStore) drivertest.Tamperer {
	e := embeddedParts{Tamperer: t, store: s}
	if r, ok := t.(drivertest.Reshaper); ok {
		return reshapingParts{e, r}
	}
	return e
}

// reshapingParts is embeddedParts over a Tamperer that is a Reshaper.
type reshapingParts struct {
	embeddedParts
	drivertest.Reshaper
}

type embeddedParts struct {
	drivertest.Tamperer
	store cas.ObjectStore
}

// Part returns the frame of part d in ns.
func (t embeddedParts) Part(ctx context.Context, ns, d string) ([]byte, error) {
	f, err := t.Tamperer.Part(ctx, ns, d)
	if err == nil {
		return f, nil
	}
	heads, herr := t.embedding(ctx, ns, d)
	if herr != nil {
		return nil, herr
	}
	if len(heads) == 0 {
		return nil, err
	}
	f, _ = EmbeddedFrame(heads[0].Head, d)
	return f, nil
}

// SetPart overwrites every copy of part d in ns with frame.
func (t embeddedParts) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	return t.each(ctx, ns, d, func(ctx context.Context) error { return t.Tamperer.SetPart(ctx, ns, d, frame) },
		func(e *cas.EmbeddedFrame) bool { e.Data = frame; return true })
}

// DeletePart removes every copy of part d in ns.
func (t embeddedParts) DeletePart(ctx context.Context, ns, d string) error {
	return t.each(ctx, ns, d, func(ctx context.Context) error { return t.Tamperer.DeletePart(ctx, ns, d) },
		func(e *cas.EmbeddedFrame) bool { return false })
}

// each applies object to part d's part object and edit to each frame of d
// that a head of ns embeds (edit false: the frame is removed).
func (t embeddedParts) each(ctx context.Context, ns, d string, object func(context.Context) error, edit func(*cas.EmbeddedFrame) bool) error {
	objErr := object(ctx)
	heads, err := t.embedding(ctx, ns, d)
	if err != nil {
		return err
	}
	if len(heads) == 0 {
		return objErr
	}
	for _, h := range heads {
		if err := t.editHead(ctx, h.Ref(), d, edit); err != nil {
			return err
		}
	}
	return nil
}

// editHead edits the frames of d that the head ref embeds, at the version
// read (read again if another write came between).
func (t embeddedParts) editHead(ctx context.Context, ref cas.Ref, d string, edit func(*cas.EmbeddedFrame) bool) error {
	for attempt := 0; attempt < 20; attempt++ {
		o, err := t.store.Get(ctx, ref, cas.ReadOptions{})
		if err != nil {
			return err
		}
		if o.Head == nil {
			return fmt.Errorf("head %s: no record", ref.Name)
		}
		kept := o.Head.Embedded[:0:0]
		for _, e := range o.Head.Embedded {
			if e.Digest == d && !edit(&e) {
				continue
			}
			kept = append(kept, e)
		}
		o.Head.Embedded = kept
		if _, err = t.store.Replace(ctx, o); !errors.Is(err, cas.ErrVersionMismatch) {
			return err
		}
	}
	return fmt.Errorf("head %s: kept changing while being edited", ref.Name)
}

// embedding returns the head objects of ns that embed part d.
func (t embeddedParts) embedding(ctx context.Context, ns, d string) ([]*cas.Object, error) {
	objs, err := t.store.List(ctx, cas.Selector{Kind: cas.KindHead, Namespace: ns})
	if err != nil {
		return nil, err
	}
	var out []*cas.Object
	for _, o := range objs {
		if o.Head == nil || o.Err != nil {
			continue
		}
		if _, ok := EmbeddedFrame(o.Head, d); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// EmbeddedFrame returns the frame h embeds for the part with digest d (as
// text).
func EmbeddedFrame(h *cas.HeadRecord, d string) ([]byte, bool) {
	for _, e := range h.Embedded {
		if e.Digest == d {
			return e.Data, true
		}
	}
	return nil, false
}
