package crsplit

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
	"github.com/helmstore/helmstore/internal/testenv/kubeenv"
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
