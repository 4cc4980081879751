package driver

import (
	"context"
)

// Head is one stored revision without its parts: what a backend stores per
// release, beside the parts it references. The engine fills every field on a
// write; a backend stores them and gives them back from Heads and Delete.
type Head struct {
	Namespace string
	Key       string // Helm's key, sh.helm.release.v1.<name>.v<version>
	Name      string
	Version   int
	Status    string
	Owner     string // always Owner ("helm")
	// CreatedAt is set by the engine on Create (unix seconds) and is zero
	// in the head given to Update: the backend keeps the stored one
	// (KeepCreatedAt).
	CreatedAt int64
	// ModifiedAt is set by the engine on Update (unix seconds); zero
	// before the first Update.
	ModifiedAt int64
	// Labels are the custom labels, already validated by the engine
	// (Kubernetes label syntax, at most MaxLabels, none a system label or
	// under ReservedLabelPrefix). System labels are derived from the
	// fields above (AllLabels) and never stored here.
	Labels map[string]string
	// Body is the stored frame of the release without chart, values and
	// manifest, sealed over the key and the part digests: opaque bytes a
	// backend stores and returns as they are.
	Body []byte
	// Digests of the parts; the zero digest means the release has none.
	Chart, Values, Manifest Digest
	// ValuesBase and ManifestBase are, when the values or manifest part is
	// stored as a delta, the digest of the full part it is a delta against
	// (its keyframe); zero otherwise. The head references the base as it
	// references its other parts (Parts), so the base is kept as long as
	// any head using a delta against it.
	ValuesBase, ManifestBase Digest

	// SummaryFields are what a listing shows of the revision besides its
	// name, version, status and labels, set by the engine on every write
	// whatever the size of the release: a backend showing them (crsplit's
	// printer columns) never needs to decode Body, which may be stored in
	// pieces. A backend stores them with the head and returns them from
	// List, which serves summary listings from them alone; Heads and
	// Delete need not return them. Everything else about a release is in
	// Body and the parts.
	SummaryFields

	// Frames holds, by digest, the frames of those of the head's parts
	// that the backend keeps with the head itself instead of as parts of
	// their own (cas embeds small deltas in the head object: no object to
	// create, refer to and read apart), or read with it (Query.Frames). A
	// backend sets it in the heads it returns from Heads and Delete; the
	// engine takes those parts from here, verified against their digests
	// as any part, and asks Parts only for the others. Nil for a backend
	// that keeps every part apart and ignores Query.Frames.
	Frames map[Digest][]byte

	// Err, set by a backend, says that the stored head could not be read
	// (garbage labels, a digest that does not parse, ...). Only Namespace
	// and Key need be set with it. The engine reports such a release as
	// corrupt (ErrCorrupt naming it on Get, logged and skipped by
	// List and Query) and Delete must still remove it.
	Err error
}

// KeepCreatedAt sets h.CreatedAt to that of old, the stored head that h
// replaces: Backend.Update keeps the time a release was created, which the
// engine does not know without reading the head first. A backend that
// writes heads whole calls it with the head it read to diff the parts; one
// that updates fields in place simply leaves its stored CreatedAt alone.
func (h *Head) KeepCreatedAt(old *Head) { h.CreatedAt = old.CreatedAt }

