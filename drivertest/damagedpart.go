package drivertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/codec"
)

// sharedDamage is one way of damaging a part in namespace "default",
// given its digest: do says what it did. lost says the damage may have
// taken the part out of the backend's reach: removed it, or (a Reshaper's
// variant, which the suite cannot tell apart) put it under another kind
// of record. A write that has not read such a part cannot tell it from
// one new to the namespace: it stores it again with its own reference
// alone (no write can count the heads that use a part without reading
// every head of the namespace), so deleting the releases written since
// removes it again.
type sharedDamage struct {
	do   func(ctx context.Context, tp Tamperer, d string) (string, error)
	lost bool
}

// sharedDamages are the ways the harness's Tamperer can damage a part:
// its bytes flipped, truncated, replaced by another part's or by a bomb,
// the part removed.
var sharedDamages = map[string]sharedDamage{
	"BitFlipped": setSharedPart("frame bit-flipped", flip),
	"Truncated":  setSharedPart("frame truncated", func(f []byte) []byte { return f[:len(f)/2] }),
	"OtherPart":  setSharedPart("frame of another part", func([]byte) []byte { return codec.Compress([]byte("not a part")) }),
	"Bomb":       setSharedPart("frame a decompression bomb", func([]byte) []byte { return bomb(1000) }),
	"Missing": {lost: true, do: func(ctx context.Context, tp Tamperer, d string) (string, error) {
		return "part removed", tp.DeletePart(ctx, "default", d)
	}},
}

// setSharedPart is the damage that replaces the part's frame by edit's.
func setSharedPart(what string, edit func(frame []byte) []byte) sharedDamage {
	return sharedDamage{do: func(ctx context.Context, tp Tamperer, d string) (string, error) {
		frame, err := tp.Part(ctx, "default", d)
		if err != nil {
			return "", err
		}
		return what, tp.SetPart(ctx, "default", d, edit(frame))
	}}
}

// testDamagedSharedPart damages, in each way the harness's Tamperer (and
// Reshaper) can, the chart that alpha and beta share and the one zeta and
// eta share, then writes new releases that carry the same charts.
//
// A store that has read alpha (whole, or driver.ErrCorrupt, which the
// engine remembers) creates gamma: the Create succeeds (a damaged stored
// copy of a part it carries is no reason to refuse it: it holds the
// part's bytes, whose digest it has just computed), and heals the copy:
// alpha, beta and gamma read back whole from a store with no cache (so
// from the stored copy), and alpha and beta still do once gamma is deleted
// (the heal counted their references).
//
// A store that has read nothing creates delta, with zeta's chart: that
// Create succeeds too (damage the write itself sees, a record of the wrong
// shape or a part missing, it writes over), and once a read of delta has
// found what that write could not see (bytes inside a well-formed part),
// the next write, epsilon's, heals it: every release reads back whole,
// and zeta and eta still do once delta and epsilon are deleted, unless
// the damage may have taken the part out of the backend's reach
// (sharedDamage.lost).
func testDamagedSharedPart(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("Harness.Tamper is not set: the driver cannot be checked against damaged stored data")
	}
	for name, dmg := range sharedDamages {
		t.Run(name, func(t *testing.T) { damagedSharedPart(t, h, dmg, nil) })
	}
	if _, ok := h.Tamper(t, h.open(t)).(Reshaper); !ok {
		return
	}
	for _, shape := range Shapes {
		for i := 0; i < 100; i++ {
			last := false
			reshape := sharedDamage{lost: true, do: func(ctx context.Context, tp Tamperer, d string) (string, error) {
				return tp.(Reshaper).Reshape(ctx, Target{Namespace: "default", Part: d}, shape, i)
			}}
			t.Run(fmt.Sprintf("%s/%d", shape, i), func(t *testing.T) { damagedSharedPart(t, h, reshape, &last) })
			if last {
				break
			}
		}
	}
}

// damagedSharedPart is testDamagedSharedPart for one damage; when the
// Reshaper has no such variant, it sets last and skips.
func damagedSharedPart(t *testing.T, h Harness, dmg sharedDamage, last *bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := h.open(t)
	tp := h.Tamper(t, s)
	rs := map[string]*release.Release{}
	for _, n := range []string{"alpha", "beta", "gamma"} {
		rs[n] = shapeRelease(n, "default", "demo")
	}
	for _, n := range []string{"zeta", "eta", "delta", "epsilon"} {
		rs[n] = shapeRelease(n, "default", "other")
	}
	for _, n := range []string{"alpha", "beta", "zeta", "eta"} {
		mustCreate(t, s, rs[n])
	}
	var what string
	for _, n := range []string{"alpha", "zeta"} {
		head, err := tp.Head(ctx, "default", key(n, 1))
		if err != nil {
			t.Fatal(err)
		}
		what, err = dmg.do(ctx, tp, head.Chart)
		if errors.Is(err, ErrNoVariant) && last != nil {
			*last = true
			t.Skip("no such variant")
		}
		if err != nil {
			t.Fatalf("damage of %s's chart: %v", n, err)
		}
	}
	t.Logf("the charts alpha and beta, and zeta and eta, share: %s", what)

	whole := func(when string, names ...string) {
		t.Helper()
		cold := h.reopen(t, s, helm3.WithCacheBytes(0), helm3.WithTimeout(shapeTimeout))
		for _, n := range names {
			got, err := cold.Get(key(n, 1))
			if err != nil {
				t.Fatalf("%s: %s: Get of %s by a store with no cache: %v; want it whole", what, when, n, err)
			}
			sameRelease(t, fmt.Sprintf("%s: %s: %s", what, when, n), got, rs[n])
		}
	}
	create := func(s helm3.Store, n, who string) {
		t.Helper()
		if err := s.Create(key(n, 1), rs[n]); err != nil {
			t.Fatalf("%s: Create of %s, which carries a damaged chart, by a store that %s: %v; want it stored", what, n, who, err)
		}
	}
	read := func(s helm3.Store, n string) {
		t.Helper()
		if _, err := s.Get(key(n, 1)); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("%s: Get of %s: %v; want it whole or helm3.ErrCorrupt", what, n, err)
		}
	}
	remove := func(names ...string) {
		t.Helper()
		for _, n := range names {
			if _, err := s.Delete(key(n, 1)); err != nil && !(dmg.lost && errors.Is(err, helm3.ErrCorrupt)) {
				t.Fatalf("%s: Delete of %s: %v", what, n, err)
			}
		}
	}

	w := h.reopen(t, s, helm3.WithCacheBytes(0), helm3.WithTimeout(shapeTimeout))
	read(w, "alpha")
	create(w, "gamma", "has read alpha")
	whole("after gamma's Create", "alpha", "beta", "gamma")
	remove("gamma")
	whole("after gamma was deleted", "alpha", "beta")

	u := h.reopen(t, s, helm3.WithCacheBytes(0), helm3.WithTimeout(shapeTimeout))
	create(u, "delta", "has read nothing")
	read(u, "delta")
	create(u, "epsilon", "has read delta")
	whole("after the Creates of delta and epsilon", "zeta", "eta", "delta", "epsilon")
	remove("delta", "epsilon")
	if !dmg.lost {
		whole("after delta and epsilon were deleted", "zeta", "eta")
	}
	remove("alpha", "beta", "zeta", "eta")
	if list, err := s.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(list) != 0 {
		t.Fatalf("%s: after deleting everything: List = %s, %v", what, joinKeys(list), err)
	}
}
