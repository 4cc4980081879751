package drivertest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"

	"github.com/klauspost/compress/zstd"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/envelope"
)

// bombInflated is what a planted decompression bomb inflates to.
const bombInflated = 1 << 30

var (
	bombOnce   sync.Once
	bombStream []byte
)

// bomb returns a stored frame of a few KiB that inflates to 1 GiB while
// recording claim bytes as its size (frame type 1: uvarint size, zstd).
func bomb(claim int) []byte {
	bombOnce.Do(func() {
		var buf bytes.Buffer
		w, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		zero := make([]byte, 1<<20)
		for i := 0; i < bombInflated>>20; i++ {
			w.Write(zero)
		}
		w.Close()
		bombStream = buf.Bytes()
	})
	out := binary.AppendUvarint([]byte{1}, uint64(claim))
	return append(out, bombStream...)
}

// digestOf parses a digest the store wrote ("" and garbage give zero).
func digestOf(s string) driver.Digest {
	d, _ := driver.ParseDigest(s)
	return d
}

func flip(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)/2] ^= 0x10
	return b
}

// damage is one way of damaging alpha's stored data.
type damage func(t *testing.T, ctx context.Context, tp Tamperer, alphaKey string, alpha, beta StoredHead) error

func damages() map[string]damage {
	setHead := func(edit func(h *StoredHead, beta StoredHead)) damage {
		return func(t *testing.T, ctx context.Context, tp Tamperer, k string, alpha, beta StoredHead) error {
			edit(&alpha, beta)
			return tp.SetHead(ctx, "default", k, alpha)
		}
	}
	setPart := func(pick func(h StoredHead) string, edit func(frame []byte) []byte) damage {
		return func(t *testing.T, ctx context.Context, tp Tamperer, k string, alpha, beta StoredHead) error {
			d := pick(alpha)
			frame, err := tp.Part(ctx, "default", d)
			if err != nil {
				return err
			}
			return tp.SetPart(ctx, "default", d, edit(frame))
		}
	}
	values := func(h StoredHead) string { return h.Values }
	manifest := func(h StoredHead) string { return h.Manifest }
	return map[string]damage{
		"BodyBitFlipped":           setHead(func(h *StoredHead, _ StoredHead) { h.Body = flip(h.Body) }),
		"BodyTruncated":            setHead(func(h *StoredHead, _ StoredHead) { h.Body = h.Body[:len(h.Body)/2] }),
		"BodyEmpty":                setHead(func(h *StoredHead, _ StoredHead) { h.Body = []byte{} }),
		"BodyOfAnotherRelease":     setHead(func(h *StoredHead, beta StoredHead) { h.Body = beta.Body }),
		"HeadOfAnotherRelease":     setHead(func(h *StoredHead, beta StoredHead) { *h = beta }),
		"ValuesOfAnotherRelease":   setHead(func(h *StoredHead, beta StoredHead) { h.Values = beta.Values }),
		"ManifestDigestCleared":    setHead(func(h *StoredHead, _ StoredHead) { h.Manifest = "" }),
		"DigestNotHex":             setHead(func(h *StoredHead, _ StoredHead) { h.Values = strings.Repeat("zz", 32) }),
		"PartBitFlipped":           setPart(values, flip),
		"PartTruncated":            setPart(manifest, func(f []byte) []byte { return f[:len(f)/2] }),
		"PartBombSmallClaim":       setPart(manifest, func(f []byte) []byte { return bomb(1000) }),
		"PartBombClaiming1GiB":     setPart(manifest, func(f []byte) []byte { return bomb(bombInflated) }),
		"PartOfAnotherKindSwapped": setPart(values, func([]byte) []byte { return codec.Compress([]byte("not a part")) }),
		"PartMissing": func(t *testing.T, ctx context.Context, tp Tamperer, k string, alpha, _ StoredHead) error {
			return tp.DeletePart(ctx, "default", alpha.Values)
		},
		"HeadGarbled": func(t *testing.T, ctx context.Context, tp Tamperer, k string, _, _ StoredHead) error {
			return tp.GarbleHead(ctx, "default", k)
		},
		"BodyOfUnknownFormat": func(t *testing.T, ctx context.Context, tp Tamperer, k string, h, _ StoredHead) error {
			// A head a later helmstore wrote, in a release format this
			// build does not know: sealed as that writer would.
			raw, err := codec.Decompress(h.Body)
			if err != nil || len(raw) == 0 {
				if envelope.IsSealedBody(h.Body) {
					t.Skip("the store encrypts its heads: a later writer's format cannot be forged without the key")
				}
				t.Fatalf("drivertest: cannot read the stored head: %v", err)
			}
			later := append([]byte{byte(codec.ReleaseV1) + 1}, raw[1:]...)
			sealed := driver.Head{Key: key("alpha", 1), Chart: digestOf(h.Chart), Values: digestOf(h.Values), Manifest: digestOf(h.Manifest)}
			sealed.Seal(codec.Compress(later))
			h.Body = sealed.Body
			return tp.SetHead(ctx, "default", k, h)
		},
		"BodyBomb": setHead(func(h *StoredHead, _ StoredHead) {
			// Sealed as a writer would: only the decoding bound stops it.
			sealed := driver.Head{Key: key("alpha", 1), Chart: digestOf(h.Chart), Values: digestOf(h.Values), Manifest: digestOf(h.Manifest)}
			sealed.Seal(bomb(1000))
			h.Body = sealed.Body
		}),
	}
}

