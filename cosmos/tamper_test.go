package cosmos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/internal/testing/castest"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// tamperer is the cosmos drivertest.Tamperer: it edits the items in the
// container directly, as a user with write access to the account (Data
// Explorer, a script) would. It first waits for the store's background
// commits: damage is done to data at rest (a head still pending is, by the
// protocol, a write not yet committed, which readers judge differently).
type tamperer struct {
	b *cas.Backend
	c *azcosmos.ContainerClient
}

var _ drivertest.Tamperer = tamperer{}

func newTamperer(b *cas.Backend) tamperer {
	return tamperer{b: b, c: castest.ObjectStore(b).(*objectStore).c}
}

var partKinds = []cas.Kind{cas.KindChart, cas.KindValues, cas.KindManifest}

// read returns the item of the object ref names as a JSON object, without
// the service's own fields (_rid, _etag, ...).
func (tp tamperer) read(ctx context.Context, ref cas.Ref) (map[string]any, error) {
	castest.WaitCommits(tp.b)
	resp, err := tp.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), itemID(ref.Name), nil)
	if err != nil {
		return nil, mapError("read", describe(ref), err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Value, &m); err != nil {
		return nil, err
	}
	for k := range m {
		if strings.HasPrefix(k, "_") {
			delete(m, k)
		}
	}
	return m, nil
}

// decoded is what read returns, as the store's item type.
func decoded(m map[string]any) (*item, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var it item
	return &it, json.Unmarshal(b, &it)
}

// write stores m over the item of ref, whatever its version.
func (tp tamperer) write(ctx context.Context, ref cas.Ref, m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = tp.c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), b, nil)
	return mapError("write", describe(ref), err)
}

// remove deletes the item of ref; an absent one is fine.
func (tp tamperer) remove(ctx context.Context, ref cas.Ref) error {
	_, err := tp.c.DeleteItem(ctx, azcosmos.NewPartitionKeyString(partitionKey(ref)), itemID(ref.Name), nil)
	if code, _ := statusOf(err); code == 404 {
		return nil
	}
	return mapError("delete", describe(ref), err)
}

// chunks joins the chunks named ChunkName(uid, set, i), i < n, read as
// the protocol reads them: an error if one is missing.
func (tp tamperer) chunks(ctx context.Context, ns, uid, set string, n int) ([]byte, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = caswire.ChunkName(uid, set, i)
	}
	frame, err := castest.Probe(tp.b).ReadChunks(ctx, ns, names)
	if err == nil && frame == nil {
		err = fmt.Errorf("a chunk of %s is missing", uid)
	}
	return frame, err
}

func headRef(ns, key string) cas.Ref { return cas.Ref{Kind: cas.KindHead, Namespace: ns, Name: key} }

func (tp tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	m, err := tp.read(ctx, headRef(ns, key))
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	it, err := decoded(m)
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	if it.Head == nil {
		return drivertest.StoredHead{}, fmt.Errorf("item of %s has no head record", key)
	}
	h := it.Head
	sh := drivertest.StoredHead{Body: h.Body, Chart: h.Chart, Values: h.Values, Manifest: h.Manifest}
	if cs := h.BodyChunks; cs != nil {
		if sh.Body, err = tp.chunks(ctx, ns, it.UID, cs.ID, cs.Count); err != nil {
			return drivertest.StoredHead{}, err
		}
	}
	return sh, nil
}

