package crsplit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/helmstore/helmstore/driver"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/helmstore/helmstore/cas"
)

// kubeStore is the protocol's object store on the Kubernetes API: head
// objects are Releases, parts are Charts, Values and Manifests, chunks are
// Chunks; Version is the resourceVersion, UID the object's UID, Referrers
// its ownerReferences (so that the cluster's garbage collector removes
// what only deleted Releases owned) and Labels its labels.
type kubeStore struct{ c *client }

var (
	_ cas.ObjectStore   = (*kubeStore)(nil)
	_ cas.ReferrerAdder = (*kubeStore)(nil)
	_ cas.BatchReader   = (*kubeStore)(nil)
)

// labelObject labels parts and chunks with their name (its first 63
// characters: a part's name is its 64-digit digest), so that GetMany can
// select several by name in one list.
const labelObject = "helmstore.io/object"

// objectLabel is the value of labelObject for an object named name.
func objectLabel(name string) string { return name[:min(len(name), validation.LabelValueMaxLength)] }

// resource returns the resource (plural) and the kind of objects of k.
func resource(k cas.Kind) (res, kind string) {
	switch k {
	case cas.KindHead:
		return resReleases, "Release"
	case cas.KindChart:
		return resCharts, "Chart"
	case cas.KindValues:
		return resValues, "Values"
	case cas.KindManifest:
		return resManifests, "Manifest"
	}
	return resChunks, "Chunk"
}

// kindOf returns the protocol's kind of an object of Kubernetes kind k in
// helmstore.io/v1; 0 for any other.
func kindOf(apiVer, k string) cas.Kind {
	if apiVer != apiVersion {
		return 0
	}
	for _, c := range []cas.Kind{cas.KindHead, cas.KindChart, cas.KindValues, cas.KindManifest, cas.KindChunk} {
		if _, kind := resource(c); kind == k {
			return c
		}
	}
	return 0
}

// objectMeta returns the metadata obj is written with. Its managedFields
// are one empty entry, which the API server takes as "keep none": the
// objects are only ever written whole by this backend, and the field
// manager's record of every field (a third of a small Release's bytes)
// would be stored in etcd and sent with every get and list.
func objectMeta(obj *cas.Object) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: obj.Name, Namespace: obj.Namespace, UID: types.UID(obj.UID), ResourceVersion: obj.Version,
		ManagedFields: []metav1.ManagedFieldsEntry{{}}}
	for k, v := range obj.Labels {
		// A label Kubernetes would refuse (a release name longer than
		// a label value) is not indexed: queries on it are filtered
		// by the protocol.
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
			continue
		}
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[k] = v
	}
	if obj.Kind != cas.KindHead && len(validation.IsValidLabelValue(objectLabel(obj.Name))) == 0 {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[labelObject] = objectLabel(obj.Name)
	}
	for _, r := range obj.Referrers {
		m.OwnerReferences = append(m.OwnerReferences, ownerRef(r))
	}
	return m
}

// ownerRef is the ownerReference of referrer r.
func ownerRef(r cas.Referrer) metav1.OwnerReference {
	_, kind := resource(r.Kind)
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: r.Name, UID: types.UID(r.UID)}
}

// fromMeta returns the object of kind k with metadata m.
func fromMeta(k cas.Kind, m *metav1.ObjectMeta) *cas.Object {
	obj := &cas.Object{Kind: k, Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), Version: m.ResourceVersion,
		Created: m.CreationTimestamp.Time, Labels: m.Labels}
	for _, o := range m.OwnerReferences {
		obj.Referrers = append(obj.Referrers, cas.Referrer{Kind: kindOf(o.APIVersion, o.Kind), Name: o.Name, UID: string(o.UID)})
	}
	return obj
}

// encode returns the Kubernetes object for obj.
func encode(obj *cas.Object) (any, error) {
	_, kind := resource(obj.Kind)
	tm := metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
	m := objectMeta(obj)
	switch {
	case obj.Head != nil:
		h := fitSummary(obj.Head)
		var err error
		if m.Annotations, err = summaryAnnotations(h); err != nil {
			return nil, err
		}
		return &releaseObject{TypeMeta: tm, ObjectMeta: m, Spec: releaseSpecOf(h)}, nil
	case obj.Part != nil:
		return &partObject{TypeMeta: tm, ObjectMeta: m, Spec: *obj.Part}, nil
	case obj.Chunk != nil:
		return &chunkObject{TypeMeta: tm, ObjectMeta: m, Spec: chunkSpec{Of: obj.Chunk.Of, Index: obj.Chunk.Index, Data: obj.Chunk.Data}}, nil
	}
	return nil, fmt.Errorf("%s %s: no record to write", kind, obj.Name)
}