func testDamage(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("Harness.Tamper is not set: the driver cannot be checked against damaged stored data")
	}
	for name, dmg := range damages() {
		t.Run(name, func(t *testing.T) {
			s := h.open(t)
			tp := h.Tamper(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rs := map[string]*release.Release{}
			for _, n := range []string{"alpha", "beta", "gamma"} {
				r := rel(n, "default", 1, release.StatusDeployed)
				r.Config = map[string]interface{}{"who": n}
				r.Labels = map[string]string{"team": "x"}
				mustCreate(t, s, r)
				rs[n] = r
			}
			ak := key("alpha", 1)
			alpha, err := tp.Head(ctx, "default", ak)
			if err != nil {
				t.Fatal(err)
			}
			beta, err := tp.Head(ctx, "default", key("beta", 1))
			if err != nil {
				t.Fatal(err)
			}
			if err := dmg(t, ctx, tp, ak, alpha, beta); err != nil {
				t.Fatalf("damage: %v", err)
			}

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			// A store that has read nothing (its part cache empty, or
			// off) may read heads and parts together; one that has
			// read parts before reads them apart: both must see the
			// damage.
			cold := h.reopen(t, s, helm3.WithCacheBytes(0))
			for _, v := range []helm3.Store{s, cold} {
				_, err = v.Get(ak)
				if !errors.Is(err, helm3.ErrCorrupt) || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), ak) {
					t.Fatalf("Get of the damaged release = %v; want helm3.ErrCorrupt naming %s", err, ak)
				}
				if later := name == "BodyOfUnknownFormat"; later != errors.Is(err, helm3.ErrUnknownFormat) || later && !strings.Contains(err.Error(), "release format 2") {
					t.Fatalf("Get of the damaged release = %v; want helm3.ErrUnknownFormat (naming release format 2) only for a head of a later format", err)
				}
			}
			intact := func(what string, s, all helm3.Store) {
				t.Helper()
				for _, n := range []string{"beta", "gamma"} {
					got, err := s.Get(key(n, 1))
					if err != nil {
						t.Fatalf("%s: Get %s: %v", what, n, err)
					}
					sameRelease(t, what+": "+n, got, rs[n])
				}
				for _, v := range []helm3.Store{s, all} {
					list, err := v.List(func(*release.Release) bool { return true })
					if got := strings.Join(keysOf(list), " "); err != nil || got != "default/"+key("beta", 1)+" default/"+key("gamma", 1) {
						t.Fatalf("%s: List = %q, %v; want beta and gamma only", what, got, err)
					}
					list, err = v.Query(map[string]string{"owner": "helm", "team": "x"})
					if got := strings.Join(keysOf(list), " "); err != nil || got != "default/"+key("beta", 1)+" default/"+key("gamma", 1) {
						t.Fatalf("%s: Query = %q, %v; want beta and gamma only", what, got, err)
					}
				}
				if list, err := s.Query(map[string]string{"name": "alpha"}); !errors.Is(err, helm3.ErrReleaseNotFound) {
					t.Fatalf("%s: Query name=alpha = %s, %v; want ErrReleaseNotFound (skipped)", what, joinKeys(list), err)
				}
			}
			intact("damaged alpha", s, s.Namespace(""))
			intact("damaged alpha, read by a store with no part cache", cold, cold.Namespace(""))
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
				t.Fatalf("reading around one damaged release allocated %d MiB", grew>>20)
			}

			// Deletable: the release goes, and nothing else is harmed.
			if _, err := s.Delete(ak); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
				t.Fatalf("Delete of the damaged release: %v", err)
			}
			if _, err := s.Get(ak); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("after Delete: Get = %v, want ErrReleaseNotFound", err)
			}
			fresh := h.reopen(t, s, helm3.WithCacheBytes(0))
			for _, v := range []helm3.Store{s, fresh} {
				for _, n := range []string{"beta", "gamma"} {
					got, err := v.Get(key(n, 1))
					if err != nil {
						t.Fatalf("after deleting alpha: Get %s: %v", n, err)
					}
					sameRelease(t, "after deleting alpha: "+n, got, rs[n])
				}
			}
			for _, n := range []string{"beta", "gamma"} {
				if _, err := s.Delete(key(n, 1)); err != nil {
					t.Fatalf("Delete %s: %v", n, err)
				}
			}
			if list, err := s.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(list) != 0 {
				t.Fatalf("after deleting everything: List = %s, %v", joinKeys(list), err)
			}
		})
	}
}

