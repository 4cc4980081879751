package crsplit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

//lint:file-ignore ST1005 error messages begin with the name of the Kubernetes kind Release

// checkCustomLabels refuses labels crsplit reserves for itself.
func checkCustomLabels(labels map[string]string) error {
	for k := range labels {
		if strings.HasPrefix(k, reservedPrefix) {
			return fmt.Errorf("label %q: the %s prefix is reserved by the crsplit backend", k, reservedPrefix)
		}
	}
	return nil
}

// releaseLabels returns the Kubernetes labels of h's Release: its custom
// labels and the system labels. A release name too long for a label value
// gets no name label (queries by name then filter on spec.name).
func releaseLabels(h *backend.Head) map[string]string {
	l := make(map[string]string, len(h.Labels)+7)
	for k, v := range h.Labels {
		l[k] = v
	}
	if len(validation.IsValidLabelValue(h.Name)) == 0 {
		l[backend.LabelName] = h.Name
	}
	l[backend.LabelOwner] = h.Owner
	l[backend.LabelStatus] = h.Status
	l[backend.LabelVersion] = strconv.Itoa(h.Version)
	if h.CreatedAt != 0 {
		l[backend.LabelCreatedAt] = strconv.FormatInt(h.CreatedAt, 10)
	}
	if h.ModifiedAt != 0 {
		l[backend.LabelModifiedAt] = strconv.FormatInt(h.ModifiedAt, 10)
	}
	return l
}

// releaseBody is where a head's body goes: its frame inline, or in chunks;
// and the record fields the printer columns show.
type releaseBody struct {
	inline               []byte
	chunks               *chunkSet
	frame                []byte // set with chunks
	updated, description string
}

// splitBody decides where h.Body (the record's compressed frame, stored as
// it is) goes, and reads the fields the printer columns show from it.
func splitBody(h *backend.Head) (*releaseBody, error) {
	raw, err := codec.Decompress(h.Body)
	if err != nil {
		return nil, err
	}
	var rec struct {
		Info struct {
			LastDeployed json.RawMessage `json:"last_deployed"`
			Description  string          `json:"description"`
		} `json:"info"`
	}
	// Only shown, not read back: a record without them shows nothing.
	json.Unmarshal(raw, &rec)
	body := &releaseBody{description: rec.Info.Description}
	json.Unmarshal(rec.Info.LastDeployed, &body.updated)
	if len(h.Body) <= InlineReleaseBytes {
		body.inline = h.Body
		return body, nil
	}
	// A fresh id per write: an Update never overwrites the chunks the
	// current record is read from.
	id := make([]byte, 4)
	rand.Read(id)
	body.frame = h.Body
	body.chunks = &chunkSet{ID: hex.EncodeToString(id), Count: len(codec.Chunks(h.Body, ChunkBytes)),
		Size: int64(len(h.Body)), Digest: codec.Sum(h.Body).String()}
	return body, nil
}

// newReleaseObject returns the Release object for h, committed.
func newReleaseObject(h *backend.Head, body *releaseBody) *releaseObject {
	obj := &releaseObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Name: releaseObjectName(h.Key), Namespace: h.Namespace, Labels: releaseLabels(h)},
		Spec:       releaseSpec{Key: h.Key, Name: h.Name, Version: h.Version, Status: h.Status, Owner: h.Owner, CreatedAt: h.CreatedAt},
	}
	s := &obj.Spec
	s.ModifiedAt = h.ModifiedAt
	s.Parts = partRefs{Chart: h.Chart.String(), Values: h.Values.String(), Manifest: h.Manifest.String(),
		ValuesBase: h.ValuesBase.String(), ManifestBase: h.ManifestBase.String()}
	s.ReleaseChunks = body.chunks
	s.ChartName, s.ChartVersion, s.AppVersion = h.ChartName, h.ChartVersion, h.AppVersion
	if h.ChartName != "" {
		s.Chart = h.ChartName + "-" + h.ChartVersion
	}
	s.Updated, s.Description = body.updated, body.description
	s.Record = body.inline
	return obj
}

// refsOf returns the parts obj references.
func refsOf(obj *releaseObject) ([]backend.PartRef, error) {
	var h backend.Head
	h.Namespace = obj.Namespace
	var err error
	for _, p := range obj.Spec.Parts.digests(&h) {
		if *p.d, err = codec.ParseDigest(*p.s); err != nil {
			return nil, fmt.Errorf("Release %s in namespace %s: %w: %v", obj.Name, obj.Namespace, codec.ErrCorrupt, err)
		}
	}
	return h.Parts(), nil
}

