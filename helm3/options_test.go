package helm3_test

import (
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
)

// NewConfig holds the defaults, applies options in order, and never leaves
// Log nil.
func TestNewConfig(t *testing.T) {
	c := helm3.NewConfig("x", "conn")
	if c.Name != "x" || c.ConnectionString != "conn" || c.CacheBytes != helm3.DefaultCacheBytes || c.Timeout != helm3.DefaultTimeout || c.Log == nil || c.RESTClientGetter != nil {
		t.Fatalf("defaults: %+v", c)
	}
	c.Log("no panic: %d", 1)

	var logged []string
	c = helm3.NewConfig("x", "", helm3.WithCacheBytes(0), helm3.WithTimeout(time.Second), helm3.WithTimeout(-time.Second),
		helm3.WithLog(func(f string, _ ...interface{}) { logged = append(logged, f) }))
	if c.CacheBytes != 0 || c.Timeout != 0 {
		t.Fatalf("options: cache %d, timeout %v; want 0, 0 (the last WithTimeout, negative, removes the bound)", c.CacheBytes, c.Timeout)
	}
	c.Log("hello")
	if len(logged) != 1 || logged[0] != "hello" {
		t.Fatalf("Log: %v", logged)
	}
	if c := helm3.NewConfig("x", "", helm3.WithLog(nil)); c.Log == nil {
		t.Fatal("WithLog(nil) left Log nil")
	}
}