// testDamagedCopy stores the same release in two namespaces, so that each
// holds a copy of the same parts, and damages the first namespace's copy
// of the chart: the second namespace's release still reads whole, through
// its namespace and through all namespaces, from a store that reads heads
// and parts together (its part cache off, or empty) as from one that has
// read before; the first namespace's release is reported corrupt, naming
// it, where only its own copy can be read (a store without a cache), and
// is whole wherever it is returned (a verified part is the same from
// either copy).
func testDamagedCopy(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("Harness.Tamper is not set: the driver cannot be checked against damaged stored data")
	}
	s := h.open(t)
	tp := h.Tamper(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nss := []string{"team-a", "team-b"} // the namespaces the suite uses besides default
	rs := map[string]*release.Release{}
	for _, ns := range nss {
		r := rel("app", ns, 1, release.StatusDeployed)
		if err := s.Namespace(ns).Create(key("app", 1), r); err != nil {
			t.Fatal(err)
		}
		rs[ns] = r
	}
	k := key("app", 1)
	head, err := tp.Head(ctx, nss[0], k)
	if err != nil {
		t.Fatal(err)
	}
	frame, err := tp.Part(ctx, nss[0], head.Chart)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.SetPart(ctx, nss[0], head.Chart, flip(frame)); err != nil {
		t.Fatal(err)
	}
	for _, cache := range []bool{false, true} {
		var opts []helm3.Option
		if !cache {
			opts = append(opts, helm3.WithCacheBytes(0))
		}
		v := h.reopen(t, s, opts...)
		for round := 0; round < 2; round++ {
			what := fmt.Sprintf("cache %v, read %d", cache, round+1)
			list, err := v.Namespace("").List(func(*release.Release) bool { return true })
			if err != nil {
				t.Fatalf("%s: List: %v", what, err)
			}
			found := false
			for _, r := range list {
				sameCustom(t, what+": List "+r.Namespace, r, rs[r.Namespace])
				found = found || r.Namespace == nss[1]
			}
			if !found {
				t.Fatalf("%s: List = %s, missing %s/%s", what, joinKeys(list), nss[1], k)
			}
			got, err := v.Namespace(nss[1]).Get(k)
			if err != nil {
				t.Fatalf("%s: Get %s in %s: %v", what, k, nss[1], err)
			}
			sameRelease(t, what+": Get", got, rs[nss[1]])
			// Without a cache only the damaged copy can serve it; with
			// one, the chart verified from the other copy may.
			got, err = v.Namespace(nss[0]).Get(k)
			if cache && err == nil {
				sameRelease(t, what+": Get (from the cache)", got, rs[nss[0]])
			} else if !errors.Is(err, helm3.ErrCorrupt) || !strings.Contains(err.Error(), k) {
				t.Fatalf("%s: Get %s in %s (its chart damaged) = %v; want helm3.ErrCorrupt naming it", what, k, nss[0], err)
			}
		}
	}
}
