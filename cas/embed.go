package cas

import (
	"github.com/helmstore/helmstore/driver"
)

// embedSmallBytes: a full part (not a delta) is embedded in its head only
// if its frame is at most this many bytes. Larger full parts are what
// later revisions' deltas are taken against, and are shared by them, so
// they get part objects of their own.
const embedSmallBytes = 1 << 10

// embedParts splits add, the parts the head h newly references, into the
// frames its head object embeds and the parts stored as part objects.
// carried are the frames the head it replaces embedded for parts h still
// references (an Update keeps them embedded: they have no object). Embedded
// are h's own values and manifest parts that are deltas or small, while
// the frames fit in Config.EmbedBytes; never the chart, nor a delta's base.
func (b *Backend) embedParts(h *driver.Head, add []*driver.Part, carried []EmbeddedFrame) (embedded []EmbeddedFrame, rest []*driver.Part) {
	embedded = carried
	budget := b.cfg.EmbedBytes
	for _, e := range carried {
		budget -= len(e.Data)
	}
	for _, p := range add {
		own := p.Kind != driver.KindChart && p.Digest == h.Digest(p.Kind)
		delta := !h.Base(p.Kind).IsZero()
		if own && (delta || p.Size <= embedSmallBytes) {
			if f := p.Frame(); len(f) <= budget && (delta || len(f) <= embedSmallBytes) {
				budget -= len(f)
				embedded = append(embedded, EmbeddedFrame{Digest: p.Digest.String(), Size: int64(p.Size), Data: f})
				continue
			}
		}
		rest = append(rest, p)
	}
	return embedded, rest
}

// carriedFrames returns the frames old embeds for parts h references.
func carriedFrames(old *Object, h *driver.Head) []EmbeddedFrame {
	if old.Head == nil || len(old.Head.Embedded) == 0 {
		return nil
	}
	refs := map[string]bool{}
	for _, r := range h.Parts() {
		refs[r.Digest.String()] = true
	}
	var out []EmbeddedFrame
	for _, e := range old.Head.Embedded {
		if refs[e.Digest] {
			refs[e.Digest] = false // once each
			out = append(out, e)
		}
	}
	return out
}

// objectRefs returns those of refs, the parts the head object obj
// references, that are part objects: not embedded in obj.
func objectRefs(obj *Object, refs []driver.PartRef) []driver.PartRef {
	if obj.Head == nil || len(obj.Head.Embedded) == 0 {
		return refs
	}
	out := refs[:0:0]
	for _, r := range refs {
		if _, ok := obj.Head.frame(r.Digest.String()); !ok {
			out = append(out, r)
		}
	}
	return out
}

// embeddedFrames returns the frames obj embeds for the parts h (obj's head)
// references, by digest, for driver.Head.Frames. Frames for digests h does
// not reference are left out (they would stand for nothing).
func embeddedFrames(obj *Object, h *driver.Head) map[driver.Digest][]byte {
	if obj.Head == nil || len(obj.Head.Embedded) == 0 {
		return nil
	}
	var out map[driver.Digest][]byte
	for _, r := range h.Parts() {
		if f, ok := obj.Head.frame(r.Digest.String()); ok {
			if out == nil {
				out = map[driver.Digest][]byte{}
			}
			out[r.Digest] = f
		}
	}
	return out
}

// embeddedKind returns the kind of the part with digest d (as text) that
// the head record h embeds: the kind whose digest in h.Parts is d.
func embeddedKind(h *HeadRecord, d string) (driver.Kind, bool) {
	switch d {
	case "":
		return 0, false
	case h.Parts.Values:
		return driver.KindValues, true
	case h.Parts.Manifest:
		return driver.KindManifest, true
	case h.Parts.Chart:
		return driver.KindChart, true
	}
	return 0, false
}
