package drivertest

import "context"

// StoredHead is a release's head as a backend stores it, for Tamperer.
type StoredHead struct {
	// Body is the head's stored frame, exactly as the engine handed it to
	// the backend (engine.Head.Body).
	Body []byte
	// Chart, Values and Manifest are the part digests as 64 hex digits;
	// "" means the release has no such part. SetHead writes them as given,
	// even when they are not valid digests.
	Chart, Values, Manifest string
}

// Tamperer damages what a backend stored, behind the store's back, the way a
// failing disk, a bad restore, a hand edit or a hostile user with write
// access to the backing service would. Every backend provides one so the
// suite can check that damage is reported as driver.ErrCorrupt for the
// damaged release only, never as another release, a panic, or a failure of
// the whole namespace.
type Tamperer interface {
	// Head returns the stored head of key in namespace ns.
	Head(ctx context.Context, ns, key string) (StoredHead, error)
	// SetHead overwrites the stored head of key in ns (body and digests;
	// everything else, such as labels and status, is left as it is).
	SetHead(ctx context.Context, ns, key string, h StoredHead) error
	// Part returns the stored frame of the part with hex digest d in ns
	// (chunks joined, as the engine wrote it).
	Part(ctx context.Context, ns, d string) ([]byte, error)
	// SetPart overwrites the stored frame of part d in ns (chunk it as the
	// backend does).
	SetPart(ctx context.Context, ns, d string, frame []byte) error
	// DeletePart removes part d of ns from the store.
	DeletePart(ctx context.Context, ns, d string) error
	// GarbleHead damages the backend's own representation of the head of
	// key in ns (a labels column that is not JSON, a digest that is not
	// hex, a record that does not parse), so that reading it fails in the
	// backend itself rather than in the engine.
	GarbleHead(ctx context.Context, ns, key string) error
}
