package crsplit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// smallRelease is revision v of a release with a small chart named
// chartName, and values and manifest that differ with v.
func smallRelease(name, ns string, v int, chartName string) *release.Release {
	return smallVariant(name, ns, v, v, chartName)
}

// smallVariant is smallRelease with values and manifest chosen by variant.
func smallVariant(name, ns string, v, variant int, chartName string) *release.Release {
	opts := fixture.SmallChartOptions
	opts.Name = chartName
	g := fixture.New(uint64(100 + variant))
	return g.Release(name, ns, v, fixture.New(9).Chart(opts), g.Values(5), release.StatusDeployed, 500)
}

// TestPendingReleaseIsInvisible stops a Create after its head is written
// and before its Values part is, and checks what a reader sees meanwhile:
// nothing.
func TestPendingReleaseIsInvisible(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	reader, _ := openAs(t, k, kubeenv.Admin, ns)
	g := newGate()
	b.hooks.BeforePart = func(p *driver.Part) error {
		if p.Kind == driver.KindValues {
			g.hold()
		}
		return nil
	}
	r := fixture.LargeRelease("app", ns, 1)
	done := g.run(func() error { return s.Create(key("app", 1), r) })
	// The head is written (the Release is labelled pending=parts)...
	waitUntil(t, "the head is written", func() bool {
		raw, err := b.c.get(ctxT(t), resReleases, ns, key("app", 1))
		return err == nil && meta(t, raw).Labels[caswire.LabelPending] == caswire.PendingParts
	})
	if n := count(t, b, resValues, ns); n != 0 {
		t.Fatalf("%d Values objects while the Values part is held back", n)
	}
	// ...but no reader sees the release.
	if _, err := reader.Get(key("app", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get of a pending release: %v, want ErrReleaseNotFound", err)
	}
	if rs, err := reader.List(func(*release.Release) bool { return true }); err != nil || len(rs) != 0 {
		t.Fatalf("list while pending: %d, %v", len(rs), err)
	}
	if _, err := reader.Query(map[string]string{"name": "app"}); err != helm3.ErrReleaseNotFound {
		t.Fatalf("query while pending: %v", err)
	}
	if st, _ := reader.Stats(ctxT(t)); st.Releases != 0 {
		t.Fatalf("stats count a pending release: %+v", st)
	}
	// A second writer of the same key loses, cleanly.
	if err := reader.Create(key("app", 1), r); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create of a pending key: %v, want ErrReleaseExists", err)
	}
	// Update and Delete do not act on it either.
	if err := reader.Update(key("app", 1), r); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("update of a pending release: %v", err)
	}
	if _, err := reader.Delete(key("app", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("delete of a pending release: %v", err)
	}
	g.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err := reader.Get(key("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "after create", got, r)
	// The background commit removes the pending label.
	if l := meta(t, rawObjects(t, b, resReleases, ns)[0]).Labels; l[caswire.LabelPending] != "" {
		t.Fatalf("labels after the commit: %v", l)
	}
}

// TestCompleteReleaseIsVisible stops a Create after everything is written,
// before the commit: the release is whole, so readers see it, count it,
// update and delete it, as they will after the commit.
func TestCompleteReleaseIsVisible(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	other, _ := openAs(t, k, kubeenv.Admin, ns)
	var g *gate
	b.hooks.BeforeCommit = func(*driver.Head) error {
		g.hold()
		return nil
	}
	g = newGate()
	r := fixture.LargeRelease("app", ns, 1)
	done := g.run(func() error { return s.Create(key("app", 1), r) })
	raw, err := b.c.get(ctxT(t), resReleases, ns, key("app", 1))
	if err != nil || meta(t, raw).Labels[caswire.LabelPending] != caswire.PendingParts {
		t.Fatalf("Release before the commit: %v, %s", err, raw)
	}
	got, err := other.Get(key("app", 1))
	if err != nil {
		t.Fatalf("get of a complete, uncommitted release: %v", err)
	}
	sameAsHelm(t, "before the commit", got, r)
	if rs, err := other.Query(map[string]string{"name": "app", "status": "deployed"}); err != nil || len(rs) != 1 {
		t.Fatalf("query before the commit: %d, %v", len(rs), err)
	}
	if st, _ := other.Stats(ctxT(t)); st.Releases != 1 {
		t.Fatalf("stats before the commit: %+v", st)
	}
	if err := other.Create(key("app", 1), r); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create of a complete key: %v, want ErrReleaseExists", err)
	}
	// An Update by another client commits it; the writer's own commit,
	// which comes later, loses quietly.
	r.Info.Status = release.StatusSuperseded
	if err := other.Update(key("app", 1), r); err != nil {
		t.Fatalf("update before the commit: %v", err)
	}
	g.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(key("app", 1))
	if err != nil || got.Info.Status != release.StatusSuperseded {
		t.Fatalf("after the update and the writer's commit: %v, %v", got.Info.Status, err)
	}
	if l := meta(t, rawObjects(t, b, resReleases, ns)[0]).Labels; l[caswire.LabelPending] != "" || l["status"] != "superseded" {
		t.Fatalf("labels: %v", l)
	}
	// readBeforeCommit creates revision v, has other read it before the
	// commit, and returns once the commit is done.
	readBeforeCommit := func(v int) *release.Release {
		g = newGate()
		r := fixture.LargeRelease("app", ns, v)
		done := g.run(func() error { return s.Create(key("app", v), r) })
		if _, err := other.Get(key("app", v)); err != nil {
			t.Fatal(err)
		}
		g.release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		b.WaitCommits()
		return r
	}
	// A client that read the release before the commit and updates it
	// after: the commit is no conflict.
	r2 := readBeforeCommit(2)
	r2.Info.Status = release.StatusFailed
	if err := other.Update(key("app", 2), r2); err != nil {
		t.Fatalf("update of a release read before its commit: %v", err)
	}
	// A change after the commit (even one to the spec alone, as by
	// kubectl edit) is overwritten: the last writer wins.
	r3 := readBeforeCommit(3)
	if _, err := b.c.patch(ctxT(t), resReleases, ns, key("app", 3), "application/merge-patch+json", map[string]any{"spec": map[string]any{"description": "edited"}}); err != nil {
		t.Fatal(err)
	}
	r3.Info.Status = release.StatusFailed
	if err := other.Update(key("app", 3), r3); err != nil {
		t.Fatalf("update after the spec was changed by someone else: %v, want it to overwrite", err)
	}
	if got, err := s.Get(key("app", 3)); err != nil || got.Info.Status != release.StatusFailed {
		t.Fatalf("after overwriting an edit: %v, %v", got, err)
	}
	// (A change through another store is TestUpdateAfterStaleRead's.)
}

// TestCrashedCreateIsCollected simulates a writer killed after writing the
// Release and some of its parts, before its Values part: readers never see
// the release, and the pending Release with the parts only it owns is
// removed later, by a Create of the same key or by any Delete in the
// namespace.
func TestCrashedCreateIsCollected(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	// Values and manifests of a few KiB: part objects of their own (of at
	// most 1 KiB compressed, they would be embedded in the Release).
	variant := func(r *release.Release, seed uint64) *release.Release {
		g := fixture.New(seed)
		r.Config, r.Manifest = g.Values(200), g.Manifest(r.Name, 8000)
		return r
	}
	shared := variant(smallRelease("keep", ns, 1, "shared"), 1)
	if err := s.Create(key("keep", 1), shared); err != nil {
		t.Fatal(err)
	}
	crash := func(name string) {
		b.hooks.BeforePart = crashAt(driver.KindValues)
		defer func() { b.hooks.BeforePart = nil }()
		// Same chart as "keep" (shared), its own values and manifest.
		if err := s.Create(key(name, 1), variant(smallVariant(name, ns, 1, 2, "shared"), 2)); !errors.Is(err, casprobe.ErrCrash) {
			t.Fatalf("crash: %v", err)
		}
	}
	parts := func() (charts, values, manifests int) {
		return count(t, b, resCharts, ns), count(t, b, resValues, ns), count(t, b, resManifests, ns)
	}
	crash("lost")
	if _, err := s.Get(key("lost", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("a crashed create is visible: %v", err)
	}
	if c, v, m := parts(); c != 1 || v != 1 || m != 2 {
		t.Fatalf("after the crash: %d charts, %d values, %d manifests; want 1, 1, 2", c, v, m)
	}
	// Not stale yet: a new Create of the key is refused, as for a writer
	// still at work.
	if err := s.Create(key("lost", 1), variant(smallVariant("lost", ns, 1, 3, "shared"), 3)); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create over a fresh pending release: %v", err)
	}
	// Once stale, a Create of the key takes it over...
	b.SetPendingTimeout(0)
	defer b.SetPendingTimeout(PendingTimeout)
	r := variant(smallVariant("lost", ns, 1, 3, "shared"), 3)
	if err := s.Create(key("lost", 1), r); err != nil {
		t.Fatalf("create over a stale pending release: %v", err)
	}
	got, err := s.Get(key("lost", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "release written over a crashed one", got, r)
	if c, v, m := parts(); c != 1 || v != 2 || m != 2 {
		t.Fatalf("after the takeover: %d charts, %d values, %d manifests; want 1, 2, 2 (the crashed writer's parts collected)", c, v, m)
	}
	// ...and any Delete sweeps the stale pending Releases of its namespace.
	crash("gone")
	if c, v, m := parts(); c != 1 || v != 2 || m != 3 {
		t.Fatalf("after the second crash: %d, %d, %d", c, v, m)
	}
	if _, err := s.Delete(key("lost", 1)); err != nil {
		t.Fatal(err)
	}
	if c, v, m := parts(); c != 1 || v != 1 || m != 1 {
		t.Fatalf("after a delete swept the crashed create: %d charts, %d values, %d manifests; want only keep's", c, v, m)
	}
	if n := count(t, b, resReleases, ns); n != 1 {
		t.Fatalf("%d Release objects left, want 1", n)
	}
	if _, err := s.Get(key("keep", 1)); err != nil {
		t.Fatalf("the release sharing the crashed writer's chart: %v", err)
	}
}

// gate holds an operation at a hook until the test releases it.
type gate struct{ held, proceed chan struct{} }

func newGate() *gate { return &gate{make(chan struct{}), make(chan struct{})} }

// hold, called by the hook, signals that the operation is held and waits.
func (g *gate) hold() {
	close(g.held)
	<-g.proceed
}

// release lets the held operation go on.
func (g *gate) release() { close(g.proceed) }

// run starts op and returns, once op is held, where its result will come.
func (g *gate) run(op func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- op() }()
	<-g.held
	return done
}

// crashAt is a beforePart hook that stops, as a crash would, at the part
// of kind k.
func crashAt(k driver.Kind) func(*driver.Part) error {
	return func(p *driver.Part) error {
		if p.Kind == k {
			return casprobe.ErrCrash
		}
		return nil
	}
}

// TestUncommittedReleaseIsKept simulates a writer that stops after a
// complete Create, before its commit (a process exiting at once): the
// release is readable, and once stale the cleanup of pending Releases
// commits it instead of removing it.
func TestUncommittedReleaseIsKept(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	b.hooks.BeforeCommit = func(*driver.Head) error { return casprobe.ErrCrash }
	r := smallRelease("app", ns, 1, "c")
	if err := s.Create(key("app", 1), r); !errors.Is(err, casprobe.ErrCrash) {
		t.Fatalf("crash: %v", err)
	}
	b.hooks.BeforeCommit = nil
	got, err := s.Get(key("app", 1))
	if err != nil {
		t.Fatalf("get of a complete, uncommitted release: %v", err)
	}
	sameAsHelm(t, "uncommitted", got, r)
	b.SetPendingTimeout(0)
	defer b.SetPendingTimeout(PendingTimeout)
	// A Create of the key over it is refused: it is a release, not debris.
	if err := s.Create(key("app", 1), smallRelease("app", ns, 1, "d")); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create over a stale, complete release: %v", err)
	}
	if l := meta(t, rawObjects(t, b, resReleases, ns)[0]).Labels; l[caswire.LabelPending] != "" {
		t.Fatalf("a stale, complete release is not committed by the cleanup: labels %v", l)
	}
	// A Delete's sweep of the namespace commits one too.
	b.hooks.BeforeCommit = func(*driver.Head) error { return casprobe.ErrCrash }
	r2 := smallRelease("app", ns, 2, "c")
	if err := s.Create(key("app", 2), r2); !errors.Is(err, casprobe.ErrCrash) {
		t.Fatalf("crash: %v", err)
	}
	b.hooks.BeforeCommit = nil
	if err := s.Create(key("other", 1), smallRelease("other", ns, 1, "c")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(key("other", 1)); err != nil {
		t.Fatal(err)
	}
	for _, raw := range rawObjects(t, b, resReleases, ns) {
		if l := meta(t, raw).Labels; l[caswire.LabelPending] != "" {
			t.Fatalf("after a delete swept the namespace: labels %v", l)
		}
	}
	for v, want := range []*release.Release{r, r2} {
		got, err := s.Get(key("app", v+1))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "after the cleanup", got, want)
	}
}

