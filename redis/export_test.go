package redis

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// IsUnavailable reports whether err says Redis could not be reached or
// used (for tests in package redis_test): driver.ErrUnavailable.
func IsUnavailable(err error) bool { return errors.Is(err, errUnavailable) }

// OpenProxied opens conn as Open does, every connection of the store going
// to proxy(addr) instead of addr: the servers, the Sentinels and every
// Cluster node as the store learns of them (a Cluster node's own address,
// which it advertises, is mapped when it is dialled).
func OpenProxied(conn string, proxy func(string) string, opts ...helm3.Option) (helm3.Store, error) {
	cfg := helm3.NewConfig(Name, conn, opts...)
	b, err := open(context.Background(), cfg, proxy)
	if err != nil {
		return nil, err
	}
	return helm3.New(b, cfg), nil
}

// SetScanKeysMax sets the most keys a Cluster's primaries may hold for a
// read across namespaces to scan them instead of reading the registry, and
// returns a function that restores the default. Not for parallel tests.
func SetScanKeysMax(n int64) (restore func()) {
	old := scanKeysMax
	scanKeysMax = n
	return func() { scanKeysMax = old }
}

// RegistryKeys returns the keys of the namespace registry of s, a Redis
// store, that hold the namespaces nss: the one set on one server; in
// Cluster the set of each one's slot, and the one set earlier versions
// kept (legacyRegistry).
func RegistryKeys(t *testing.T, s helm3.Store, nss ...string) []string {
	b := backendOf(t, s)
	out := []string{b.k.namespaces()}
	for _, ns := range nss {
		if k := b.registryKey(ns); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
