package helm3

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// Open gives an opener exactly what NewConfig returns for the same
// arguments.
func TestOpenConfigIsNewConfig(t *testing.T) {
	var got *driver.Config
	stop := errors.New("captured")
	name := withOpeners(t, map[string]driver.Opener{"probe": func(_ context.Context, c *driver.Config) (driver.Backend, error) {
		got = c
		return nil, stop
	}})
	opts := []Option{WithCacheBytes(123), WithTimeout(7 * time.Second)}
	if _, err := Open(context.Background(), name("probe"), "somewhere", opts...); !errors.Is(err, stop) {
		t.Fatal(err)
	}
	want := NewConfig(name("probe"), "somewhere", opts...)
	if got == nil || got.Name != want.Name || got.ConnectionString != want.ConnectionString || got.CacheBytes != want.CacheBytes ||
		got.Timeout != want.Timeout || got.Log == nil || got.RESTClientGetter != nil {
		t.Fatalf("opener got %+v; NewConfig gives %+v", got, want)
	}
}