// TestFailedCreateRollsBack makes a Create fail while storing its parts
// and after everything is written, and checks nothing is left behind (the
// Release is hidden before it is removed).
func TestFailedCreateRollsBack(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	injected := errors.New("injected failure")
	for _, at := range []string{"part", "commit"} {
		if at == "part" {
			b.hooks.BeforePart = func(p *driver.Part) error {
				if p.Kind == driver.KindManifest {
					return injected
				}
				return nil
			}
		} else {
			b.hooks.BeforeCommit = func(*driver.Head) error { return injected }
		}
		err := s.Create(key("app", 1), fixture.LargeRelease("app", ns, 1))
		if !errors.Is(err, injected) || !strings.Contains(err.Error(), key("app", 1)) {
			t.Fatalf("create failing at %s: %v", at, err)
		}
		b.hooks.BeforePart, b.hooks.BeforeCommit = nil, nil
		assertNoObjects(t, b, ns, "left by a create failing at "+at)
	}
	// A Create that fails after all its writes landed, while another
	// client saw the release whole and updated it: the release is kept
	// and the Create reports success, since it did happen.
	other, _ := openAs(t, k, kubeenv.Admin, ns)
	r := fixture.LargeRelease("app", ns, 1)
	b.hooks.BeforeCommit = func(*driver.Head) error {
		r.Info.Status = release.StatusSuperseded
		if err := other.Update(key("app", 1), r); err != nil {
			t.Errorf("update of the complete release: %v", err)
		}
		return injected
	}
	if err := s.Create(key("app", 1), fixture.LargeRelease("app", ns, 1)); err != nil {
		t.Fatalf("create whose release another client updated before it failed: %v", err)
	}
	b.hooks.BeforeCommit = nil
	got, err := s.Get(key("app", 1))
	if err != nil || got.Info.Status != release.StatusSuperseded {
		t.Fatalf("after: %v, %v", got, err)
	}
}

