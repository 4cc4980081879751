package crsplit

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// errKilled is what every request of a writer that "died" fails with.
var errKilled = errors.New("the writer process died (crash-point test)")

// killAfter is a transport that lets the first limit writes (POST, PUT,
// PATCH, DELETE) through, then fails every request, the limit+1-th write
// included, without sending it: the process died between two writes.
type killAfter struct {
	limit  int64
	writes atomic.Int64
	dead   atomic.Bool
	next   http.RoundTripper
}

func (k *killAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.dead.Load() {
		return nil, errKilled
	}
	if r.Method != http.MethodGet && k.writes.Add(1) > k.limit {
		k.dead.Store(true)
		return nil, errKilled
	}
	return k.next.RoundTrip(r)
}

// TestLatestIndexCrashPoints: a writer that dies between any two of its
// writes to the API server, while it installs a release, upgrades it
// twice (three revisions, each retiring the one below from the index of
// latest revisions in its background commit), deletes the latest
// revision (which marks the one below first), rolls back (a fourth
// revision) and deletes the two highest, leaves the summary listing of
// latest revisions exact: a fresh store's Summaries list each release at
// its highest revision that List returns (castest.Snapshot), before and
// after Collect. Another release beside it must stay listed throughout.
func TestLatestIndexCrashPoints(t *testing.T) {
	t.Parallel()
	k := cluster(t)
	type op struct {
		what string
		run  func(s helm3.Store, ns string) error
	}
	create := func(v int) op {
		return op{fmt.Sprintf("create v%d", v), func(s helm3.Store, ns string) error {
			return s.Create(key("app", v), smallVariant("app", ns, v, v%2, "app"))
		}}
	}
	del := func(v int) op {
		return op{fmt.Sprintf("delete v%d", v), func(s helm3.Store, _ string) error { _, err := s.Delete(key("app", v)); return err }}
	}
	ops := []op{create(1), create(2), create(3), del(3), create(4), del(4), del(2)}
	for n := int64(0); ; n++ {
		ns := newNamespace(t, k)
		setup, _ := openAs(t, k, kubeenv.Admin, ns, quietLog)
		if err := setup.Create(key("keep", 1), smallRelease("keep", ns, 1, "keep")); err != nil {
			t.Fatal(err)
		}
		ks := &killAfter{limit: n}
		cfg := rest.CopyConfig(k.Config(kubeenv.Admin))
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ks.next = rt; return ks })
		faulted, err := openStore(ctxT(t), cfg, quietLog, helm3.WithTimeout(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s := faulted.Namespace(ns)
		done := 0
		for _, o := range ops {
			if err := o.run(s, ns); err != nil {
				if !errors.Is(err, errKilled) {
					t.Errorf("die after %d writes: %s: %v", n, o.what, err)
				}
				break
			}
			done++
		}
		s.Close()
		check, cb := openAs(t, k, kubeenv.Admin, ns, quietLog, helm3.WithCacheBytes(0))
		for _, when := range []string{"before collect", "after collect"} {
			if when == "after collect" {
				cb.SetPendingTimeout(0) // what the dead writer left is abandoned
				if err := helm3.Collect(ctxT(t), check); err != nil {
					t.Errorf("die after %d writes: collect: %v", n, err)
				}
			}
			seen, err := castest.Snapshot(check, nil)
			if err != nil {
				t.Errorf("die after %d writes (%d ops done), %s: %v", n, done, when, err)
			} else if _, ok := seen[key("keep", 1)]; !ok {
				t.Errorf("die after %d writes, %s: keep v1 is gone", n, when)
			}
		}
		if !ks.dead.Load() {
			t.Logf("%d crash points, each a writer dying after its n-th write to the API server", n)
			return
		}
	}
}

// quietLog drops a store's log lines (a dead writer's are expected).
var quietLog = helm3.WithLog(func(string, ...interface{}) {})

// TestLatestIndexLabels checks the index of latest revisions on the
// Release objects: after three revisions are committed, the two lower are
// labelled helmstore.io/latest=false and the highest true; deleting the
// highest labels the one below true first; a Release without the label (as
// written before it existed) is listed; and Summaries lists each release
// at its highest revision.
func TestLatestIndexLabels(t *testing.T) {
	t.Parallel()
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	for v := 1; v <= 3; v++ {
		if err := s.Create(key("app", v), smallRelease("app", ns, v, "app")); err != nil {
			t.Fatal(err)
		}
		b.WaitCommits()
	}
	if err := s.Create(key("old", 1), smallRelease("old", ns, 1, "old")); err != nil {
		t.Fatal(err)
	}
	b.WaitCommits()
	if _, err := b.c.patch(ctxT(t), resReleases, ns, key("old", 1), types.MergePatchType,
		map[string]any{"metadata": map[string]any{"labels": map[string]any{caswire.LabelLatest: nil}}}); err != nil {
		t.Fatal(err)
	}
	labels := func() map[string]string {
		out := map[string]string{}
		for _, raw := range rawObjects(t, b, resReleases, ns) {
			m := meta(t, raw)
			v, ok := m.Labels[caswire.LabelLatest]
			if !ok {
				v = "(none)"
			}
			out[m.Name] = v
		}
		return out
	}
	want := map[string]string{key("app", 1): "false", key("app", 2): "false", key("app", 3): "true", key("old", 1): "(none)"}
	if got := labels(); !maps.Equal(got, want) {
		t.Errorf("labels %s: %v, want %v", caswire.LabelLatest, got, want)
	}
	summaries := func(want map[string]int) {
		t.Helper()
		p, err := s.Summaries(ctxT(t), helm3.SummaryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, x := range p.Summaries {
			got[x.Name] = x.Revision
		}
		if !maps.Equal(got, want) {
			t.Errorf("summaries: %v, want %v", got, want)
		}
	}
	summaries(map[string]int{"app": 3, "old": 1})
	if _, err := s.Delete(key("app", 3)); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{key("app", 1): "false", key("app", 2): "true", key("old", 1): "(none)"}
	if got := labels(); !maps.Equal(got, want) {
		t.Errorf("after deleting app v3, labels %s: %v, want %v", caswire.LabelLatest, got, want)
	}
	summaries(map[string]int{"app": 2, "old": 1})
}
