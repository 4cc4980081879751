package redis

import (
	"bytes"
	"context"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// Holds reports whether a key of s's prefix (its name, a string's
// value, a hash's field or value, a set's or sorted set's member, a list's
// element) contains secret.
func Holds(t *testing.T, s helm3.Store, secret []byte) bool {
	b := backendOf(t, s)
	ctx := context.Background()
	keys, err := b.scan(ctx, "", globEscape(b.k.prefix)+":*", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("the scan found no key")
	}
	for _, k := range keys {
		var vals []string
		typ, err := b.c.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "string":
			v, err := b.c.Get(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			vals = []string{v}
		case "hash":
			m, err := b.c.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			for f, v := range m {
				vals = append(vals, f, v)
			}
		case "set":
			vals, err = b.c.SMembers(ctx, k).Result()
		case "zset":
			vals, err = b.c.ZRange(ctx, k, 0, -1).Result()
		case "list":
			vals, err = b.c.LRange(ctx, k, 0, -1).Result()
		default:
			t.Fatalf("key %s is a %s, which the scan does not read", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range append(vals, k) {
			if bytes.Contains([]byte(v), secret) {
				return true
			}
		}
	}
	return false
}