// TestReadersNeverSeeMissingParts runs writers that create and delete
// releases with parts of their own and parts shared with others, against
// readers listing and getting all the time: every release a reader sees
// must come back whole, unless it was deleted meanwhile.
//
// The engine reads a head and its parts in two requests, so a release
// deleted between them is reported (Get: a missing-part error; List: logged
// and skipped). That is a release deleted during the read, not one committed
// before its parts: every release a read failed on must be gone afterwards
// (the test never writes a key twice), and its Delete must have begun
// before the read failed.
func TestReadersNeverSeeMissingParts(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	w1, _ := openAs(t, k, kubeenv.Admin, ns, helm3.WithCacheBytes(0))
	w2, _ := openAs(t, k, kubeenv.Admin, ns, helm3.WithCacheBytes(0))
	type failure struct {
		how string
		at  time.Time
	}
	var mu sync.Mutex
	failed := map[string]failure{}     // key -> how and when a read failed
	deleting := map[string]time.Time{} // key -> when its Delete began
	fail := func(k, how string) {
		mu.Lock()
		failed[k] = failure{how, time.Now()}
		mu.Unlock()
	}
	reader, _ := openAs(t, k, kubeenv.Admin, ns, helm3.WithCacheBytes(0), helm3.WithLog(func(format string, v ...interface{}) {
		// The engine logs and skips a release it cannot assemble.
		if strings.Contains(format, "skipping") && len(v) > 0 {
			fail(fmt.Sprint(v[0]), fmt.Sprintf(format, v...))
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var seen, writes atomic.Int64
	errs := make(chan error, 8)
	writer := func(s helm3.Store, name string) {
		defer wg.Done()
		for i := 1; i <= 12; i++ {
			r := smallRelease(name, ns, i, fmt.Sprintf("chart-%d", i%3))
			if err := s.Create(key(name, i), r); err != nil {
				errs <- err
				return
			}
			writes.Add(1)
			if i > 2 {
				mu.Lock()
				deleting[key(name, i-2)] = time.Now()
				mu.Unlock()
				if _, err := s.Delete(key(name, i-2)); err != nil {
					errs <- err
					return
				}
			}
		}
	}
	wg.Add(2)
	go writer(w1, "one")
	go writer(w2, "two")
	stop := make(chan struct{})
	var rg sync.WaitGroup
	rg.Add(1)
	go func() {
		defer rg.Done()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			rs, err := reader.List(func(*release.Release) bool { return true })
			if err != nil {
				errs <- fmt.Errorf("list: %w", err)
				return
			}
			for _, r := range rs {
				if r.Chart == nil || r.Config == nil || r.Manifest == "" {
					errs <- fmt.Errorf("list returned %s v%d without its parts", r.Name, r.Version)
					return
				}
				seen.Add(1)
			}
			for _, r := range rs {
				k := key(r.Name, r.Version)
				got, err := reader.Get(k)
				switch {
				case errors.Is(err, helm3.ErrReleaseNotFound):
				case errors.Is(err, engine.ErrPartMissing):
					fail(k, err.Error())
				case err != nil:
					errs <- fmt.Errorf("get %s: %w", k, err)
					return
				case got.Chart == nil || got.Config == nil:
					errs <- fmt.Errorf("get returned %s without its parts", k)
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k, f := range failed {
		if _, err := reader.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("a read failed on %s, which still exists (get: %v): %s", k, err, f.how)
		}
		if began, ok := deleting[k]; !ok || began.After(f.at) {
			t.Fatalf("a read failed on %s before anything began to delete it: %s", k, f.how)
		}
	}
	rs, _ := reader.List(func(*release.Release) bool { return true })
	if len(rs) != 4 {
		t.Fatalf("%d releases at the end, want 4", len(rs))
	}
	t.Logf("%d writes; readers saw %d whole releases; %d reads raced a delete", writes.Load(), seen.Load(), len(failed))
	if seen.Load() == 0 {
		t.Fatal("the readers saw nothing: the test tested nothing")
	}
}
