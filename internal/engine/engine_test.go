package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/internal/engine"

	"github.com/helmstore/helmstore/driver"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/memstore"
)

// racing runs interfere once, right after the next Heads call returns: a
// write by someone else between the engine's read of a head and of its parts.
type racing struct {
	driver.Backend
	mu        sync.Mutex
	interfere func()
}

func (r *racing) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	hs, err := r.Backend.Heads(ctx, q)
	r.mu.Lock()
	f := r.interfere
	r.interfere = nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
	return hs, err
}

func rel(name string, v int, greeting string) *release.Release {
	return &release.Release{Name: name, Namespace: "default", Version: v,
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1"}},
		Config: map[string]interface{}{"greeting": greeting}, Manifest: "m: " + greeting,
		Info: &release.Info{Status: release.StatusDeployed}}
}

// view is the engine as the Helm 3 face holds it: Helm's driver methods
// on Helm 3's release type.
type view = engine.View[release.Release]

// open returns the engine over a new private memstore space, with cfg
// (memstore reads only its connection string), closed when t ends.
func open(t *testing.T, cfg *driver.Config) *view {
	t.Helper()
	b, err := memstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	v := engine.New(b, cfg, helm3codec.Codec{})
	t.Cleanup(func() { v.Close() })
	return v
}

func setup(t *testing.T) (plain *view, racy *view, r *racing, logs *[]string) {
	t.Helper()
	base := open(t, &driver.Config{Name: memstore.Name})
	r = &racing{Backend: base.Backend()}
	logs = new([]string)
	var mu sync.Mutex
	cfg := &driver.Config{Name: "racing", Log: func(f string, v ...interface{}) { mu.Lock(); *logs = append(*logs, f); mu.Unlock() }}
	return base, engine.New(r, cfg, helm3codec.Codec{}), r, logs
}

func TestGetRacingDeleteIsNotFound(t *testing.T) {
	t.Parallel()
	plain, racy, r, _ := setup(t)
	k := driver.MakeKey("app", 1)
	if err := plain.Create(k, rel("app", 1, "a")); err != nil {
		t.Fatal(err)
	}
	r.interfere = func() { plain.Delete(k) }
	_, err := racy.Get(k)
	if !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("get of a release deleted between head and parts: %v, want ErrReleaseNotFound", err)
	}
}

func TestGetRacingUpdateReturnsTheUpdate(t *testing.T) {
	t.Parallel()
	plain, racy, r, _ := setup(t)
	k := driver.MakeKey("app", 1)
	if err := plain.Create(k, rel("app", 1, "old")); err != nil {
		t.Fatal(err)
	}
	r.interfere = func() {
		if err := plain.Update(k, rel("app", 1, "new")); err != nil {
			t.Error(err)
		}
	}
	got, err := racy.Get(k)
	if err != nil || got.Config["greeting"] != "new" {
		t.Fatalf("get racing an update that replaced the parts: %v, %v", err, got)
	}
}

func TestListRacingDeleteSkipsQuietly(t *testing.T) {
	t.Parallel()
	plain, racy, r, logs := setup(t)
	for _, n := range []string{"a", "b", "c"} {
		if err := plain.Create(driver.MakeKey(n, 1), rel(n, 1, n)); err != nil {
			t.Fatal(err)
		}
	}
	r.interfere = func() { plain.Delete(driver.MakeKey("b", 1)) }
	rs, err := racy.List(func(*release.Release) bool { return true })
	if err != nil || len(rs) != 2 || rs[0].Name != "a" || rs[1].Name != "c" {
		t.Fatalf("list racing a delete: %d releases, %v", len(rs), err)
	}
	if len(*logs) != 0 {
		t.Fatalf("a release deleted meanwhile was logged as undecodable: %q", *logs)
	}
}

func TestListLogsAndSkipsCorruption(t *testing.T) {
	t.Parallel()
	plain, racy, r, logs := setup(t)
	for _, n := range []string{"a", "b"} {
		if err := plain.Create(driver.MakeKey(n, 1), rel(n, 1, n)); err != nil {
			t.Fatal(err)
		}
	}
	// A part that stays missing (not a race) is reported, not hidden.
	r.Backend = &missingPart{Backend: r.Backend, kind: codec.KindValues, of: "b"}
	rs, err := racy.List(func(*release.Release) bool { return true })
	if err != nil || len(rs) != 1 || rs[0].Name != "a" {
		t.Fatalf("list with a damaged release: %d, %v", len(rs), err)
	}
	if len(*logs) != 1 || !strings.Contains((*logs)[0], "cannot be decoded") {
		t.Fatalf("the damaged release was not logged: %q", *logs)
	}
	if _, err := racy.Get(driver.MakeKey("b", 1)); !errors.Is(err, engine.ErrPartMissing) || errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("get of a release whose part is missing: %v", err)
	}
}

