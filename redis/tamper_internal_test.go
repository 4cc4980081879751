package redis

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/drivertest"
)

// Tamper returns the conformance suite's Tamperer over the keys of s: it
// writes Redis directly, as a hand edit or a bad restore would.
func Tamper(t *testing.T, s driver.Store) drivertest.Tamperer {
	b, ok := backend.BackendOf(s).(*redisBackend)
	if !ok {
		t.Fatalf("%T is not a Redis store", s)
	}
	return tamperer{b}
}

type tamperer struct{ b *redisBackend }

func (tp tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	v, err := tp.b.c.HMGet(ctx, tp.b.k.head(ns, key), fBody, fChart, fValues, fManifest).Result()
	if err != nil {
		return drivertest.StoredHead{}, err
	}
	s := func(i int) string { x, _ := v[i].(string); return x }
	return drivertest.StoredHead{Body: []byte(s(0)), Chart: s(1), Values: s(2), Manifest: s(3)}, nil
}

func (tp tamperer) SetHead(ctx context.Context, ns, key string, h drivertest.StoredHead) error {
	return tp.b.c.HSet(ctx, tp.b.k.head(ns, key), fBody, h.Body, fChart, h.Chart, fValues, h.Values, fManifest, h.Manifest).Err()
}

func (tp tamperer) partKey(ns, d string) string { return tp.b.k.tag(ns) + "p:" + d }

func (tp tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	return tp.b.c.HGet(ctx, tp.partKey(ns, d), pFrame).Bytes()
}

func (tp tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	return tp.b.c.HSet(ctx, tp.partKey(ns, d), pFrame, frame).Err()
}

func (tp tamperer) DeletePart(ctx context.Context, ns, d string) error {
	if err := tp.b.c.Del(ctx, tp.partKey(ns, d)).Err(); err != nil {
		return err
	}
	return tp.b.c.SRem(ctx, tp.b.k.parts(ns), d).Err()
}

func (tp tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	return tp.b.c.HSet(ctx, tp.b.k.head(ns, key), fLabels, "{not json", fVersion, "seven").Err()
}
