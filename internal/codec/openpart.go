package codec

import "fmt"

// hashAlongsideMin is the canonical size from which OpenPart hashes a part
// on a second goroutine while it decodes it: below it, starting a goroutine
// costs more than it saves.
const hashAlongsideMin = 256 << 10

// OpenPart decompresses frame, checks that its canonical bytes have digest
// want and decodes them as a part of kind k (a chart with chart): Open and
// DecodePart in one call.
// A large part is hashed while it is decoded, so a cold read of a chart
// waits for the longer of the two, not their sum. Decoding never trusts its
// input (any bytes give a part or an error), and a part whose digest does
// not match is discarded, so the overlap changes no outcome: a digest
// mismatch is reported whatever the decoder said.
func OpenPart(k Kind, frame []byte, want Digest, chart ChartDecoder) (*Decoded, error) {
	raw, err := decompress(frame, MaxPartBytes)
	if err != nil {
		return nil, err
	}
	if len(raw) < hashAlongsideMin {
		if got := Sum(raw); got != want {
			return nil, digestMismatch(got, want)
		}
		return DecodePart(k, raw, chart)
	}
	sum := make(chan Digest, 1)
	go func() { sum <- Sum(raw) }()
	d, err := DecodePart(k, raw, chart)
	if got := <-sum; got != want {
		return nil, digestMismatch(got, want)
	}
	return d, err
}

func digestMismatch(got, want Digest) error {
	return fmt.Errorf("%w: digest is %s, want %s", ErrCorrupt, got.Short(), want.Short())
}
