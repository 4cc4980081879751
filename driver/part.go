package driver

import "sync"

// Part is one content-addressed piece of a release (its chart, values or
// manifest) as an engine hands it to Backend.Create and Backend.Update. A
// backend stores Frame() under Digest, and may record Kind and Size. Frame
// is computed on first use, so a backend that already holds the part should
// not call it.
type Part struct {
	Kind Kind
	// Digest addresses the part: the SHA-256 of its canonical bytes, or for
	// a delta part, a digest over Base and Content.
	Digest Digest
	// Size is the length of the part's canonical (uncompressed) bytes.
	Size int
	// Base is, for a part stored as a delta, the digest of the full part it
	// is a delta against (which the head references too); zero for a full
	// part. Backends store every part the same way and need not look at it.
	Base Digest
	// Content is, for a delta part, the SHA-256 of its canonical bytes
	// (for a full part, Digest is).
	Content Digest
	// Rewrite, set by the engine, says that a read found the stored copy
	// of this part in the head's namespace damaged (its bytes did not hash
	// to Digest or did not decode, or it could not be read whole): the
	// backend writes Frame() over that copy in this write, as atomically
	// as the rest of it, whether or not the write adds a reference to it
	// (Rewrites), keeping (or, where they were damaged too, counting
	// again) the references of the heads that use it. A part the write
	// does not need to store is never rewritten otherwise.
	Rewrite bool

	encode func() []byte
	once   sync.Once
	frame  []byte
}

// NewPart returns a part whose stored frame encode makes, on the first call
// of Frame only. Engines make parts; a backend's own tests may too.
func NewPart(kind Kind, digest Digest, size int, encode func() []byte) *Part {
	return &Part{Kind: kind, Digest: digest, Size: size, encode: encode}
}

// Frame returns the part as stored (compressed), made on first use.
func (p *Part) Frame() []byte {
	p.once.Do(func() {
		if p.encode != nil {
			p.frame = p.encode()
		}
	})
	return p.frame
}

// ToRewrite returns a part like p marked Rewrite, whose frame is p's
// (made once, by p): p itself, which other writes may be using, is left
// as it is.
func (p *Part) ToRewrite() *Part {
	q := NewPart(p.Kind, p.Digest, p.Size, p.Frame)
	q.Base, q.Content, q.Rewrite = p.Base, p.Content, true
	return q
}

// IsDelta reports whether p is stored as a delta against another part.
func (p *Part) IsDelta() bool { return !p.Base.IsZero() }

// Size limits, the same on every backend, enforced by the engine when a
// release is written and again on every read, so that stored bytes can never
// make a reader allocate more: a frame that claims or inflates to more than
// its limit is corrupt (a decompression bomb). A backend must store parts and
// heads up to these sizes (in chunks if its values are smaller: Chunks).
const (
	// MaxPartBytes bounds one part (chart, values or manifest)
	// uncompressed. Helm itself refuses charts over 100 MiB decompressed.
	MaxPartBytes = 256 << 20
	// MaxHeadBytes bounds a release's head: its JSON without chart, values
	// and manifest (info, notes, hooks), uncompressed.
	MaxHeadBytes = 32 << 20
)