// releaseSpecOf returns the spec of a Release holding h, with the printer
// columns' fields (the engine's summary of the release, filled whether the
// record is in the object or in chunks).
func releaseSpecOf(h *cas.HeadRecord) releaseSpec {
	s := releaseSpec{HeadFields: h.HeadFields, SummaryFields: h.SummaryFields,
		Parts: partRefs(h.Parts), Embedded: h.Embedded, Record: h.Body, ReleaseChunks: h.BodyChunks}
	if h.ChartName != "" {
		s.Chart = h.ChartName + "-" + h.ChartVersion
	}
	return s
}

// decode returns the object of kind k in raw (JSON); one that does not
// decode is returned as far as it does, with Err set.
func decode(k cas.Kind, raw []byte) *cas.Object {
	switch k {
	case cas.KindHead:
		var o releaseObject
		if err := json.Unmarshal(raw, &o); err != nil {
			return decodeDamaged(raw, err)
		}
		return releaseOf(&o, len(raw))
	case cas.KindChunk:
		var o chunkObject
		if err := json.Unmarshal(raw, &o); err != nil {
			return damagedMeta(k, raw, err)
		}
		obj := fromMeta(k, &o.ObjectMeta)
		obj.Chunk = &cas.ChunkRecord{Of: o.Spec.Of, Index: o.Spec.Index, Data: o.Spec.Data}
		return obj
	}
	var o partObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return damagedMeta(k, raw, err)
	}
	obj := fromMeta(k, &o.ObjectMeta)
	obj.Part = &o.Spec
	obj.StoredBytes = int64(len(raw))
	return obj
}

// releaseOf is the object of the Release o, size bytes of JSON.
func releaseOf(o *releaseObject, size int) *cas.Object {
	obj := fromMeta(cas.KindHead, &o.ObjectMeta)
	obj.Head = headRecordOf(&o.Spec)
	obj.StoredBytes = int64(size)
	return obj
}

// decodeReleases decodes a page of a list of Releases in one pass over its
// bytes (where decoding its items one by one from a list of raw items
// scanned each byte four times: that was most of a listing's time), and
// returns its continue token. A Release that does not decode is returned
// as decode returns it, from its own bytes; the others are not affected.
func decodeReleases(page []byte) (objs []*cas.Object, cont string, err error) {
	dec := json.NewDecoder(bytes.NewReader(page))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, "", err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		switch t {
		case "metadata":
			var m metav1.ListMeta
			if err := dec.Decode(&m); err != nil {
				return nil, "", err
			}
			cont = m.Continue
		case "items":
			if err := expectDelim(dec, '['); err != nil {
				return nil, "", err
			}
			for dec.More() {
				start := dec.InputOffset()
				var o releaseObject
				err := dec.Decode(&o)
				raw := bytes.TrimLeft(page[start:dec.InputOffset()], ", \t\r\n")
				var syntax *json.SyntaxError
				switch {
				case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
					return nil, "", err // the page itself is not JSON
				case err != nil:
					objs = append(objs, decodeDamaged(raw, err))
				default:
					objs = append(objs, releaseOf(&o, len(raw)))
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return nil, "", err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, "", err
			}
		}
	}
	return objs, cont, expectDelim(dec, '}')
}

// expectDelim reads the next token of dec, which must be d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err == nil && t != d {
		err = fmt.Errorf("%v where %v was expected", t, d)
	}
	return err
}

// headRecordOf returns the head a Release's spec holds. A structured
// object in spec.release (how the first version held the record, before
// records were sealed) is handed on as it is: it is no sealed record, and
// the engine reports that release damaged.
func headRecordOf(s *releaseSpec) *cas.HeadRecord {
	h := &cas.HeadRecord{HeadFields: s.HeadFields, SummaryFields: s.SummaryFields,
		Parts: cas.PartDigests(s.Parts), Embedded: s.Embedded, Body: s.Record, BodyChunks: s.ReleaseChunks}
	if len(h.Body) == 0 && len(s.Release) > 0 {
		h.Body = s.Release
	}
	return h
}