// Parts returns references to the head's parts, chart first, each delta
// followed by its base.
func (h *Head) Parts() []PartRef {
	var out []PartRef
	for _, k := range kinds {
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
func (h *Head) Base(k Kind) Digest {
	switch k {
	case KindValues:
		return h.ValuesBase
	case KindManifest:
		return h.ManifestBase
	}
	return Digest{}
}

// Digest returns the digest of the head's part of kind k.
func (h *Head) Digest(k Kind) Digest {
	switch k {
	case KindChart:
		return h.Chart
	case KindValues:
		return h.Values
	case KindManifest:
		return h.Manifest
	}
	return Digest{}
}

// PartRef names a part within a namespace.
type PartRef struct {
	Namespace string
	Digest    Digest
	Kind      Kind
	// Base is, for a part stored as a delta, the digest of its base part
	// (which the head references too); zero for a full part. Backends
	// need not look at it: they store every part the same way.
	Base Digest
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

	// Frames, a hint that changes no result, asks for the frames of the
	// parts the heads reference (bases included) in their Head.Frames, if
	// the backend can read them in the same round trip as the heads (the
	// SQL backend: in the same statement). The engine sets it when its part
	// cache is empty, so that a process that has read nothing yet gets a
	// release in one round trip. A backend may ignore it.
	Frames bool
}

// Backend stores heads and parts for the engine under a face (helm3.New
// puts one over a Backend), which implements every rule of Helm's drivers
// on top of it: keys, namespaces, label validation (ReservedLabelPrefix
// included), system labels, errors, CreatedAt and ModifiedAt, which parts
// to read, verifying what is read.
// A backend is a translation of these eight methods to a store; the helpers
// of this package (Query.Matches, SortHeads, DiffParts, PlanDelete,
// Head.DigestText, Chunks and JoinChunks, ...) hold the logic
// every backend needs. Package memstore is a complete one to copy.
//
// What a backend must do:
//   - Methods are safe for concurrent use, by this process and, for a
//     shared store, by other processes with their own Backend over it.
//   - Every write is atomic for readers: Heads and Parts see a head before
//     or after a write, never a mix of two writes, and never a head whose
//     parts are not all stored. Concurrent Updates of one head: the last
//     writer wins (no conflict error; see ErrConflict).
//   - Parts are content-addressed per namespace: a part is stored once per
//     namespace under its digest, however many heads there reference it,
//     and removed once no head in its namespace references it (never while
//     one does). A delta's base (Head.ValuesBase, Head.ManifestBase) is a
//     reference like any other (Head.Parts lists them all).
//   - Heads of namespaces are independent: the same key or part may be
//     stored in several namespaces.
//   - A failure to reach the store is returned as an error that is not
//     ErrReleaseNotFound: it wraps ErrUnavailable (ErrAccessDenied when
//     the service refuses the credentials or a right); context
//     cancellation is honoured.
//
// What a backend need not do: validate anything (the engine has), decode
// or verify bodies and frames (the engine checks every digest and seal and
// reports damage as ErrCorrupt), cache (the engine has a part cache), read
// ahead, build releases, or store the summary fields.
type Backend interface {
	// Heads returns the heads matching q (Query.Matches), ordered by
	// namespace, name and version (SortHeads). A stored head that cannot
	// be read is returned with Err set (if it may match q) rather than
	// failing the call: one damaged release must not hide the others.
	Heads(ctx context.Context, q Query) ([]*Head, error)

	// Parts returns the stored frames of the referenced parts, by digest,
	// read from each ref's namespace. A part that is not stored (or not
	// completely) is absent from the map; it is not an error.
	Parts(ctx context.Context, refs []PartRef) (map[Digest][]byte, error)

	// Create stores h and the parts it references, atomically. parts
	// holds at least every part h references (a delta's base included);
	// those the namespace already holds gain a reference and are not
	// rewritten (DiffParts(nil, h, parts) lists them and fails if one is
	// missing). It returns ErrReleaseExists, storing nothing, if
	// h.Namespace already holds h.Key.
	Create(ctx context.Context, h *Head, parts []*Part) error

	// Update replaces the head stored under h.Namespace and h.Key with h,
	// atomically, keeping the stored CreatedAt (h.CreatedAt is zero;
	// KeepCreatedAt), and moves part references from the parts the old
	// head references to those h does: DiffParts(old, h, parts) gives the
	// parts to add (their bytes are in parts) and the references to drop.
	// It returns ErrReleaseNotFound, storing nothing, if there is
	// no such head. The old head may have Err: it is replaced all the same.
	Update(ctx context.Context, h *Head, parts []*Part) error

	// Delete removes the head stored under namespace and key, and drops
	// its part references, atomically; it returns the head and the frames
	// of its parts for which have returns false, read before anything was
	// removed (PlanDelete says which to read and which references to
	// drop: none for a head that does not Verify, whose digests may name
	// another release's parts). A head with Err is removed too. It returns
	// ErrReleaseNotFound if there is no such head.
	Delete(ctx context.Context, namespace, key string, have func(Digest) bool) (*Head, map[Digest][]byte, error)

	// List returns the heads q selects (ListQuery.Select), ordered by
	// CompareHeads, with their index fields, labels and summary
	// (HasSummary and the fields it vouches for), read from the store's
	// indexes: no part, and no Body (which it need not return). It is
	// what summary listings and dashboards call, and must not cost more
	// than the heads it returns: a backend selects with its indexes
	// (namespace, name prefix, after the cursor, the latest revision)
	// as far as they go and filters the rest with Select. A head that
	// cannot be read is returned with Err, as from Heads.
	List(ctx context.Context, q ListQuery) ([]*Head, error)

	// Stats reports what is stored in namespace ("": all).
	Stats(ctx context.Context, namespace string) (Stats, error)

	// Close releases the backend's resources.
	Close() error
}

// Collector is implemented by backends whose writes can leave garbage
// behind when a writer dies or loses answers, and that cannot remove it
// all in the course of later writes (package cas, over stores without
// transactions). The engine's stores pass it on: Collect.
type Collector interface {
	// Collect removes the garbage of namespace ("": every namespace):
	// what no live release uses and no write in flight may still use.
	// It never removes anything a readable release needs.
	Collect(ctx context.Context, namespace string) error
	// Garbage reports what Collect would remove in namespace ("": every
	// namespace) if it ran now, removing nothing.
	Garbage(ctx context.Context, namespace string) (Garbage, error)
}

// Garbage counts what a Collect would remove (Collector.Garbage): a dry
// run of it. Writes in flight may change it before a Collect runs.
type Garbage struct {
	// PendingHeads are heads of writes whose writer died or gave up.
	PendingHeads int
	// Parts are stored parts (charts, values, manifests) no live head
	// refers to.
	Parts int
	// Chunks are pieces of parts (or heads) that are gone.
	Chunks int
	// Bytes is what the parts and chunks hold, where the store's listing
	// tells sizes (0 on Kubernetes).
	Bytes int64
}

// Total is how many objects the garbage is.
func (g Garbage) Total() int { return g.PendingHeads + g.Parts + g.Chunks }
