package codec

import (
	"crypto/sha256"
	"sync"

	"github.com/helmstore/helmstore/driver"
)

// Part is one content-addressed piece of a release, ready to store: the
// driver.Part a backend is given, with the canonical bytes the engine
// computes deltas from.
type Part struct {
	*driver.Part

	pieces  [][]byte // the canonical bytes, in pieces
	rawOnce sync.Once
	raw     []byte
}

// NewPart wraps canonical bytes as a part.
func NewPart(kind Kind, raw []byte) *Part { return NewPieces(kind, [][]byte{raw}) }

// NewPieces wraps canonical bytes given in pieces (a chart's sections and
// blobs, not copied) as a part.
func NewPieces(kind Kind, pieces [][]byte) *Part {
	h := sha256.New()
	n := 0
	for _, b := range pieces {
		h.Write(b)
		n += len(b)
	}
	var d Digest
	h.Sum(d[:0])
	p := &Part{pieces: pieces}
	p.Part = driver.NewPart(kind, d, n, func() []byte { return Compress(p.Raw()) })
	return p
}

// Raw returns the canonical bytes (assembled on first use).
func (p *Part) Raw() []byte {
	p.rawOnce.Do(func() {
		if len(p.pieces) == 1 {
			p.raw = p.pieces[0]
			return
		}
		p.raw = make([]byte, 0, p.Size)
		for _, b := range p.pieces {
			p.raw = append(p.raw, b...)
		}
	})
	return p.raw
}