// missingPart hides the part of one kind of one release's heads.
type missingPart struct {
	driver.Backend
	kind codec.Kind
	of   string
}

func (m *missingPart) Parts(ctx context.Context, refs []driver.PartRef) (map[codec.Digest][]byte, error) {
	hs, _ := m.Backend.Heads(ctx, driver.Query{Name: m.of})
	out, err := m.Backend.Parts(ctx, refs)
	for _, h := range hs {
		delete(out, h.Digest(m.kind))
	}
	return out, err
}

// damagedHeads is a backend whose every head reads as damaged.
type damagedHeads struct{ driver.Backend }

func (d damagedHeads) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	hs, err := d.Backend.Heads(ctx, q)
	for _, h := range hs {
		h.Err = errors.New("damaged")
	}
	return hs, err
}

// A config without Log (a backend's own test harness, say) must not make
// the engine panic when it has something to log: a release List skips.
func TestNilLogDoesNotPanic(t *testing.T) {
	t.Parallel()
	s := open(t, &driver.Config{Name: memstore.Name, CacheBytes: driver.DefaultCacheBytes})
	rls := &release.Release{Name: "a", Version: 1, Namespace: "default", Info: &release.Info{Status: release.StatusDeployed}}
	if err := s.Create("sh.helm.release.v1.a.v1", rls); err != nil {
		t.Fatal(err)
	}
	st := engine.New(damagedHeads{s.Backend()}, &driver.Config{Name: "memstore"}, helm3codec.Codec{})
	got, err := st.List(func(*release.Release) bool { return true })
	if err != nil || len(got) != 0 {
		t.Fatalf("List of a damaged release: %d releases, %v; want none, skipped", len(got), err)
	}
}

// evicting runs evict once, right after the next Delete returns: other
// calls of the same store pushing the deleted release's parts out of the
// part cache between the backend's answer (which left out the frames the
// engine said it held) and the engine's assembling of the release.
type evicting struct {
	driver.Backend
	evict func()
}

func (e *evicting) Delete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*driver.Head, map[codec.Digest][]byte, error) {
	h, frames, err := e.Backend.Delete(ctx, ns, key, have)
	if f := e.evict; f != nil {
		e.evict = nil
		f()
	}
	return h, frames, err
}

// TestDeleteRacingEvictionReturnsTheRelease: a Delete whose parts leave the
// cache while it runs still returns the whole release, not "deleted, but
// its stored data is corrupt".
func TestDeleteRacingEvictionReturnsTheRelease(t *testing.T) {
	t.Parallel()
	base := open(t, &driver.Config{Name: memstore.Name})
	ev := &evicting{Backend: base.Backend()}
	// A cache that holds about one release's parts.
	s := engine.New(ev, &driver.Config{Name: "evicting", CacheBytes: 600}, helm3codec.Codec{})
	want := rel("app", 1, strings.Repeat("a", 100))
	if err := s.Create("sh.helm.release.v1.app.v1", want); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("sh.helm.release.v1.app.v1"); err != nil { // its parts now cached
		t.Fatal(err)
	}
	ev.evict = func() {
		for i := range 8 {
			r := rel("other", i+1, strings.Repeat(string(rune('b'+i)), 100))
			r.Chart.Metadata.Version = strings.Repeat("9", i+1)
			key := driver.MakeKey("other", i+1)
			if err := s.Create(key, r); err != nil {
				t.Error(err)
			}
			if _, err := s.Get(key); err != nil {
				t.Error(err)
			}
		}
	}
	got, err := s.Delete("sh.helm.release.v1.app.v1")
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if ev.evict != nil {
		t.Fatal("the backend's Delete was not reached")
	}
	if got.Manifest != want.Manifest || got.Config["greeting"] != want.Config["greeting"] {
		t.Fatalf("Delete returned manifest %q, config %v; want %q, %v", got.Manifest, got.Config, want.Manifest, want.Config)
	}
}
