package cas_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// conformanceConfig chunks parts and bodies of a few KiB, so that the
// suite's releases take every size path of the protocol; its Clock makes
// the waits between retries cost nothing (the suite's concurrent writers
// lose many races: 13 s of backoff on the system clock).
var conformanceConfig = cas.Config{InlinePartBytes: 512, InlineBodyBytes: 2 << 10, ChunkBytes: 4 << 10, Clock: &castest.Clock{}}

// harness runs the protocol over a fault-free castest.Store: each Open new
// data, each Reopen another process over the same data.
func harness(adder bool) drivertest.Harness {
	var mu sync.Mutex
	data := map[helm3.Store]*castest.Store{}
	backends := map[helm3.Store]*cas.Backend{}
	open := func(s *castest.Store, opts ...helm3.Option) helm3.Store {
		cfg := &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: helm3.DefaultTimeout, Log: func(string, ...interface{}) {}}
		for _, o := range opts {
			o(cfg)
		}
		b := cas.New(objectStore(s, adder), conformanceConfig)
		st := helm3.New(b, cfg)
		mu.Lock()
		data[st] = s
		backends[st] = b
		mu.Unlock()
		return st
	}
	of := func(t *testing.T, s helm3.Store) *castest.Store {
		mu.Lock()
		defer mu.Unlock()
		d, ok := data[s]
		if !ok {
			t.Fatal("a store the harness did not open")
		}
		return d
	}
	return drivertest.Harness{
		Open: func(t *testing.T) helm3.Store { return open(castest.New(nil)) },
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return open(of(t, s).Process(nil), opts...)
		},
		Tamper: func(t *testing.T, s helm3.Store) drivertest.Tamperer {
			d := of(t, s)
			mu.Lock()
			defer mu.Unlock()
			return castest.WithEmbedded(tamperer{s: d, b: backends[s]}, d)
		},
		LargeReleaseBytes: 4 << 20,
		Ops:               1000,
	}
}

// TestConformance runs the whole drivertest suite on the protocol over a
// castest.Store without faults, adding referrers with AddReferrer.
func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, harness(true))
}

// TestConformanceCompareAndSwap runs it with referrers added by
// compare-and-swap (no AddReferrer).
func TestConformanceCompareAndSwap(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the suite runs once with AddReferrer in -short")
	}
	drivertest.Run(t, harness(false))
}

// tamperer damages a castest.Store's data behind the protocol's back,
// once b's background commits are done: damage is done to data at rest
// (a head still pending that references another release's part is, by
// the protocol, a write not yet committed, and so not found).
type tamperer struct {
	s *castest.Store
	b *cas.Backend
}

// object finds the stored object of namespace ns named name, among kinds.
func (tp tamperer) object(ns, name string, kinds ...cas.Kind) (*cas.Object, error) {
	castest.WaitCommits(tp.b)
	for _, k := range kinds {
		for _, o := range tp.s.Objects(k) {
			if o.Namespace == ns && o.Name == name {
				return o, nil
			}
		}
	}
	return nil, fmt.Errorf("no object %s in namespace %s: %w", name, ns, cas.ErrNotFound)
}

var partKinds = []cas.Kind{cas.KindChart, cas.KindValues, cas.KindManifest}

// chunks joins the chunks of the object with the given UID (set: the
// chunk set of a head body, "" for a part).
func (tp tamperer) chunks(ns, uid, set string, n int) ([]byte, error) {
	var out []byte
	for i := 0; i < n; i++ {
		c, err := tp.object(ns, caswire.ChunkName(uid, set, i), cas.KindChunk)
		if err != nil {
			return nil, err
		}
		out = append(out, c.Chunk.Data...)
	}
	return out, nil
}

func (tp tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	o, err := tp.object(ns, key, cas.KindHead)
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	h := o.Head
	sh := drivertest.StoredHead{Body: h.Body, Chart: h.Parts.Chart, Values: h.Parts.Values, Manifest: h.Parts.Manifest}
	if h.BodyChunks != nil {
		if sh.Body, err = tp.chunks(ns, o.UID, h.BodyChunks.ID, h.BodyChunks.Count); err != nil {
			return drivertest.StoredHead{}, err
		}
	}
	return sh, nil
}

// SetHead stores the body inline (a body in chunks is left to the
// garbage) and the digests as given.
func (tp tamperer) SetHead(ctx context.Context, ns, key string, sh drivertest.StoredHead) error {
	castest.WaitCommits(tp.b)
	return tp.s.Edit(cas.Ref{Kind: cas.KindHead, Namespace: ns, Name: key}, func(o *cas.Object) {
		o.Head.Body, o.Head.BodyChunks = sh.Body, nil
		o.Head.Parts.Chart, o.Head.Parts.Values, o.Head.Parts.Manifest = sh.Chart, sh.Values, sh.Manifest
	})
}

func (tp tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	o, err := tp.object(ns, d, partKinds...)
	if err != nil {
		return nil, err
	}
	if o.Part.Chunks == 0 {
		return o.Part.Data, nil
	}
	return tp.chunks(ns, o.UID, "", o.Part.Chunks)
}

// SetPart stores frame inline in the part object (its chunks, if any, are
// left to the garbage).
func (tp tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	o, err := tp.object(ns, d, partKinds...)
	if err != nil {
		return err
	}
	return tp.s.Edit(o.Ref(), func(o *cas.Object) {
		o.Part.Data, o.Part.Chunks, o.Part.FrameDigest, o.Part.Complete = frame, 0, "", true
		o.Part.StoredSize = int64(len(frame))
	})
}

func (tp tamperer) DeletePart(ctx context.Context, ns, d string) error {
	o, err := tp.object(ns, d, partKinds...)
	if err != nil {
		return err
	}
	for i := 0; i < o.Part.Chunks; i++ {
		tp.s.Remove(cas.Ref{Kind: cas.KindChunk, Namespace: ns, Name: caswire.ChunkName(o.UID, "", i)})
	}
	return tp.s.Remove(o.Ref())
}

func (tp tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	castest.WaitCommits(tp.b)
	return tp.s.Garble(cas.Ref{Kind: cas.KindHead, Namespace: ns, Name: key})
}
