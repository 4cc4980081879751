package cas

import (
	"context"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// ObjectStore is the small compare-and-swap object store the protocol runs
// on: Kubernetes custom resources (crsplit), Cosmos DB items, or a map in
// memory. Every method must be safe for concurrent use, and each call is
// atomic: it happens whole or not at all (a call whose answer is lost may
// have happened; the protocol allows for that).
//
// Errors: ErrExists, ErrNotFound and ErrVersionMismatch (wrapped, so that
// errors.Is finds them) report exactly those outcomes, and nothing else does:
// a store that cannot be reached, a namespace or collection that does not
// exist, a permission denied, are other errors (wrapping
// driver.ErrUnavailable where the service could not be reached or answered
// with a transport or server failure), never ErrNotFound.
type ObjectStore interface {
	// Create stores obj, which must not exist (no object of obj.Kind
	// named obj.Name in obj.Namespace): ErrExists if one does. The store
	// sets UID, Version and Created; obj.UID, obj.Version and
	// obj.Created are ignored. It returns the object as stored; its
	// record (Head, Part, Chunk) may be omitted.
	Create(ctx context.Context, obj *Object) (*Object, error)

	// Get reads the object ref names: ErrNotFound if there is none.
	// opt may let the store answer from a cache (Stale) or without the
	// record (Meta). An object stored in a form the store cannot decode
	// is returned, as far as it decodes, with Err set (wrapping
	// driver.ErrCorrupt), not as an error.
	Get(ctx context.Context, ref Ref, opt ReadOptions) (*Object, error)

	// Replace writes obj over the object of the same kind, namespace and
	// name if that object is still at obj.Version (obj.Version must not
	// be empty): ErrVersionMismatch if it is at another version (or was
	// deleted and created again since), ErrNotFound if there is none.
	// Labels, Referrers and the record are all replaced; UID and Created
	// are kept. It returns the object as stored, with its new Version;
	// its record may be omitted.
	Replace(ctx context.Context, obj *Object) (*Object, error)

	// Delete removes the object ref names, if it is at version (any
	// version when version is ""): ErrNotFound if there is none,
	// ErrVersionMismatch if it is at another version.
	Delete(ctx context.Context, ref Ref, version string) error

	// List returns the objects of sel.Kind that sel selects, in no
	// particular order. It may return more than sel selects (a term the
	// store cannot index may be left out): the protocol checks what it
	// gets. Objects that do not decode are returned with Err set, as by
	// Get. A list is read consistently (each object at a version at least
	// as new as any write that finished before List was called).
	List(ctx context.Context, sel Selector) ([]*Object, error)
}

// ReferrerAdder is implemented by stores that can add a referrer to an
// object atomically without a version precondition (Kubernetes: a JSON
// patch appending to ownerReferences; Cosmos DB: a patch operation). The
// protocol uses it to add a referrer to a shared part in one round trip
// whatever else changes the part meanwhile; without it, it reads the part
// and replaces it at the version read, retrying on ErrVersionMismatch.
type ReferrerAdder interface {
	// AddReferrer adds r to the referrers of the object ref names (at
	// whatever version it is; a referrer with r's UID already there is
	// not added twice) and returns the object as stored after the
	// change, with its record. ErrNotFound if there is none. An error
	// wrapping errors.ErrUnsupported makes the protocol add r by
	// compare-and-swap instead (for an object the store cannot patch).
	AddReferrer(ctx context.Context, ref Ref, r Referrer) (*Object, error)
}

// BatchReader is implemented by stores that can read several objects of
// one kind and namespace in one call (Kubernetes: one list by a label
// naming them). The protocol uses it to read the parts of many heads
// (History, Deployed, List) and the chunks of a frame in one round trip
// each, instead of one per object.
type BatchReader interface {
	// GetMany returns, by name, those of the named objects of kind k in
	// namespace ns that it finds, as Get would with opt. It may leave out
	// an object that exists (a store need not index every object): the
	// protocol reads what is missing with Get.
	GetMany(ctx context.Context, k Kind, ns string, names []string, opt ReadOptions) (map[string]*Object, error)
}

// Kind says what an object is. Each kind is its own collection: names are
// unique within a kind and namespace.
type Kind uint8

// The kinds of objects the protocol stores.
const (
	// KindHead objects hold one stored revision each (a Kubernetes
	// Release), named by the store from the release key.
	KindHead Kind = caswire.KindHead
	// KindChart, KindValues and KindManifest objects hold one
	// content-addressed part each, named by the part's digest and
	// referred to by every head object that uses it.
	KindChart    Kind = caswire.KindChart
	KindValues   Kind = caswire.KindValues
	KindManifest Kind = caswire.KindManifest
	// KindChunk objects hold one piece of a frame too large to keep in
	// its part or head object, referred to by that object.
	KindChunk Kind = caswire.KindChunk
)

// Ref names one object.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// Referrer names an object whose existence keeps another one: a head object
// keeps the parts it references, a part or head object keeps its chunks.
// Kubernetes stores referrers as ownerReferences, so that the cluster's
// garbage collector removes what only deleted objects referred to.
type Referrer struct {
	// Kind of the referring object; 0 for a referrer the store holds
	// that the protocol did not write (a foreign ownerReference), which
	// the protocol never takes for dead.
	Kind Kind
	Name string
	UID  string
}

// Object is one stored object. Exactly one of Head, Part and Chunk is set,
// by Kind (none in an object read with ReadOptions.Meta or Selector.Meta,
// or returned by Create or Replace without its record).
type Object struct {
	Kind      Kind
	Namespace string
	Name      string
	// UID identifies this incarnation of the object: set by the store on
	// Create, never changed, and never the same for an object deleted
	// and created again under the same name.
	UID string
	// Version identifies one write of the object: set by the store on
	// every Create, Replace and AddReferrer, and never repeated for the
	// same name, even across a delete and a create.
	Version string
	// Created is when the store created the object, by the store's
	// clock where it has one.
	Created time.Time
	// Labels index the object: List selects by them. A store may leave
	// out a label it cannot index (a value it does not accept); the
	// protocol never relies on a label for more than selection.
	Labels map[string]string
	// Referrers are the objects keeping this one, in the order added.
	Referrers []Referrer

	Head  *HeadRecord
	Part  *PartRecord
	Chunk *ChunkRecord

	// SummaryOnly, on a head listed with Selector.Summary, says that Head
	// holds only HeadFields and SummaryFields, or is
	// nil where the store could not read them so (the protocol then reads
	// the object whole).
	SummaryOnly bool

	// StoredBytes is, on objects read, how many bytes the store holds
	// for the object (for Stats); 0 if unknown.
	StoredBytes int64
	// Err, set by Get and List, says that the object could not be
	// decoded: only the fields that decoded are set.
	Err error
}

// Ref returns the reference naming o.
func (o *Object) Ref() Ref { return Ref{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name} }

// ReferredBy reports whether uid is among o's referrers.
func (o *Object) ReferredBy(uid string) bool {
	for _, r := range o.Referrers {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// HeadRecord is what a head object holds: one stored revision without its
// parts. Digests are kept as stored (hexadecimal strings, "" for none) so
// that an object damaged outside the protocol still decodes as far as it
// can; the protocol parses and checks them.
//
// The JSON names of the records' fields (here, in HeadFields,
// driver.SummaryFields, EmbeddedFrame, ChunkSet and PartRecord) are those of the stores that
// write records as JSON: a store's own wire type embeds or holds them, and
// writes only what differs (where it keeps Parts and Body, and whether it
// keeps Updated and Description).
type HeadRecord struct {
	HeadFields
	// The summary of driver.Head, for stores that show it.
	driver.SummaryFields

	Parts PartDigests
	// Embedded are the frames of those of the head's parts that the head
	// object holds itself instead of part objects (Config.EmbedBytes):
	// small parts of this revision alone, a values-only upgrade's deltas.
	// They need no object, referrer or read of their own, and go with the
	// head. Every other digest in Parts names a part object.
	Embedded []EmbeddedFrame
	// Body is the head's body frame (driver.Head.Body) when it is kept
	// in the object; BodyChunks is set instead when it is in chunks.
	Body       []byte
	BodyChunks *ChunkSet
}

// HeadFields are the fields of a head record that name its revision and
// say its state, as driver.Head holds them.
type HeadFields struct {
	Key        string `json:"key"`
	Name       string `json:"name"`
	Version    int    `json:"version"`
	Status     string `json:"status"`
	Owner      string `json:"owner"`
	CreatedAt  int64  `json:"createdAt,omitempty"`
	ModifiedAt int64  `json:"modifiedAt,omitempty"`
}

// EmbeddedFrame is the frame of one part a head object holds itself.
type EmbeddedFrame struct {
	Digest string `json:"digest"` // as in PartDigests
	// Size is the part's canonical size (for Stats).
	Size int64  `json:"size,omitempty"`
	Data []byte `json:"data"`
}

// frame returns the frame h embeds for the part with digest d (as text).
func (h *HeadRecord) frame(d string) ([]byte, bool) {
	for _, e := range h.Embedded {
		if e.Digest == d {
			return e.Data, true
		}
	}
	return nil, false
}

// PartDigests are the digests of a head's parts, as stored.
type PartDigests = driver.DigestText

// ChunkSet describes a head body stored in Count chunk objects named
// <head UID>-<ID>-<i>: Size bytes whose SHA-256 is Digest.
type ChunkSet struct {
	ID     string `json:"id"`
	Count  int    `json:"count"`
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
}

// PartRecord is what a part object holds: one part's frame, inline (Data)
// or in Chunks chunk objects named <part UID>-<i>.
type PartRecord struct {
	Digest string `json:"digest"`
	// Size is the part's canonical size; StoredSize its frame's.
	Size       int64 `json:"size"`
	StoredSize int64 `json:"storedSize"`
	// FrameDigest is the SHA-256 of the frame when it is chunked.
	FrameDigest string `json:"frameDigest,omitempty"`
	Chunks      int    `json:"chunks,omitempty"`
	// Complete is set once every chunk is stored (at once for an inline
	// frame). An incomplete part is not read.
	Complete bool   `json:"complete"`
	Data     []byte `json:"data,omitempty"`
}

// ChunkRecord is what a chunk object holds: piece Index of a frame.
type ChunkRecord struct {
	// Of names the object the frame belongs to (informative).
	Of    string
	Index int
	Data  []byte
}

// ReadOptions say what a Get may skip.
type ReadOptions struct {
	// Stale lets the store answer from a cache that may be behind: an
	// older version, or not found. The protocol asks for it only for
	// content that never changes once complete, and reads again without
	// it before taking an absence for real.
	Stale bool
	// Meta: only the metadata (UID, Version, Created, Labels,
	// Referrers) is needed; the record may be omitted.
	Meta bool
}

// Selector says which objects List returns.
type Selector struct {
	Kind Kind
	// Namespace to list; "" lists every namespace.
	Namespace string
	// Name, if set, selects the object of that name only.
	Name string
	// Labels must all be present with these values.
	Labels map[string]string
	// Has are labels that must be present, with any value.
	Has []string
	// Not are labels that must not have these values (an object without
	// the label is selected).
	Not map[string]string
	// Meta: only the metadata is needed (as ReadOptions.Meta).
	Meta bool
	// Summary (of heads): only what a listing returns is needed, the
	// metadata and, of the record, HeadFields and SummaryFields. A store that reads less returns such an object with
	// SummaryOnly set; it may return any object whole.
	Summary bool
}
