package cosmos

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// MaxItemBytes is the largest item JSON the store writes: Cosmos DB's limit
// is 2 MB (2,097,152 bytes of UTF-8 JSON); a write that would exceed this
// bound fails here, with a clear error, before it is sent. With the chunk
// sizes of casConfig no item the protocol writes comes near it.
const MaxItemBytes = 2_000_000

// item is one object as a Cosmos DB item. Field names are short: they are
// stored in every item. The indexing policy indexes k, ns, n, lkv and lk
// only (see indexingPolicy): bodies and chunk data are never indexed.
type item struct {
	ID string `json:"id"`
	// PK is the partition key value (path /pk): see partitionKey.
	PK   string `json:"pk"`
	Kind string `json:"k"`
	NS   string `json:"ns"`
	// Name is the object's name (id may be a hash of it).
	Name string `json:"n"`
	UID  string `json:"uid"`
	// Created is the creation time, Unix milliseconds by the writer's clock.
	Created int64 `json:"cr"`
	// Labels, and for queries LabelKV (quoted key + "=" + value) and
	// LabelKeys.
	Labels    map[string]string `json:"l,omitempty"`
	LabelKV   []string          `json:"lkv"`
	LabelKeys []string          `json:"lk"`
	// Refs are the referrers; RefUIDs their UIDs (for the conditional
	// patch that adds one).
	Refs    []itemRef `json:"r"`
	RefUIDs []string  `json:"ru"`

	Head  *headRec        `json:"h,omitempty"`
	Part  *cas.PartRecord `json:"p,omitempty"`
	Chunk *chunkRec       `json:"c,omitempty"`

	ETag string `json:"_etag,omitempty"`
}

type itemRef struct {
	Kind cas.Kind `json:"k"`
	Name string   `json:"n"`
	UID  string   `json:"u"`
}

// headRec is a head item's record: cas.HeadRecord with the part digests
// flat.
type headRec struct {
	cas.HeadFields
	driver.SummaryFields
	Chart        string `json:"chart,omitempty"`
	Values       string `json:"values,omitempty"`
	Manifest     string `json:"manifest,omitempty"`
	ValuesBase   string `json:"valuesBase,omitempty"`
	ManifestBase string `json:"manifestBase,omitempty"`
	Body         []byte `json:"body,omitempty"`
	// Embedded are the frames of the parts the head item holds itself
	// (cas.HeadRecord.Embedded).
	Embedded   []cas.EmbeddedFrame `json:"embedded,omitempty"`
	BodyChunks *cas.ChunkSet       `json:"bodyChunks,omitempty"`
}

type chunkRec struct {
	Of    string `json:"of"`
	Index int    `json:"index"`
	Data  []byte `json:"data"`
}

var kindNames = map[cas.Kind]string{
	cas.KindHead: "head", cas.KindChart: "chart", cas.KindValues: "values", cas.KindManifest: "manifest", cas.KindChunk: "chunk",
}

func kindName(k cas.Kind) string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return "kind" + strconv.Itoa(int(k))
}

func parseKindName(s string) cas.Kind {
	for k, n := range kindNames {
		if n == s {
			return k
		}
	}
	return 0
}

// partitionKey returns the partition key of the object ref names:
//
//   - a head: "h/<namespace>/<release name>", so that one release's
//     revisions share a logical partition and Helm's History and Deployed
//     (queries by release name) are single-partition queries;
//   - a part: "p/<namespace>/<kind>/<digest>", one partition per part (parts
//     are shared by every release of the namespace and read by point reads);
//   - a chunk: "c/<namespace>/<owner UID>", with the other chunks of the
//     same frame.
//
// Release names and namespaces are DNS names, so these never collide.
func partitionKey(ref cas.Ref) string {
	switch ref.Kind {
	case cas.KindHead:
		name := ref.Name
		if n, _, err := driver.ParseKey(ref.Name); err == nil {
			name = n
		}
		return "h/" + ref.Namespace + "/" + name
	case cas.KindChunk:
		owner, _, _ := strings.Cut(ref.Name, "-")
		return "c/" + ref.Namespace + "/" + owner
	default:
		return "p/" + ref.Namespace + "/" + kindName(ref.Kind) + "/" + ref.Name
	}
}

// headPartition is the partition of the heads of release name.
func headPartition(ns, name string) string { return "h/" + ns + "/" + name }