// damagedMeta is an object of kind k that does not decode: its metadata if
// that much does, and Err.
func damagedMeta(k cas.Kind, raw []byte, err error) *cas.Object {
	var o struct {
		metav1.ObjectMeta `json:"metadata"`
	}
	if json.Unmarshal(raw, &o) != nil {
		// Not even the metadata: keep the name, if that much decodes.
		var m struct {
			Metadata struct {
				Name, Namespace, UID, ResourceVersion string
			} `json:"metadata"`
		}
		json.Unmarshal(raw, &m)
		o.Name, o.Namespace, o.UID, o.ResourceVersion = m.Metadata.Name, m.Metadata.Namespace, types.UID(m.Metadata.UID), m.Metadata.ResourceVersion
	}
	obj := fromMeta(k, &o.ObjectMeta)
	_, kind := resource(k)
	obj.Err = fmt.Errorf("%s %s in namespace %s: %w: %v", kind, o.Name, o.Namespace, driver.ErrCorrupt, err)
	return obj
}

// decodeDamaged decodes what it can of a Release that does not decode as a
// whole (a field of the wrong type, a record that is not base64): its
// metadata, and each field of its spec that decodes.
func decodeDamaged(raw []byte, err error) *cas.Object {
	obj := damagedMeta(cas.KindHead, raw, err)
	var o struct {
		Spec map[string]json.RawMessage `json:"spec"`
	}
	json.Unmarshal(raw, &o)
	var s releaseSpec
	for k, p := range map[string]any{"key": &s.Key, "parts": &s.Parts, "releaseChunks": &s.ReleaseChunks} {
		if v, ok := o.Spec[k]; ok {
			json.Unmarshal(v, p)
		}
	}
	obj.Head = headRecordOf(&s)
	return obj
}

// wrap adds the protocol's sentinel to a request's error where one
// applies.
func wrap(err error, res, name string) error {
	switch {
	case err == nil:
		return nil
	case objectMissing(err, res, name):
		return fmt.Errorf("%w: %w", cas.ErrNotFound, err)
	case isAlreadyExists(err):
		return fmt.Errorf("%w: %w", cas.ErrExists, err)
	case isConflict(err):
		return fmt.Errorf("%w: %w", cas.ErrVersionMismatch, err)
	}
	return err
}

// Create implements cas.ObjectStore. A Release is answered whole (to check
// that the cluster's CRD kept what was written); parts and chunks, whose
// bytes the caller has, with their metadata only.
func (s *kubeStore) Create(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	res, _ := resource(obj.Kind)
	o, err := encode(&cas.Object{Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, Labels: obj.Labels, Referrers: obj.Referrers,
		Head: obj.Head, Part: obj.Part, Chunk: obj.Chunk})
	if err != nil {
		return nil, err
	}
	if obj.Kind != cas.KindHead {
		m, err := s.c.createQuiet(ctx, res, obj.Namespace, obj.Name, o)
		if err != nil {
			return nil, wrap(err, res, obj.Name)
		}
		return fromMeta(obj.Kind, &m.ObjectMeta), nil
	}
	token := createToken()
	o.(*releaseObject).Annotations[annotationCreate] = token
	// The create gets the operation's time less what reading it back
	// needs (readBackReserve), so an answer lost to the deadline itself
	// can still be told from a create that was not stored.
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		cctx, cancel = context.WithDeadline(ctx, dl.Add(-readBackReserve(time.Until(dl))))
	}
	raw, err := s.c.create(cctx, res, obj.Namespace, obj.Name, o)
	cancel()
	if errors.Is(err, driver.ErrUnavailable) {
		// The answer may have been lost after the server stored it: then
		// the Release is this create's, and the create succeeded (else the
		// caller, taking it for failed, would leave it pending, blocking
		// the key, and a retry would find it "exists").
		if mine, ok := s.createdAnyway(ctx, res, obj.Namespace, obj.Name, token); ok {
			raw, err = mine, nil
		}
	}
	if err != nil {
		return nil, wrap(err, res, obj.Name)
	}
	created := decode(obj.Kind, raw)
	if created.Err == nil && (created.Head.Parts != obj.Head.Parts || len(created.Head.Embedded) != len(obj.Head.Embedded)) {
		// The API server pruned a field it does not know: the
		// cluster's CRDs are older than this version (delta bases and
		// embedded parts are new). Nothing may stay of this write.
		s.c.delete(ctx, res, obj.Namespace, obj.Name, types.UID(created.UID), created.Version)
		return nil, fmt.Errorf("%w: the Release CRD in the cluster does not keep spec.parts and spec.embedded as written (older than this version of helmstore?): install this version's CRDs (`helmstore crds install`)", ErrCRDsNotInstalled)
	}
	return created, created.Err
}

