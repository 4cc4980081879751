package crsplit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/releasecheck"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// tamperer is crsplit's drivertest.Tamperer: it edits the objects on the
// API server directly, as a user with write access (kubectl edit) would.
type tamperer struct{ b *kubeBackend }

func newTamperer(b *kubeBackend) drivertest.Tamperer {
	return castest.WithEmbedded(&tamperer{b}, castest.ObjectStore(b.Backend))
}

var _ drivertest.Tamperer = (*tamperer)(nil)

// validDigest is what the CRDs let spec.parts hold.
var validDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// object returns the Release stored under key as typed and as raw JSON
// fields, once the store's background commits are done (a tamperer's
// write is not meant to race the store's own).
func (tp *tamperer) object(ctx context.Context, ns, key string) (*releaseObject, map[string]any, error) {
	tp.b.WaitCommits()
	raw, err := tp.b.c.get(ctx, resReleases, ns, releaseObjectName(key))
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, err
	}
	// Its metadata, whatever its spec holds.
	var obj releaseObject
	json.Unmarshal(raw, &struct {
		Metadata *metav1.ObjectMeta `json:"metadata"`
	}{&obj.ObjectMeta})
	return &obj, m, nil
}

// put writes m back over the Release (its resourceVersion is the
// precondition).
func (tp *tamperer) put(ctx context.Context, ns, key string, m map[string]any) error {
	_, err := tp.b.c.update(ctx, resReleases, ns, releaseObjectName(key), m)
	return err
}

