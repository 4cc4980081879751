package driver_test

import (
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// NewConfig holds the defaults, applies options in order, and never leaves
// Log nil.
func TestNewConfig(t *testing.T) {
	c := driver.NewConfig("x", "conn")
	if c.Name != "x" || c.ConnectionString != "conn" || c.CacheBytes != driver.DefaultCacheBytes || c.Timeout != driver.DefaultTimeout || c.Log == nil || c.RESTClientGetter != nil {
		t.Fatalf("defaults: %+v", c)
	}
	c.Log("no panic: %d", 1)

	var logged []string
	c = driver.NewConfig("x", "", driver.WithCacheBytes(0), driver.WithTimeout(time.Second), driver.WithTimeout(-time.Second),
		driver.WithLog(func(f string, _ ...interface{}) { logged = append(logged, f) }))
	if c.CacheBytes != 0 || c.Timeout != 0 {
		t.Fatalf("options: cache %d, timeout %v; want 0, 0 (the last WithTimeout, negative, removes the bound)", c.CacheBytes, c.Timeout)
	}
	c.Log("hello")
	if len(logged) != 1 || logged[0] != "hello" {
		t.Fatalf("Log: %v", logged)
	}
	if c := driver.NewConfig("x", "", driver.WithLog(nil)); c.Log == nil {
		t.Fatal("WithLog(nil) left Log nil")
	}
}