// someRefsOf returns the parts obj references as far as its digests parse
// (for cleaning up after a damaged Release).
func someRefsOf(obj *releaseObject) []backend.PartRef {
	var out []backend.PartRef
	var h backend.Head
	for _, p := range obj.Spec.Parts.digests(&h) {
		if d, err := codec.ParseDigest(*p.s); err == nil && !d.IsZero() {
			out = append(out, backend.PartRef{Namespace: obj.Namespace, Digest: d, Kind: p.kind})
		}
	}
	return out
}

func isPending(m *metav1.ObjectMeta) bool { _, ok := m.Labels[labelPending]; return ok }

// isHidden reports whether m is a pending Release that is never visible:
// one written by an earlier version of crsplit, which wrote the head only
// with the commit, or one being removed after a failed Create (abandon).
func isHidden(m *metav1.ObjectMeta) bool {
	return isPending(m) && m.Labels[labelPending] != pendingParts
}

// visible reports whether the Release obj can be read: committed, or
// pending=parts with every part it references stored, complete and owned
// by it, and its chunked record all there. Ownership is removed from a
// part only when its owner is deleted, so once visible a Release stays so.
// Parts are checked in the watch cache first, then in etcd. h, if not nil,
// is obj's head: a chunked record read for the check is kept in it.
func (b *kubeBackend) visible(ctx context.Context, obj *releaseObject, h *backend.Head) (bool, error) {
	if !isPending(&obj.ObjectMeta) {
		return true, nil
	}
	if isHidden(&obj.ObjectMeta) {
		return false, nil
	}
	refs, err := refsOf(obj)
	if err != nil {
		return false, err
	}
	owned := make([]bool, len(refs))
	err = parallel(ctx, len(refs), func(ctx context.Context, i int) error {
		res, name := partResource(refs[i].Kind), refs[i].Digest.String()
		for _, cached := range []bool{true, false} {
			raw, err := b.c.read(ctx, res, obj.Namespace, name, cached)
			if objectMissing(err, res, name) {
				continue
			}
			if err != nil {
				return err
			}
			p, err := decodePart(raw)
			if err != nil {
				return err
			}
			if p.Spec.Complete && ownedBy(&p.ObjectMeta, obj.UID) {
				owned[i] = true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, ok := range owned {
		if !ok {
			return false, nil
		}
	}
	if obj.Spec.ReleaseChunks != nil {
		if h == nil {
			if h, err = headOf(obj); err != nil {
				return false, err
			}
		}
		if err := b.loadBody(ctx, obj, h); errors.Is(err, codec.ErrCorrupt) {
			return false, nil // chunks still being written
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

func decodeRelease(raw []byte) (*releaseObject, error) {
	var obj releaseObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: Release object: %v", codec.ErrCorrupt, err)
	}
	return &obj, nil
}

// decodeDamaged decodes what it can of a Release object that does not
// decode as a whole (a field of the wrong type, a record that is not
// base64): its metadata, and each field of its spec that decodes.
func decodeDamaged(raw []byte) *releaseObject {
	var o struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		// Not even the metadata: keep the name, if that much decodes.
		var m struct {
			Metadata struct {
				Name, Namespace, UID, ResourceVersion string
			} `json:"metadata"`
		}
		json.Unmarshal(raw, &m)
		o.Name, o.Namespace, o.UID, o.ResourceVersion = m.Metadata.Name, m.Metadata.Namespace, types.UID(m.Metadata.UID), m.Metadata.ResourceVersion
	}
	obj := &releaseObject{TypeMeta: o.TypeMeta, ObjectMeta: o.ObjectMeta}
	s := &obj.Spec
	for k, p := range map[string]any{"key": &s.Key, "parts": &s.Parts, "releaseChunks": &s.ReleaseChunks} {
		if v, ok := o.Spec[k]; ok {
			json.Unmarshal(v, p)
		}
	}
	return obj
}

// keyOf returns the key a Release object that cannot be read is stored
// under: its spec.key if that names it, else its name (a key too long
// for a name is hashed, and then the name is all there is).
func keyOf(obj *releaseObject) string {
	if obj.Spec.Key != "" && releaseObjectName(obj.Spec.Key) == obj.Name {
		return obj.Spec.Key
	}
	return obj.Name
}

// headOf returns the head stored in obj, without its body when the body is
// in chunks (loadBody fetches it).
func headOf(obj *releaseObject) (*backend.Head, error) {
	s := &obj.Spec
	h := &backend.Head{
		Namespace: obj.Namespace, Key: s.Key, Name: s.Name, Version: s.Version, Status: s.Status, Owner: s.Owner,
		CreatedAt: s.CreatedAt, ModifiedAt: s.ModifiedAt,
		ChartName: s.ChartName, ChartVersion: s.ChartVersion, AppVersion: s.AppVersion,
		Labels: map[string]string{},
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("Release %s in namespace %s: %w: %s", obj.Name, obj.Namespace, codec.ErrCorrupt, fmt.Sprintf(format, a...))
	}
	if s.Key == "" || releaseObjectName(s.Key) != obj.Name {
		return nil, bad("spec.key %q does not match the object's name", s.Key)
	}
	for k, v := range obj.Labels {
		if !backend.IsSystemLabel(k) && !strings.HasPrefix(k, reservedPrefix) {
			h.Labels[k] = v
		}
	}
	var err error
	for _, p := range s.Parts.digests(h) {
		if *p.d, err = codec.ParseDigest(*p.s); err != nil {
			return nil, bad("%v", err)
		}
	}
	switch {
	case len(s.Record) > 0:
		h.Body = s.Record
	case len(s.Release) > 0:
		h.Body = codec.Compress(s.Release)
	case s.ReleaseChunks == nil:
		return nil, bad("no release record")
	}
	return h, nil
}

// loadBody fetches the chunked body of h, stored as obj describes.
func (b *kubeBackend) loadBody(ctx context.Context, obj *releaseObject, h *backend.Head) error {
	cs := obj.Spec.ReleaseChunks
	if cs == nil || h.Body != nil {
		return nil
	}
	names := make([]string, cs.Count)
	for i := range names {
		names[i] = releaseChunkName(obj.UID, cs.ID, i)
	}
	// Chunks are never changed once written (an Update writes new ones):
	// the watch cache first, etcd if it does not hold them all yet.
	for _, cached := range []bool{true, false} {
		frame, err := b.readChunks(ctx, obj.Namespace, names, cached)
		if err != nil {
			return err
		}
		if frame != nil && codec.Sum(frame).String() == cs.Digest {
			h.Body = frame
			return nil
		}
	}
	return fmt.Errorf("release %q in namespace %q: %w: its record's chunks are missing or do not match their digest", h.Key, h.Namespace, codec.ErrCorrupt)
}

// Heads returns the committed heads matching q, using label selectors for
// every field that is a label.
func (b *kubeBackend) Heads(ctx context.Context, q backend.Query) ([]*backend.Head, error) {
	var raws []json.RawMessage
	if q.Key != "" && q.Namespace != "" {
		raw, err := b.c.get(ctx, resReleases, q.Namespace, releaseObjectName(q.Key))
		if objectMissing(err, resReleases, releaseObjectName(q.Key)) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	} else {
		sel, ok := selector(q)
		if !ok {
			return nil, nil
		}
		opts := metav1.ListOptions{LabelSelector: sel}
		if q.Key != "" {
			opts.FieldSelector = "metadata.name=" + releaseObjectName(q.Key)
		}
		var err error
		if raws, err = b.c.list(ctx, resReleases, q.Namespace, opts); err != nil {
			return nil, err
		}
	}
	var out []*backend.Head
	for _, raw := range raws {
		h, err := b.headOrDamaged(ctx, raw, q)
		if err != nil {
			return nil, err
		}
		if h != nil {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		return a.Version < c.Version
	})
	return out, nil
}

// headOrDamaged is decodeHead, except that a Release that cannot be read
// is returned as a head with Err set (one damaged object must not break
// every list, and must stay deletable). A Release whose record chunks were
// missing may just have been updated, its old chunks deleted, since it was
// read: it is read again, and goes by its new version if it has one.
func (b *kubeBackend) headOrDamaged(ctx context.Context, raw []byte, q backend.Query) (*backend.Head, error) {
	h, err := b.decodeHead(ctx, raw, q)
	if err == nil || !errors.Is(err, codec.ErrCorrupt) {
		return h, err
	}
	obj := decodeDamaged(raw)
	if obj.Name == "" {
		return nil, err // not even a name: nothing to report it as
	}
	if fresh, gerr := b.c.get(ctx, resReleases, obj.Namespace, obj.Name); objectMissing(gerr, resReleases, obj.Name) {
		return nil, nil // deleted meanwhile
	} else if gerr != nil {
		return nil, gerr
	} else if cur := decodeDamaged(fresh); cur.UID != obj.UID || cur.ResourceVersion != obj.ResourceVersion {
		if h, err = b.decodeHead(ctx, fresh, q); err == nil || !errors.Is(err, codec.ErrCorrupt) {
			return h, err
		}
		obj = cur
	}
	key := keyOf(obj)
	if q.Key != "" {
		if releaseObjectName(q.Key) != obj.Name {
			return nil, nil
		}
		key = q.Key
	}
	dh := damagedHead(obj, key, err)
	if q.Name != "" && dh.Name != "" && dh.Name != q.Name || q.Version != nil && dh.Version != 0 && dh.Version != *q.Version {
		return nil, nil
	}
	return dh, nil
}

// decodeHead returns the head stored in raw, or nil if it is not visible
// or does not match q.
func (b *kubeBackend) decodeHead(ctx context.Context, raw []byte, q backend.Query) (*backend.Head, error) {
	obj, err := decodeRelease(raw)
	if err != nil || isHidden(&obj.ObjectMeta) {
		return nil, err
	}
	h, err := headOf(obj)
	if err != nil {
		return nil, err
	}
	if !matches(h, q) {
		return nil, nil
	}
	if isPending(&obj.ObjectMeta) {
		fresh, err := b.visibleVersion(ctx, obj, h)
		if err != nil || fresh == nil {
			return nil, err
		}
		if fresh != obj {
			// Changed since it was listed: go by what it is now.
			if obj = fresh; isHidden(&obj.ObjectMeta) {
				return nil, nil
			}
			if h, err = headOf(obj); err != nil {
				return nil, err
			}
			if !matches(h, q) {
				return nil, nil
			}
		}
	}
	b.seen.saw(obj)
	if err := b.loadBody(ctx, obj, h); err != nil {
		return nil, err
	}
	return h, nil
}

// selector returns the label selector for q. ok is false when no Release
// can match (a label key no Release can carry).
func selector(q backend.Query) (sel string, ok bool) {
	parts := []string{labelPending + "!=" + pendingOld}
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if q.Name != "" && len(validation.IsValidLabelValue(q.Name)) == 0 {
		add(backend.LabelName, q.Name)
	}
	if q.Status != "" {
		if len(validation.IsValidLabelValue(q.Status)) > 0 {
			return "", false
		}
		add(backend.LabelStatus, q.Status)
	}
	if q.Version != nil {
		add(backend.LabelVersion, strconv.Itoa(*q.Version))
	}
	if q.CreatedAt != nil {
		add(backend.LabelCreatedAt, strconv.FormatInt(*q.CreatedAt, 10))
	}
	if q.ModifiedAt != nil {
		add(backend.LabelModifiedAt, strconv.FormatInt(*q.ModifiedAt, 10))
	}
	keys := make([]string, 0, len(q.Labels))
	for k := range q.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := q.Labels[k]
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 || strings.HasPrefix(k, reservedPrefix) {
			return "", false
		}
		add(k, v)
	}
	return strings.Join(parts, ","), true
}

// matches checks q against h; the label selector already did most of it,
// this covers what labels cannot (long names) and guards the rest.
func matches(h *backend.Head, q backend.Query) bool {
	switch {
	case q.Namespace != "" && h.Namespace != q.Namespace,
		q.Key != "" && h.Key != q.Key,
		q.Name != "" && h.Name != q.Name,
		q.Status != "" && h.Status != q.Status,
		q.Version != nil && h.Version != *q.Version,
		q.CreatedAt != nil && h.CreatedAt != *q.CreatedAt,
		q.ModifiedAt != nil && h.ModifiedAt != *q.ModifiedAt:
		return false
	}
	for k, v := range q.Labels {
		if w, ok := h.Labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// getCommitted returns the visible Release stored under key, or
// driver.ErrReleaseNotFound.
func (b *kubeBackend) getCommitted(ctx context.Context, ns, key string) (*releaseObject, error) {
	obj, err := b.getRelease(ctx, ns, releaseObjectName(key))
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, driver.ErrReleaseNotFound
	}
	if obj.Spec.Key != key {
		return nil, fmt.Errorf("Release %s in namespace %s: %w: spec.key %q does not match the object's name", obj.Name, ns, codec.ErrCorrupt, obj.Spec.Key)
	}
	if obj, err = b.visibleVersion(ctx, obj, nil); err == nil && obj == nil {
		err = driver.ErrReleaseNotFound
	}
	return obj, err
}

// visibleVersion returns obj if it is visible; otherwise, if the Release
// changed since obj was read (an Update elsewhere may have committed it and
// dropped a part obj references), its current version if that is visible;
// otherwise nil. h, if not nil, is obj's head (as for visible).
func (b *kubeBackend) visibleVersion(ctx context.Context, obj *releaseObject, h *backend.Head) (*releaseObject, error) {
	if ok, err := b.visible(ctx, obj, h); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return obj, nil
	}
	cur, err := b.getRelease(ctx, obj.Namespace, obj.Name)
	if err != nil || cur == nil || cur.ResourceVersion == obj.ResourceVersion || cur.Spec.Key != obj.Spec.Key {
		return nil, err
	}
	if ok, err := b.visible(ctx, cur, nil); err != nil || !ok {
		return nil, err
	}
	return cur, nil
}

// getRelease reads the Release object named name, consistently; nil if
// there is none.
func (b *kubeBackend) getRelease(ctx context.Context, ns, name string) (*releaseObject, error) {
	raw, err := b.c.get(ctx, resReleases, ns, name)
	if objectMissing(err, resReleases, name) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRelease(raw)
}