// settle returns once reads of the named objects of res from the API
// server's watch cache give what a consistent read gives now (the same
// resourceVersion, or nothing): parts and chunks are read from that cache
// first, and damage must be what a reader finds, as on a failing disk.
func (tp *tamperer) settle(ctx context.Context, ns, res string, names ...string) error {
	for _, name := range names {
		want := ""
		if m, err := tp.b.c.getMeta(ctx, res, ns, name); err == nil {
			want = m.ResourceVersion
		} else if !objectMissing(err, res, name) {
			return err
		}
		for {
			raw, err := tp.b.c.read(ctx, res, ns, name, true)
			if objectMissing(err, res, name) {
				if want == "" {
					break
				}
			} else if err != nil {
				return err
			} else {
				var o struct {
					Metadata struct{ ResourceVersion string } `json:"metadata"`
				}
				if json.Unmarshal(raw, &o) == nil && o.Metadata.ResourceVersion == want {
					break
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

func (tp *tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	tp.b.WaitCommits()
	raw, err := tp.b.c.get(ctx, resReleases, ns, releaseObjectName(key))
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	obj, err := decodeRelease(raw)
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	sh := drivertest.StoredHead{Chart: obj.Spec.Parts.Chart, Values: obj.Spec.Parts.Values, Manifest: obj.Spec.Parts.Manifest}
	switch s := &obj.Spec; {
	case len(s.Record) > 0:
		sh.Body = s.Record
	case len(s.Release) > 0:
		sh.Body = codec.Compress(s.Release)
	case s.ReleaseChunks != nil:
		names := make([]string, s.ReleaseChunks.Count)
		for i := range names {
			names[i] = releaseChunkName(obj.UID, s.ReleaseChunks.ID, i)
		}
		if sh.Body, err = tp.b.ReadChunks(ctx, ns, names); err == nil && sh.Body == nil {
			err = fmt.Errorf("release %q: record chunks missing", key)
		}
	}
	return sh, err
}

// SetHead writes the body (inline, or in new chunks if too large) and the
// digests. The CRD's schema refuses a digest that is not 64 lowercase hex
// digits, so such a head cannot be stored as given: the Release is then
// garbled instead (GarbleHead), the nearest damage the API server lets
// anyone store, which reading reports the same way.
func (tp *tamperer) SetHead(ctx context.Context, ns, key string, h drivertest.StoredHead) error {
	for _, d := range []string{h.Chart, h.Values, h.Manifest} {
		if d != "" && !validDigest.MatchString(d) {
			return tp.GarbleHead(ctx, ns, key)
		}
	}
	obj, m, err := tp.object(ctx, ns, key)
	if err != nil {
		return err
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		m["spec"] = spec
	}
	parts := map[string]any{}
	for k, v := range map[string]string{"chart": h.Chart, "values": h.Values, "manifest": h.Manifest} {
		if v != "" {
			parts[k] = v
		}
	}
	spec["parts"] = parts
	delete(spec, "release")
	delete(spec, "record")
	delete(spec, "releaseChunks")
	if len(h.Body) <= InlineReleaseBytes {
		spec["record"] = h.Body // []byte: base64 in JSON
	} else {
		id := make([]byte, 4)
		rand.Read(id)
		cs := &cas.ChunkSet{ID: hex.EncodeToString(id), Size: int64(len(h.Body)), Digest: driver.Sum(h.Body).String()}
		chunks := driver.Chunks(h.Body, ChunkBytes)
		cs.Count = len(chunks)
		names := make([]string, len(chunks))
		for i := range names {
			names[i] = releaseChunkName(obj.UID, cs.ID, i)
		}
		if err := tp.b.writeChunks(ctx, ns, ownerOf("Release", &obj.ObjectMeta), "releases/"+obj.Name, names, chunks); err != nil {
			return err
		}
		spec["releaseChunks"] = cs
	}
	return tp.put(ctx, ns, key, m)
}

// GarbleHead makes the Release's record unreadable: a spec.record that is
// not base64 (the CRD declares it a plain string, so the API server takes
// it), in place of whatever held the record.
func (tp *tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	_, m, err := tp.object(ctx, ns, key)
	if err != nil {
		return err
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		m["spec"] = spec
	}
	delete(spec, "release")
	delete(spec, "releaseChunks")
	spec["record"] = "%%% not base64, not a record %%%"
	return tp.put(ctx, ns, key, m)
}

// part finds the part object named d in ns, whichever kind it is.
func (tp *tamperer) part(ctx context.Context, ns, d string) (string, *partObject, error) {
	tp.b.WaitCommits()
	for _, res := range []string{resCharts, resValues, resManifests} {
		raw, err := tp.b.c.get(ctx, res, ns, d)
		if objectMissing(err, res, d) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		obj, err := decodePart(raw)
		return res, obj, err
	}
	return "", nil, fmt.Errorf("no part %s in namespace %q", d, ns)
}

func (tp *tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	_, obj, err := tp.part(ctx, ns, d)
	if err != nil {
		return nil, err
	}
	if obj.Spec.Chunks == 0 {
		return obj.Spec.Data, nil
	}
	frame, err := tp.b.ReadChunks(ctx, ns, partChunkNames(obj))
	if err == nil && frame == nil {
		err = fmt.Errorf("part %s: chunks missing", d)
	}
	return frame, err
}

// SetPart rewrites the part object (and its chunks) with frame, laid out
// as the backend lays out a frame of that size; owners are kept.
func (tp *tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	res, obj, err := tp.part(ctx, ns, d)
	if err != nil {
		return err
	}
	// Chunks are named by the part's UID and index: the old ones go first.
	oldChunks := obj.Spec.Chunks
	if err := tp.b.deleteChunks(ctx, ns, partChunkNames(obj)); err != nil {
		return err
	}
	obj.ManagedFields = nil
	obj.Spec.StoredSize = int64(len(frame))
	obj.Spec.Complete = true
	if len(frame) <= InlinePartBytes {
		obj.Spec.Data, obj.Spec.Chunks, obj.Spec.FrameDigest = frame, 0, ""
	} else {
		chunks := driver.Chunks(frame, ChunkBytes)
		obj.Spec.Data, obj.Spec.Chunks, obj.Spec.FrameDigest = nil, len(chunks), driver.Sum(frame).String()
		self := ownerOf(kindOfResource(res), &obj.ObjectMeta)
		if err := tp.b.writeChunks(ctx, ns, self, res+"/"+obj.Name, partChunkNames(obj), chunks); err != nil {
			return err
		}
	}
	if _, err = tp.b.c.update(ctx, res, ns, obj.Name, obj); err != nil {
		return err
	}
	if err := tp.settle(ctx, ns, res, obj.Name); err != nil {
		return err
	}
	obj.Spec.Chunks = max(obj.Spec.Chunks, oldChunks)
	return tp.settle(ctx, ns, resChunks, partChunkNames(obj)...)
}

func (tp *tamperer) DeletePart(ctx context.Context, ns, d string) error {
	res, obj, err := tp.part(ctx, ns, d)
	if err != nil {
		return err
	}
	if err := tp.b.c.delete(ctx, res, ns, d, "", ""); err != nil {
		return err
	}
	if err := tp.b.deleteChunks(ctx, ns, partChunkNames(obj)); err != nil {
		return err
	}
	if err := tp.settle(ctx, ns, res, d); err != nil {
		return err
	}
	return tp.settle(ctx, ns, resChunks, partChunkNames(obj)...)
}

// TestTamperer checks crsplit's Tamperer itself: Head and SetHead round
// trip (inline and chunked records), Part and SetPart too, and a flipped
// byte in a part, inline or chunked, makes Get report driver.ErrCorrupt.
func TestTamperer(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	tp := newTamperer(b)
	ctx := ctxT(t)
	small, large := smallRelease("small", ns, 1, "c"), fixture.LargeRelease("large", ns, 1)
	for _, r := range []*release.Release{small, large} {
		if err := s.Create(key(r.Name, 1), r); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh store for every read: no part cache between damage and read.
	get := func(name string) (*release.Release, error) {
		fresh, _ := openAs(t, k, kubeenv.Admin, ns)
		return fresh.Get(key(name, 1))
	}
	for _, r := range []*release.Release{small, large} {
		h, err := tp.Head(ctx, ns, key(r.Name, 1))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Body) == 0 || !validDigest.MatchString(h.Chart) || !validDigest.MatchString(h.Values) {
			t.Fatalf("%s: stored head %d bytes, digests %q %q %q", r.Name, len(h.Body), h.Chart, h.Values, h.Manifest)
		}
		if err := tp.SetHead(ctx, ns, key(r.Name, 1), h); err != nil {
			t.Fatal(err)
		}
		again, err := tp.Head(ctx, ns, key(r.Name, 1))
		if err != nil {
			t.Fatal(err)
		}
		if string(again.Body) != string(h.Body) || again.Chart != h.Chart || again.Values != h.Values || again.Manifest != h.Manifest {
			t.Fatalf("%s: head after SetHead of itself differs", r.Name)
		}
		got, err := get(r.Name)
		if err != nil {
			t.Fatalf("%s: get after SetHead of its own head: %v", r.Name, err)
		}
		sameAsHelm(t, r.Name, got, r)
	}
	// A record too large for the Release goes to chunks, and back.
	h, err := tp.Head(ctx, ns, key("small", 1))
	if err != nil {
		t.Fatal(err)
	}
	big := drivertest.StoredHead{Body: make([]byte, InlineReleaseBytes+ChunkBytes+1), Chart: h.Chart, Values: h.Values, Manifest: h.Manifest}
	copy(big.Body, h.Body)
	if err := tp.SetHead(ctx, ns, key("small", 1), big); err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Head(ctx, ns, key("small", 1)); err != nil || string(got.Body) != string(big.Body) {
		t.Fatalf("chunked head round trip: %d bytes, %v", len(got.Body), err)
	}
	if err := tp.SetHead(ctx, ns, key("small", 1), h); err != nil {
		t.Fatal(err)
	}
	if _, err := get("small"); err != nil {
		t.Fatalf("get after restoring the head: %v", err)
	}
	// A flipped byte in the values (inline) and in the chart (chunked).
	for _, c := range []struct {
		name string
		kind driver.Kind
	}{{"small", driver.KindValues}, {"large", driver.KindChart}} {
		d := codecDigest(t, map[string]*release.Release{"small": small, "large": large}[c.name], c.kind)
		frame, err := tp.Part(ctx, ns, d)
		if err != nil {
			t.Fatal(err)
		}
		if c.kind == driver.KindChart && len(frame) <= InlinePartBytes {
			t.Fatalf("the large chart's frame is %d bytes: not chunked", len(frame))
		}
		bad := append([]byte(nil), frame...)
		bad[len(bad)/2] ^= 0x40
		if err := tp.SetPart(ctx, ns, d, bad); err != nil {
			t.Fatal(err)
		}
		if got, err := tp.Part(ctx, ns, d); err != nil || string(got) != string(bad) {
			t.Fatalf("%s part round trip: %v", c.kind, err)
		}
		if _, err := get(c.name); !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("get of %s with a flipped byte in its %s: %v, want ErrCorrupt", c.name, c.kind, err)
		}
		if err := tp.SetPart(ctx, ns, d, frame); err != nil {
			t.Fatal(err)
		}
		if _, err := get(c.name); err != nil {
			t.Fatalf("get of %s after restoring its %s: %v", c.name, c.kind, err)
		}
	}
	// A deleted part, and a garbled head.
	if err := tp.DeletePart(ctx, ns, codecDigest(t, small, driver.KindValues)); err != nil {
		t.Fatal(err)
	}
	if _, err := get("small"); err == nil {
		t.Fatal("get of a release whose values were deleted succeeded")
	}
	if err := tp.GarbleHead(ctx, ns, key("large", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := get("large"); !errors.Is(err, helm3.ErrCorrupt) {
		t.Fatalf("get of a garbled head: %v, want ErrCorrupt", err)
	}
}

// TestDamagedReleasesStayDeletable: Release objects whose record does not
// decode, or that have no record, are reported by Heads as heads with Err
// (wrapping ErrCorrupt, naming the release) rather than failing the
// namespace's list; so is, by the engine, one whose chart has a renumbered
// chunk, or that holds another release's head. List and Query of the
// namespace work; and Delete removes them with what they owned, and
// nothing another release uses.
func TestDamagedReleasesStayDeletable(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	tp := &tamperer{b}
	ctx := ctxT(t)
	good := smallVariant("good", ns, 1, 1, "c")
	rels := map[string]*release.Release{
		"good":    good,
		"garbled": smallVariant("garbled", ns, 1, 2, "c"),
		"norec":   smallVariant("norec", ns, 1, 3, "c"),
		"chunk":   fixture.LargeRelease("chunk", ns, 1),
		"swapped": smallVariant("swapped", ns, 1, 4, "c2"),
	}
	for name, r := range rels {
		if err := s.Create(key(name, 1), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.GarbleHead(ctx, ns, key("garbled", 1)); err != nil {
		t.Fatal(err)
	}
	_, m, err := tp.object(ctx, ns, key("norec", 1))
	if err != nil {
		t.Fatal(err)
	}
	delete(m["spec"].(map[string]any), "record")
	if err := tp.put(ctx, ns, key("norec", 1), m); err != nil {
		t.Fatal(err)
	}
	// swapped holds good's head: its digests name good's parts, not the
	// ones it owns (its own chart c2, values and manifest).
	goodHead, err := tp.Head(ctx, ns, key("good", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.SetHead(ctx, ns, key("swapped", 1), goodHead); err != nil {
		t.Fatal(err)
	}
	// Chunk 0 of the chunk release's chart claims to be chunk 1.
	_, chart, err := tp.part(ctx, ns, codecDigest(t, rels["chunk"], driver.KindChart))
	if err != nil {
		t.Fatal(err)
	}
	c0 := partChunkNames(chart)[0]
	raw, err := b.c.get(ctx, resChunks, ns, c0)
	if err != nil {
		t.Fatal(err)
	}
	var chunk chunkObject
	json.Unmarshal(raw, &chunk)
	chunk.Spec.Index = 1
	if _, err := b.c.update(ctx, resChunks, ns, c0, &chunk); err != nil {
		t.Fatal(err)
	}

	damaged := map[string]bool{"garbled": true, "norec": true}
	hs, err := b.Heads(ctx, driver.Query{Namespace: ns})
	if err != nil {
		t.Fatalf("heads of a namespace with damaged releases: %v", err)
	}
	if len(hs) != len(rels) {
		t.Fatalf("%d heads, want %d", len(hs), len(rels))
	}
	for _, h := range hs {
		if h.Key == "" || h.Namespace != ns {
			t.Fatalf("head without key or namespace: %+v", h)
		}
		if damaged[h.Name] != (h.Err != nil) {
			t.Fatalf("head of %s: Err %v", h.Key, h.Err)
		}
		if h.Err != nil && (!errors.Is(h.Err, driver.ErrCorrupt) || !regexp.MustCompile(regexp.QuoteMeta(h.Key)).MatchString(h.Err.Error())) {
			t.Fatalf("head of %s: Err %q does not wrap ErrCorrupt or does not name the release", h.Key, h.Err)
		}
	}
	for name := range damaged {
		hs, err := b.Heads(ctx, driver.Query{Namespace: ns, Key: key(name, 1)})
		if err != nil || len(hs) != 1 || !errors.Is(hs[0].Err, driver.ErrCorrupt) || hs[0].Key != key(name, 1) {
			t.Fatalf("head of %s by key: %v, %v", name, hs, err)
		}
		hs, err = b.Heads(ctx, driver.Query{Namespace: ns, Name: name, Status: "deployed"})
		if err != nil || len(hs) != 1 || hs[0].Err == nil {
			t.Fatalf("head of %s by name and status: %v, %v", name, hs, err)
		}
	}
	fresh, _ := openAs(t, k, kubeenv.Admin, ns)
	releasecheck.WantListed(t, fresh, "good")
	if _, err := fresh.Query(map[string]string{"owner": "helm"}); err != nil {
		t.Fatalf("query of a namespace with damaged releases: %v", err)
	}
	for _, name := range []string{"garbled", "norec", "chunk", "swapped"} {
		if _, err := fresh.Get(key(name, 1)); !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("get of %s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := fresh.Get(key("good", 1)); err != nil {
		t.Fatal(err)
	}

	// Delete, at the backend (what the engine makes of a head with Err is
	// the engine's business).
	none := func(driver.Digest) bool { return false }
	for _, name := range []string{"garbled", "norec", "chunk", "swapped"} {
		h, _, err := b.Delete(ctx, ns, key(name, 1), none)
		if err != nil {
			t.Fatalf("delete of %s: %v", name, err)
		}
		if h == nil || h.Key != key(name, 1) || damaged[name] != (h.Err != nil) {
			t.Fatalf("delete of %s returned %+v", name, h)
		}
		if n := len(rawObjectsNamed(t, b, resReleases, ns, releaseObjectName(key(name, 1)))); n != 0 {
			t.Fatalf("%s: Release object still there after Delete", name)
		}
	}
	// good's parts, named by swapped's head, are good's still.
	if _, err := fresh.Get(key("good", 1)); err != nil {
		t.Fatalf("good after deleting the releases around it: %v", err)
	}
	if _, err := s.Delete(key("good", 1)); err != nil {
		t.Fatal(err)
	}
	assertNoObjects(t, b, ns, "left after deleting the damaged releases and the good one")
}

// rawObjectsNamed returns the objects of res in ns named name (0 or 1).
func rawObjectsNamed(t testing.TB, b *kubeBackend, res, ns, name string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, raw := range rawObjects(t, b, res, ns) {
		if meta(t, raw).Name == name {
			out = append(out, raw)
		}
	}
	return out
}