// annotationCreate holds a random token on a Release from its create until
// its next write (the commit), so that a create whose answer was lost can
// tell, reading the Release back, whether it is the one it wrote.
const annotationCreate = "helmstore.io/create"

// createToken returns a new random token for annotationCreate.
func createToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// readBackReserve is the part of an operation's remaining time left kept
// for reading a Release back after its create got no answer: a quarter, at
// most 2 s.
func readBackReserve(remaining time.Duration) time.Duration {
	return min(remaining/4, 2*time.Second)
}

// createdAnyway reads the Release name back after a create that failed
// without an answer from the API server, and returns it if it carries
// token: the create was stored. A few reads are tried, within ctx, for a
// connection that failed once.
func (s *kubeStore) createdAnyway(ctx context.Context, res, ns, name, token string) ([]byte, bool) {
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, false
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			}
		}
		raw, err := s.c.get(ctx, res, ns, name)
		if err == nil {
			var o struct {
				Metadata struct{ Annotations map[string]string } `json:"metadata"`
			}
			return raw, json.Unmarshal(raw, &o) == nil && o.Metadata.Annotations[annotationCreate] == token
		}
		if !errors.Is(err, driver.ErrUnavailable) {
			return nil, false // not stored (or not readable: as failed)
		}
	}
	return nil, false
}

// Get implements cas.ObjectStore: a stale read is answered from the API
// server's watch cache (resourceVersion=0: no etcd read, and no decoding
// of a large object on the server).
func (s *kubeStore) Get(ctx context.Context, ref cas.Ref, opt cas.ReadOptions) (*cas.Object, error) {
	res, _ := resource(ref.Kind)
	if opt.Meta {
		m, err := s.c.getMeta(ctx, res, ref.Namespace, ref.Name)
		if err != nil {
			return nil, wrap(err, res, ref.Name)
		}
		return fromMeta(ref.Kind, &m.ObjectMeta), nil
	}
	raw, err := s.c.read(ctx, res, ref.Namespace, ref.Name, opt.Stale)
	if err != nil {
		return nil, wrap(err, res, ref.Name)
	}
	return decode(ref.Kind, raw), nil
}

// Replace implements cas.ObjectStore: a Release is updated (PUT) with its
// UID and resourceVersion; a part, whose rights are get, create, patch and
// delete, is merge-patched with them as preconditions.
func (s *kubeStore) Replace(ctx context.Context, obj *cas.Object) (*cas.Object, error) {
	if obj.Version == "" {
		return nil, fmt.Errorf("replace %s: no version to replace", obj.Name)
	}
	res, _ := resource(obj.Kind)
	o, err := encode(obj)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if obj.Kind == cas.KindHead {
		raw, err = s.c.update(ctx, res, obj.Namespace, obj.Name, o)
	} else {
		m := objectMeta(obj)
		patch := map[string]any{"metadata": map[string]any{"uid": m.UID, "resourceVersion": m.ResourceVersion,
			"labels": m.Labels, "ownerReferences": m.OwnerReferences, "managedFields": m.ManagedFields}}
		if p, ok := o.(*partObject); ok {
			patch["spec"] = p.Spec
		}
		raw, err = s.c.patch(ctx, res, obj.Namespace, obj.Name, types.MergePatchType, patch)
	}
	if err != nil {
		return nil, wrap(err, res, obj.Name)
	}
	return decode(obj.Kind, raw), nil
}

// Delete implements cas.ObjectStore.
func (s *kubeStore) Delete(ctx context.Context, ref cas.Ref, version string) error {
	res, _ := resource(ref.Kind)
	return wrap(s.c.delete(ctx, res, ref.Namespace, ref.Name, "", version), res, ref.Name)
}

