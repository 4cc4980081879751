package redis

import (
	"context"
	"fmt"
	"testing"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
)

// Tamper returns the conformance suite's Tamperer over the keys of s: it
// writes Redis directly, as a hand edit or a bad restore would. It is a
// drivertest.Reshaper too.
func Tamper(t *testing.T, s helm3.Store) drivertest.Tamperer {
	return tamperer{backendOf(t, s)}
}

func backendOf(t *testing.T, s helm3.Store) *redisBackend {
	b, ok := envelope.Under(engine.Of(s).Backend()).(*redisBackend)
	if !ok {
		t.Fatalf("%T is not a Redis store", s)
	}
	return b
}

// Wipe deletes every key of the store's prefix, the namespace registry
// included, on every primary: what a FLUSHALL or a restart without
// persistence does to it, without touching other stores on the server.
func Wipe(t *testing.T, s helm3.Store) {
	b := backendOf(t, s)
	ctx := context.Background()
	keys, err := b.scan(ctx, "", globEscape(b.k.prefix)+":*", "")
	if err != nil {
		t.Fatalf("wipe: %v", err)
	}
	pipe := b.c.Pipeline()
	for _, k := range keys {
		pipe.Del(ctx, k) // one key each: in Cluster they span slots
	}
	if len(keys) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("wipe: %v", err)
		}
	}
}

type tamperer struct{ b *redisBackend }

var _ drivertest.Reshaper = tamperer{}

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
	return editIndex(ctx, tp.b, tp.b.k.head(ns, key), func(m map[string]string) {
		m[fLabels], m[fVersion] = "{not json", "seven"
	})
}

// editIndex rewrites the index field of the hash head: the fields it packs
// are edited by edit, then packed again in their order up to the first
// one edit removed.
func editIndex(ctx context.Context, b *redisBackend, head string, edit func(m map[string]string)) error {
	v, err := b.c.HGet(ctx, head, fIndex).Result()
	if err != nil {
		return err
	}
	m, err := unpackedFields(head, map[string]string{fIndex: v})
	if err != nil {
		return err
	}
	edit(m)
	var items []string
	for _, f := range indexItems {
		s, ok := m[f]
		if !ok {
			break
		}
		items = append(items, s)
	}
	return b.c.HSet(ctx, head, fIndex, packIndex(items...)).Err()
}

// unpackedFields returns the fields the index field of stored, the fields
// of the hash head, packs, with the summary marker if it packs the summary.
func unpackedFields(head string, stored map[string]string) (map[string]string, error) {
	x, p := indexOf(stored)
	if p != nil {
		return nil, fmt.Errorf("%s: %v", head, p)
	}
	m := map[string]string{}
	for i, f := range indexItems {
		if x.has[i] {
			m[f] = x.v[i]
		}
	}
	if x.hasMarker {
		m[fSummary] = x.marker
	}
	return m, nil
}

// unpackHead stores the fields the index field of the hash head packs as
// fields of their own, and removes it: a head as the backend wrote it
// before the index was packed.
func unpackHead(ctx context.Context, b *redisBackend, head string) error {
	stored, err := b.c.HGetAll(ctx, head).Result()
	if err != nil {
		return err
	}
	m, err := unpackedFields(head, stored)
	if err != nil {
		return err
	}
	var fields []interface{}
	for f, v := range m {
		fields = append(fields, f, v)
	}
	_, err = b.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HDel(ctx, head, fIndex)
		p.HSet(ctx, head, fields...)
		return nil
	})
	return err
}

// headFieldsRead are the head fields the backend reads back (in a head
// written before the index was packed, the fields it packs too).
var headFieldsRead = []string{fRev, fIndex, fChart, fValues, fManifest, fVBase, fMBase, fBody}

// partFieldsRead are the part fields the backend reads back.
var partFieldsRead = []string{pFrame, pKind, pSize, pRefs}

// Reshape damages the keys of a head or a part (drivertest.Reshaper):
//   - wrong type: the head or part key replaced by a string, then by a set
//     (a list for a part); for a head, its release name's index set, then
//     the namespace registry, replaced by a string; for a part, the
//     namespace's set of parts replaced by a string;
//   - missing field: each field the backend reads removed (a head's rev,
//     name, version, ..., body; a part's frame, kind, size, refs);
//   - huge count: a part's refs set to 1<<30 (a head records no count);
//   - huge size: a part's size set to 1<<40 (a head records no size).
func (tp tamperer) Reshape(ctx context.Context, target drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	c, k, ns := tp.b.c, tp.b.k, target.Namespace
	type edit struct {
		what string
		do   func() error
	}
	str := func(key, what string) edit {
		return edit{fmt.Sprintf("%s %s replaced by a string", what, key), func() error {
			_, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Del(ctx, key)
				p.Set(ctx, key, "not a "+what, 0)
				return nil
			})
			return err
		}}
	}
	other := func(key, what, typ string) edit {
		return edit{fmt.Sprintf("%s %s replaced by a %s", what, key, typ), func() error {
			_, err := c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.Del(ctx, key)
				if typ == "set" {
					p.SAdd(ctx, key, "not a "+what)
				} else {
					p.RPush(ctx, key, "not a "+what)
				}
				return nil
			})
			return err
		}}
	}
	hdel := func(key, what, f string) edit {
		return edit{fmt.Sprintf("%s %s field %s removed", what, key, f), func() error { return c.HDel(ctx, key, f).Err() }}
	}
	hset := func(key, what, f string, v int64) edit {
		return edit{fmt.Sprintf("%s %s field %s set to %d", what, key, f, v), func() error { return c.HSet(ctx, key, f, v).Err() }}
	}
	var edits []edit
	if target.Key != "" {
		head := k.head(ns, target.Key)
		name, _, _ := driver.ParseKey(target.Key)
		switch shape {
		case drivertest.WrongType:
			edits = []edit{str(head, "head"), other(head, "head", "set"), str(k.name(ns, name), "name index set"), str(tp.b.registryKey(ns), "namespace registry")}
		case drivertest.MissingField:
			for _, f := range headFieldsRead {
				edits = append(edits, hdel(head, "head", f))
			}
		}
	} else {
		part := tp.partKey(ns, target.Part)
		switch shape {
		case drivertest.WrongType:
			edits = []edit{str(part, "part"), other(part, "part", "list"), str(k.parts(ns), "set of parts")}
		case drivertest.MissingField:
			for _, f := range partFieldsRead {
				edits = append(edits, hdel(part, "part", f))
			}
		case drivertest.HugeCount:
			edits = []edit{hset(part, "part", pRefs, 1<<30)}
		case drivertest.HugeSize:
			edits = []edit{hset(part, "part", pSize, 1<<40)}
		}
	}
	if i < 0 || i >= len(edits) {
		return "", drivertest.ErrNoVariant
	}
	return edits[i].what, edits[i].do()
}
