package cas_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

var _ drivertest.Reshaper = tamperer{}

// objectReshape is one way of damaging a stored object: fn edits it and
// reports whether it applies (what it changes is there); garble, instead,
// makes the object undecodable (the in-memory store's wrong type: its
// objects have Go types, so a field of another type is one that does not
// decode).
type objectReshape struct {
	what   string
	fn     func(o *cas.Object) bool
	garble bool
}

var garbled = objectReshape{what: "the object no longer decodes", garble: true}

var headReshapes = map[drivertest.Shape][]objectReshape{
	drivertest.WrongType: {garbled},
	drivertest.MissingField: {
		{what: "head record removed", fn: func(o *cas.Object) bool { o.Head = nil; return true }},
		{what: "head key removed", fn: func(o *cas.Object) bool { o.Head.Key = ""; return true }},
		{what: "body removed", fn: func(o *cas.Object) bool { o.Head.Body, o.Head.BodyChunks = nil, nil; return true }},
		{what: "chart digest removed", fn: func(o *cas.Object) bool { o.Head.Parts.Chart = ""; return true }},
	},
	drivertest.HugeCount: {
		{what: "body claims 2^30 chunks", fn: func(o *cas.Object) bool { chunkedBody(o.Head).Count = castest.HugeCount; return true }},
	},
	drivertest.HugeSize: {
		{what: "body claims 2^40 bytes in chunks", fn: func(o *cas.Object) bool { chunkedBody(o.Head).Size = castest.HugeSize; return true }},
	},
}

// chunkedBody returns h's chunk set, making one (and dropping the inline
// body) if the body is inline.
func chunkedBody(h *cas.HeadRecord) *cas.ChunkSet {
	if h.BodyChunks == nil {
		h.BodyChunks = &cas.ChunkSet{ID: "00000000", Count: 1, Size: int64(len(h.Body)), Digest: fmt.Sprintf("%064d", 0)}
		h.Body = nil
	}
	return h.BodyChunks
}

var partReshapes = map[drivertest.Shape][]objectReshape{
	drivertest.WrongType: {garbled},
	drivertest.MissingField: {
		{what: "part record removed", fn: func(o *cas.Object) bool { o.Part = nil; return true }},
		{what: "inline frame removed", fn: func(o *cas.Object) bool { ok := o.Part.Chunks == 0; o.Part.Data = nil; return ok }},
		{what: "chunk count removed", fn: func(o *cas.Object) bool { ok := o.Part.Chunks > 0; o.Part.Chunks = 0; return ok }},
		{what: "referrers removed", fn: func(o *cas.Object) bool { o.Referrers = nil; return true }},
	},
	drivertest.HugeCount: {
		{what: "chunk count 2^30", fn: func(o *cas.Object) bool { o.Part.Chunks = castest.HugeCount; return true }},
		{what: "chunk count 2^30 and stored size 2^40", fn: func(o *cas.Object) bool {
			o.Part.Chunks, o.Part.StoredSize = castest.HugeCount, castest.HugeSize
			return true
		}},
	},
	drivertest.HugeSize: {
		{what: "stored size 2^40", fn: func(o *cas.Object) bool { o.Part.StoredSize = castest.HugeSize; return true }},
		{what: "canonical size 2^40", fn: func(o *cas.Object) bool { o.Part.Size = castest.HugeSize; return true }},
	},
}

var chunkReshapes = map[drivertest.Shape][]objectReshape{
	drivertest.WrongType: {{what: "the first chunk no longer decodes", garble: true}},
	drivertest.MissingField: {
		{what: "first chunk's record removed", fn: func(o *cas.Object) bool { o.Chunk = nil; return true }},
		{what: "first chunk's data removed", fn: func(o *cas.Object) bool { o.Chunk.Data = nil; return true }},
	},
}

// embeddedReshapes edit the frame of part d in a head that embeds it.
func embeddedReshapes(d string) map[drivertest.Shape][]objectReshape {
	each := func(what string, fn func(e *cas.EmbeddedFrame)) objectReshape {
		return objectReshape{what: what, fn: func(o *cas.Object) bool {
			done := false
			for i := range o.Head.Embedded {
				if o.Head.Embedded[i].Digest == d {
					fn(&o.Head.Embedded[i])
					done = true
				}
			}
			return done
		}}
	}
	return map[drivertest.Shape][]objectReshape{
		drivertest.WrongType:    {garbled},
		drivertest.MissingField: {each("embedded frame removed", func(e *cas.EmbeddedFrame) { e.Data = nil })},
		drivertest.HugeSize:     {each("embedded size 2^40", func(e *cas.EmbeddedFrame) { e.Size = castest.HugeSize })},
	}
}

// Reshape implements drivertest.Reshaper on the stored objects: the
// head's; or the part's and its first chunk (or, for a part the heads
// embed, every head embedding it, alike).
func (tp tamperer) Reshape(ctx context.Context, target drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	type group struct {
		objs []*cas.Object
		rs   []objectReshape
	}
	var groups []group
	if target.Key != "" {
		o, err := tp.object(target.Namespace, target.Key, cas.KindHead)
		if err != nil {
			return "", err
		}
		groups = append(groups, group{[]*cas.Object{o}, headReshapes[shape]})
	} else {
		o, err := tp.object(target.Namespace, target.Part, partKinds...)
		switch {
		case err == nil:
			groups = append(groups, group{[]*cas.Object{o}, partReshapes[shape]})
			if o.Part != nil && o.Part.Chunks > 0 {
				c, err := tp.object(target.Namespace, caswire.ChunkName(o.UID, "", 0), cas.KindChunk)
				if err != nil {
					return "", err
				}
				groups = append(groups, group{[]*cas.Object{c}, chunkReshapes[shape]})
			}
		case errors.Is(err, cas.ErrNotFound):
			g := group{rs: embeddedReshapes(target.Part)[shape]}
			for _, h := range tp.s.Objects(cas.KindHead) {
				if _, ok := castest.EmbeddedFrame(h.Head, target.Part); ok && h.Namespace == target.Namespace {
					g.objs = append(g.objs, h)
				}
			}
			if len(g.objs) == 0 {
				return "", err
			}
			groups = append(groups, g)
		default:
			return "", err
		}
	}
	for _, g := range groups {
		for _, r := range g.rs {
			if !r.garble && !r.fn(clone(g.objs[0])) {
				continue
			}
			if i > 0 {
				i--
				continue
			}
			for _, o := range g.objs {
				var err error
				if r.garble {
					err = tp.s.Garble(o.Ref())
				} else {
					err = tp.s.Edit(o.Ref(), func(o *cas.Object) { r.fn(o) })
				}
				if err != nil {
					return "", err
				}
			}
			return r.what, nil
		}
	}
	return "", drivertest.ErrNoVariant
}

// clone returns a copy of o to try a reshape on: its record copied one
// level deep (what the reshapes change).
func clone(o *cas.Object) *cas.Object {
	c := *o
	if o.Head != nil {
		c.Head = castest.CloneHead(o.Head)
	}
	if o.Part != nil {
		p := *o.Part
		c.Part = &p
	}
	if o.Chunk != nil {
		ch := *o.Chunk
		c.Chunk = &ch
	}
	return &c
}