// SetHead stores the body inline (a body in chunks is left to the
// garbage: a body of any size the suite sets fits in one item) and the
// digests as given.
func (tp tamperer) SetHead(ctx context.Context, ns, key string, sh drivertest.StoredHead) error {
	ref := headRef(ns, key)
	m, err := tp.read(ctx, ref)
	if err != nil {
		return err
	}
	h, _ := m["h"].(map[string]any)
	if h == nil {
		return fmt.Errorf("item of %s has no head record", key)
	}
	delete(h, "bodyChunks")
	h["body"] = sh.Body // base64, as the store writes it
	for k, v := range map[string]string{"chart": sh.Chart, "values": sh.Values, "manifest": sh.Manifest} {
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	return tp.write(ctx, ref, m)
}

// part finds the item of part d in ns, whichever kind it is.
func (tp tamperer) part(ctx context.Context, ns, d string) (cas.Ref, map[string]any, error) {
	for _, k := range partKinds {
		ref := cas.Ref{Kind: k, Namespace: ns, Name: d}
		m, err := tp.read(ctx, ref)
		if err == nil {
			return ref, m, nil
		}
		if !errors.Is(err, cas.ErrNotFound) {
			return ref, nil, err
		}
	}
	return cas.Ref{}, nil, fmt.Errorf("no part %s in namespace %s: %w", d, ns, cas.ErrNotFound)
}

func (tp tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	_, m, err := tp.part(ctx, ns, d)
	if err != nil {
		return nil, err
	}
	it, err := decoded(m)
	if err != nil || it.Part == nil {
		return nil, fmt.Errorf("part %s does not decode: %v", d, err)
	}
	if it.Part.Chunks == 0 {
		return it.Part.Data, nil
	}
	return tp.chunks(ctx, ns, it.UID, "", it.Part.Chunks)
}

// SetPart stores frame in the part's item, inline (its chunks, if any, are
// left to the garbage; the suite's damaged frames fit in one item).
func (tp tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	ref, m, err := tp.part(ctx, ns, d)
	if err != nil {
		return err
	}
	if len(frame) > MaxItemBytes/2 {
		return fmt.Errorf("a frame of %d bytes does not fit in the part's item", len(frame))
	}
	p, _ := m["p"].(map[string]any)
	if p == nil {
		return fmt.Errorf("item of part %s has no part record", d)
	}
	p["data"], p["chunks"], p["frameDigest"], p["complete"], p["storedSize"] = frame, 0, "", true, len(frame)
	return tp.write(ctx, ref, m)
}

func (tp tamperer) DeletePart(ctx context.Context, ns, d string) error {
	ref, m, err := tp.part(ctx, ns, d)
	if err != nil {
		return err
	}
	it, err := decoded(m)
	if err != nil || it.Part == nil {
		return fmt.Errorf("part %s does not decode: %v", d, err)
	}
	if err := tp.remove(ctx, ref); err != nil {
		return err
	}
	for i := 0; i < it.Part.Chunks; i++ {
		if err := tp.remove(ctx, cas.Ref{Kind: cas.KindChunk, Namespace: ns, Name: caswire.ChunkName(it.UID, "", i)}); err != nil {
			return err
		}
	}
	return nil
}

// GarbleHead makes the head's item undecodable: its head record a string,
// not an object (the item stays findable by its indexed fields).
func (tp tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	ref := headRef(ns, key)
	m, err := tp.read(ctx, ref)
	if err != nil {
		return err
	}
	m["h"] = "%%% not a head record %%%"
	return tp.write(ctx, ref, m)
}

// TestTamperer checks the tamperer on what the damage suite's small
// releases do not have: a chunked part. A head written back as read, and
// a part restored after a flipped byte, read back whole; the flipped byte
// and a deleted part make Get of a fresh store report driver.ErrCorrupt.
func TestTamperer(t *testing.T) {
	conn := connString(t)
	s, b := openTest(t, conn, options{})
	defer s.Close()
	tp := newTamperer(b)
	ctx := context.Background()
	r := fixture.LargeRelease("large", "tamper", 1)
	k := driver.MakeKey("large", 1)
	ns := s.Namespace("tamper")
	if err := ns.Create(k, r); err != nil {
		t.Fatal(err)
	}
	get := func() error {
		fresh, _ := openTest(t, conn, options{}, helm3.WithCacheBytes(0))
		defer fresh.Close()
		_, err := fresh.Namespace("tamper").Get(k)
		return err
	}
	h, err := tp.Head(ctx, "tamper", k)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.SetHead(ctx, "tamper", k, h); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Fatalf("get after writing the head back as read: %v", err)
	}
	split, err := helm3codec.Codec{}.Split(r)
	if err != nil {
		t.Fatal(err)
	}
	chart := split.Digest(driver.KindChart).String()
	frame, err := tp.Part(ctx, "tamper", chart)
	if err != nil {
		t.Fatal(err)
	}
	if len(frame) <= InlinePartBytes {
		t.Fatalf("the large chart's frame is %d bytes: not chunked, the test tests nothing", len(frame))
	}
	bad := bytes.Clone(frame)
	bad[len(bad)/2] ^= 0x40
	if err := tp.SetPart(ctx, "tamper", chart, bad); err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Part(ctx, "tamper", chart); err != nil || !bytes.Equal(got, bad) {
		t.Fatalf("part round trip: %d bytes, %v", len(got), err)
	}
	if err := get(); !errors.Is(err, helm3.ErrCorrupt) {
		t.Fatalf("get with a flipped byte in the chunked chart: %v, want ErrCorrupt", err)
	}
	if err := tp.SetPart(ctx, "tamper", chart, frame); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Fatalf("get after restoring the chart: %v", err)
	}
	if err := tp.DeletePart(ctx, "tamper", chart); err != nil {
		t.Fatal(err)
	}
	if err := get(); !errors.Is(err, helm3.ErrCorrupt) {
		t.Fatalf("get with the chart deleted: %v, want ErrCorrupt", err)
	}
}