// List implements cas.ObjectStore with a label selector (labels
// Kubernetes would refuse are left out of it, as they are left out of the
// objects) and, for a name, a field selector.
func (s *kubeStore) List(ctx context.Context, sel cas.Selector) ([]*cas.Object, error) {
	res, _ := resource(sel.Kind)
	var terms []string
	for k, v := range sel.Labels {
		if len(validation.IsQualifiedName(k)) == 0 && len(validation.IsValidLabelValue(v)) == 0 {
			terms = append(terms, k+"="+v)
		}
	}
	for _, k := range sel.Has {
		if len(validation.IsQualifiedName(k)) == 0 {
			terms = append(terms, k)
		}
	}
	for k, v := range sel.Not {
		if len(validation.IsQualifiedName(k)) == 0 && len(validation.IsValidLabelValue(v)) == 0 {
			terms = append(terms, k+"!="+v)
		}
	}
	opts := metav1.ListOptions{LabelSelector: joinSorted(terms)}
	if sel.Name != "" {
		opts.FieldSelector = "metadata.name=" + sel.Name
	}
	if sel.Summary && sel.Kind == cas.KindHead && !sel.Meta {
		if objs, ok, err := s.listSummaries(ctx, sel.Namespace, opts); err != nil || ok {
			return objs, err
		}
	}
	if sel.Meta {
		ms, err := s.c.listMeta(ctx, res, sel.Namespace, opts)
		if err != nil {
			return nil, err
		}
		out := make([]*cas.Object, len(ms))
		for i := range ms {
			out[i] = fromMeta(sel.Kind, &ms[i].ObjectMeta)
		}
		return out, nil
	}
	if sel.Kind == cas.KindHead {
		var out []*cas.Object
		err := s.c.listPages(ctx, res, sel.Namespace, opts, func(page []byte) (string, error) {
			objs, cont, err := decodeReleases(page)
			out = append(out, objs...)
			return cont, err
		})
		return out, err
	}
	raws, err := s.c.list(ctx, res, sel.Namespace, opts)
	if err != nil {
		return nil, err
	}
	out := make([]*cas.Object, len(raws))
	for i, raw := range raws {
		out[i] = decode(sel.Kind, raw)
	}
	return out, nil
}

// GetMany implements cas.BatchReader for parts and chunks: one list with a
// label selector naming them (labelObject), from the watch cache for a
// stale read. Objects written without the label (by a version of helmstore
// before it) are not found by it, and read one by one by the protocol.
func (s *kubeStore) GetMany(ctx context.Context, k cas.Kind, ns string, names []string, opt cas.ReadOptions) (map[string]*cas.Object, error) {
	if k == cas.KindHead || len(names) == 0 {
		return nil, nil
	}
	want := make(map[string]bool, len(names))
	values := make([]string, 0, len(names))
	for _, n := range names {
		if want[n] || len(validation.IsValidLabelValue(objectLabel(n))) > 0 {
			continue
		}
		want[n] = true
		values = append(values, objectLabel(n))
	}
	if len(values) == 0 {
		return nil, nil
	}
	res, _ := resource(k)
	opts := metav1.ListOptions{LabelSelector: labelObject + " in (" + joinSorted(values) + ")"}
	if opt.Stale {
		opts.ResourceVersion = "0"
	}
	raws, err := s.c.list(ctx, res, ns, opts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*cas.Object, len(raws))
	for _, raw := range raws {
		o := decode(k, raw)
		if want[o.Name] {
			out[o.Name] = o
		}
	}
	return out, nil
}

// AddReferrer implements cas.ReferrerAdder with a JSON patch appending to
// the ownerReferences of the latest version (the API server drops a
// duplicate UID; it adds no managedFields to an object that has none, as
// objectMeta writes them). An object without an ownerReferences list to
// append to (never left so by the protocol) is left to the protocol's
// compare-and-swap.
func (s *kubeStore) AddReferrer(ctx context.Context, ref cas.Ref, r cas.Referrer) (*cas.Object, error) {
	res, _ := resource(ref.Kind)
	patch := []map[string]any{{"op": "add", "path": "/metadata/ownerReferences/-", "value": ownerRef(r)}}
	raw, err := s.c.patch(ctx, res, ref.Namespace, ref.Name, types.JSONPatchType, patch)
	if err != nil {
		if st, ok := apiStatus(err); ok && st.Code >= 400 && st.Code < 500 && !objectMissing(err, res, ref.Name) && !isConflict(err) && st.Code != http.StatusForbidden {
			return nil, fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
		}
		return nil, wrap(err, res, ref.Name)
	}
	return decode(ref.Kind, raw), nil
}
