package backend

import (
	"bytes"
	"context"
	"sort"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Head is one stored revision without its parts.
type Head struct {
	Namespace  string
	Key        string
	Name       string
	Version    int
	Status     string
	Owner      string
	CreatedAt  int64 // unix seconds, set on Create
	ModifiedAt int64 // unix seconds, set on Update; 0 before
	// Labels are the custom labels (no system labels).
	Labels map[string]string
	// Body is the stored frame of the release without chart, values and
	// manifest (codec.Split.Body).
	Body []byte
	// Digests of the parts; the zero digest means the release has none.
	Chart, Values, Manifest codec.Digest
	// ValuesBase and ManifestBase are, when the values or manifest part is
	// stored as a delta (codec.Delta), the digest of the full part it is a
	// delta against (its keyframe); zero otherwise. The head references the
	// base as it references its other parts (Parts), so the base is kept
	// as long as any head using a delta against it.
	ValuesBase, ManifestBase codec.Digest

	// Summary fields, for backends that show them (crsplit printer
	// columns). Backends need not store them.
	ChartName, ChartVersion, AppVersion string

	// Err, set by a backend, says that the stored head could not be read
	// (garbage labels, a digest that does not parse, ...). Only Namespace
	// and Key need be set with it. The engine reports such a release as
	// corrupt (driver.ErrCorrupt naming it on Get, logged and skipped by
	// List and Query) and Delete must still remove it.
	Err error
}

// Parts returns references to the head's parts, chart first, each delta
// followed by its base.
func (h *Head) Parts() []PartRef {
	var out []PartRef
	for _, k := range codec.Kinds {
		if d := h.Digest(k); !d.IsZero() {
			base := h.Base(k)
			out = append(out, PartRef{Namespace: h.Namespace, Digest: d, Kind: k, Base: base})
			if !base.IsZero() {
				out = append(out, PartRef{Namespace: h.Namespace, Digest: base, Kind: k})
			}
		}
	}
	return out
}

// Base returns the digest of the base of the head's part of kind k, if that
// part is a delta (zero otherwise).
func (h *Head) Base(k codec.Kind) codec.Digest {
	switch k {
	case codec.KindValues:
		return h.ValuesBase
	case codec.KindManifest:
		return h.ManifestBase
	}
	return codec.Digest{}
}

// Refs returns the digests the head's seal covers.
func (h *Head) Refs() codec.Refs {
	return codec.Refs{Chart: h.Chart, Values: h.Values, Manifest: h.Manifest, ValuesBase: h.ValuesBase, ManifestBase: h.ManifestBase}
}

// Referenced returns, from parts, those h references, one per digest, sorted
// by digest: a fixed order in which to lock or write them, so concurrent
// writers sharing parts cannot deadlock each other.
func (h *Head) Referenced(parts []*codec.Part) []*codec.Part {
	want := map[codec.Digest]bool{}
	for _, r := range h.Parts() {
		want[r.Digest] = true
	}
	var out []*codec.Part
	for _, p := range parts {
		if want[p.Digest] {
			out = append(out, p)
			delete(want, p.Digest)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Digest[:], out[j].Digest[:]) < 0 })
	return out
}

// Digest returns the digest of the head's part of kind k.
func (h *Head) Digest(k codec.Kind) codec.Digest {
	switch k {
	case codec.KindChart:
		return h.Chart
	case codec.KindValues:
		return h.Values
	case codec.KindManifest:
		return h.Manifest
	}
	return codec.Digest{}
}

// PartRef names a part within a namespace.
type PartRef struct {
	Namespace string
	Digest    codec.Digest
	Kind      codec.Kind
	// Base is, for a part stored as a delta, the digest of its base part
	// (which the head references too); zero for a full part. Backends
	// need not look at it: they store every part the same way.
	Base codec.Digest
}

// Query selects heads. Empty and nil fields match anything.
type Query struct {
	Namespace  string // "": every namespace
	Key        string
	Name       string
	Status     string
	Version    *int
	CreatedAt  *int64
	ModifiedAt *int64
	// Labels are custom labels that must all be present with these values.
	Labels map[string]string
}

// Backend stores heads and parts. Methods must be safe for concurrent use.
//
// A backend keeps, atomically as seen by readers, this invariant: every part
// a head references is stored in the head's namespace before the head is
// visible, and a part is removed once no head in its namespace references it
// (never while one does).
type Backend interface {
	// Heads returns the heads matching q, ordered by namespace, name and
	// version.
	Heads(ctx context.Context, q Query) ([]*Head, error)

	// Parts returns the stored frames of the referenced parts, by digest.
	// A part that is not stored is absent from the map.
	Parts(ctx context.Context, refs []PartRef) (map[codec.Digest][]byte, error)

	// Create stores h and its parts (parts holds at least every part h
	// references; those already stored are referenced, not rewritten).
	// It returns driver.ErrReleaseExists if h.Namespace already holds h.Key.
	Create(ctx context.Context, h *Head, parts []*codec.Part) error

	// Update replaces the head stored under h.Namespace and h.Key, keeping
	// its CreatedAt, and adjusts part references. It returns
	// driver.ErrReleaseNotFound if there is no such head.
	Update(ctx context.Context, h *Head, parts []*codec.Part) error

	// Delete removes the head and every part no other head references
	// (only the head, when it does not Verify),
	// returning the head and, read before anything was removed, the frames of
	// its parts for which have returns false. It returns
	// driver.ErrReleaseNotFound if there is no such head.
	Delete(ctx context.Context, namespace, key string, have func(codec.Digest) bool) (*Head, map[codec.Digest][]byte, error)

	// Stats reports what is stored in namespace ("": all).
	Stats(ctx context.Context, namespace string) (driver.Stats, error)

	// Close releases the backend's resources.
	Close() error
}

// Verify returns an error when the part digests of h cannot be trusted: its
// seal over body, key and digests does not match (a head edited, copied from
// another release, or unreadable). A backend deleting such a head must not
// drop references to the digests it names: they may be another release's
// parts. A head with Err whose seal still verifies (only its labels were
// damaged, say) names its own parts.
func (h *Head) Verify() error {
	_, err := codec.OpenHeadRefs(h.Body, h.Key, h.Refs())
	return err
}