// itemID returns the id of the item of an object named name: the name
// itself when Cosmos DB accepts it as an id (at most 255 characters, none of
// / \ ? #), else "~" and its SHA-256 (the item keeps the name in n).
func itemID(name string) string {
	if len(name) <= 200 && name != "" && !strings.ContainsAny(name, `/\?#`) && !strings.HasPrefix(name, "~") {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "~" + hex.EncodeToString(sum[:])
}

// labelKV is the query form of one label: the quoted key (so that a key
// holding '=' cannot be confused with another), '=', the value.
func labelKV(k, v string) string { return strconv.Quote(k) + "=" + v }

// toItem returns obj as an item (UID and Created as given).
func toItem(obj *cas.Object) *item {
	it := &item{
		ID: itemID(obj.Name), PK: partitionKey(obj.Ref()), Kind: kindName(obj.Kind), NS: obj.Namespace, Name: obj.Name,
		UID: obj.UID, Labels: obj.Labels, LabelKV: []string{}, LabelKeys: []string{}, Refs: []itemRef{}, RefUIDs: []string{},
	}
	if !obj.Created.IsZero() {
		it.Created = obj.Created.UnixMilli()
	}
	for k, v := range obj.Labels {
		it.LabelKV = append(it.LabelKV, labelKV(k, v))
		it.LabelKeys = append(it.LabelKeys, k)
	}
	for _, r := range obj.Referrers {
		it.Refs = append(it.Refs, itemRef{Kind: r.Kind, Name: r.Name, UID: r.UID})
		it.RefUIDs = append(it.RefUIDs, r.UID)
	}
	if h := obj.Head; h != nil {
		it.Head = &headRec{HeadFields: h.HeadFields, SummaryFields: h.SummaryFields,
			Chart: h.Parts.Chart, Values: h.Parts.Values, Manifest: h.Parts.Manifest, ValuesBase: h.Parts.ValuesBase, ManifestBase: h.Parts.ManifestBase,
			Body: h.Body, Embedded: h.Embedded, BodyChunks: h.BodyChunks}
	}
	it.Part = obj.Part
	if c := obj.Chunk; c != nil {
		it.Chunk = &chunkRec{Of: c.Of, Index: c.Index, Data: c.Data}
	}
	return it
}

// object returns the object it holds, read as stored bytes. An item that
// is not what ref names, or has no record of its kind, comes back with Err
// set (wrapping driver.ErrCorrupt).
func (it *item) object(ref cas.Ref, meta bool) *cas.Object {
	obj := &cas.Object{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: it.UID, Version: it.ETag,
		Created: time.UnixMilli(it.Created), Labels: it.Labels}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	for _, r := range it.Refs {
		obj.Referrers = append(obj.Referrers, cas.Referrer{Kind: r.Kind, Name: r.Name, UID: r.UID})
	}
	bad := func(format string, a ...any) *cas.Object {
		obj.Err = fmt.Errorf("cosmos item %s in partition %s: %w: %s", it.ID, it.PK, driver.ErrCorrupt, fmt.Sprintf(format, a...))
		return obj
	}
	if parseKindName(it.Kind) != ref.Kind || it.NS != ref.Namespace || it.Name != ref.Name {
		return bad("it holds %s %q in namespace %q, not %s %q in %q", it.Kind, it.Name, it.NS, kindName(ref.Kind), ref.Name, ref.Namespace)
	}
	if it.UID == "" {
		return bad("no uid")
	}
	if meta {
		return obj
	}
	switch ref.Kind {
	case cas.KindHead:
		h := it.Head
		if h == nil {
			return bad("no head record")
		}
		obj.Head = &cas.HeadRecord{HeadFields: h.HeadFields, SummaryFields: h.SummaryFields,
			Parts:    cas.PartDigests{Chart: h.Chart, Values: h.Values, Manifest: h.Manifest, ValuesBase: h.ValuesBase, ManifestBase: h.ManifestBase},
			Embedded: h.Embedded, Body: h.Body, BodyChunks: h.BodyChunks}
	case cas.KindChunk:
		if it.Chunk == nil {
			return bad("no chunk record")
		}
		obj.Chunk = &cas.ChunkRecord{Of: it.Chunk.Of, Index: it.Chunk.Index, Data: it.Chunk.Data}
	default:
		if it.Part == nil {
			return bad("no part record")
		}
		obj.Part = it.Part
	}
	return obj
}
