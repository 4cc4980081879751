package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/internal/engine"

	"github.com/helmstore/helmstore/driver"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/memstore"
)

// counting counts the writes that reach the backend.
type counting struct {
	driver.Backend
	writes int
}

func (c *counting) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	c.writes++
	return c.Backend.Create(ctx, h, parts)
}

func (c *counting) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	c.writes++
	return c.Backend.Update(ctx, h, parts)
}

func openCounting(t *testing.T) (*view, *counting) {
	t.Helper()
	base := open(t, &driver.Config{Name: memstore.Name, CacheBytes: driver.DefaultCacheBytes})
	c := &counting{Backend: base.Backend()}
	return engine.New(c, &driver.Config{Name: "counting", Log: func(string, ...interface{}) {}}, helm3codec.Codec{}), c
}

// D3: a custom label under helmstore.io/ is refused by the engine on Create
// and on Update, on every backend, naming the release and the label; the
// backend is not asked and nothing changes.
func TestReservedLabelsRefused(t *testing.T) {
	t.Parallel()
	s, c := openCounting(t)
	k := driver.MakeKey("app", 1)
	bad := rel("app", 1, "a")
	bad.Labels = map[string]string{"team": "x", driver.ReservedLabelPrefix + "pending": "true"}
	check := func(op string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s accepted a reserved label", op)
		}
		for _, want := range []string{k, driver.ReservedLabelPrefix + "pending"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s error %q does not name %q", op, err, want)
			}
		}
		if c.writes != 0 {
			t.Fatalf("%s reached the backend", op)
		}
	}
	check("create", s.Create(k, bad))
	if _, err := s.Get(k); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("refused create stored the release: %v", err)
	}
	good := rel("app", 1, "a")
	good.Labels = map[string]string{"team": "x"}
	if err := s.Create(k, good); err != nil {
		t.Fatal(err)
	}
	c.writes = 0
	check("update", s.Update(k, bad))
	got, err := s.Query(map[string]string{"name": "app"})
	if err != nil || len(got) != 1 || got[0].Labels["team"] != "x" || got[0].Labels["modifiedAt"] != "" {
		t.Fatalf("after a refused update: %v, %v", got, err)
	}
	if _, ok := got[0].Labels[driver.ReservedLabelPrefix+"pending"]; ok {
		t.Fatal("a refused update stored its reserved label")
	}
}

// CreatedAt is set by Create and kept by Update (the head the engine gives
// Update has none: a backend that dropped the stored one loses the label),
// which sets ModifiedAt.
func TestCreatedAtKeptOnUpdate(t *testing.T) {
	t.Parallel()
	s, _ := openCounting(t)
	k := driver.MakeKey("app", 1)
	if err := s.Create(k, rel("app", 1, "a")); err != nil {
		t.Fatal(err)
	}
	labels := func() map[string]string {
		rs, err := s.Query(map[string]string{"name": "app"})
		if err != nil || len(rs) != 1 {
			t.Fatalf("%v, %v", rs, err)
		}
		return rs[0].Labels
	}
	created := labels()["createdAt"]
	if created == "" || labels()["modifiedAt"] != "" {
		t.Fatalf("after create: %v", labels())
	}
	upd := rel("app", 1, "b")
	upd.Info.Status = release.StatusSuperseded
	if err := s.Update(k, upd); err != nil {
		t.Fatal(err)
	}
	l := labels()
	if l["createdAt"] != created || l["modifiedAt"] == "" || l["status"] != "superseded" {
		t.Fatalf("after update: %v (created at %s)", l, created)
	}
}
