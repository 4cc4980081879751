package crsplit

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// requestLog records when each request to the API server started and
// ended, and whether it asked for metadata only.
type requestLog struct {
	mu   sync.Mutex
	reqs []span
}

type span struct {
	what       string
	start, end time.Time
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		s := span{what: req.Method + " " + req.URL.Path, start: time.Now()}
		if strings.HasPrefix(req.Header.Get("Accept"), "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList") {
			s.what += " (metadata)"
		}
		resp, err := rt.RoundTrip(req)
		s.end = time.Now()
		l.mu.Lock()
		l.reqs = append(l.reqs, s)
		l.mu.Unlock()
		return resp, err
	})
}

func (l *requestLog) take() []span {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

// sequential returns the longest chain of requests each started after the
// one before it ended: the round trips an operation waits for one after
// the other.
func sequential(spans []span) int {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	depth := make([]int, len(spans))
	best := 0
	for i := range spans {
		depth[i] = 1
		for j := 0; j < i; j++ {
			if !spans[j].end.After(spans[i].start) && depth[j]+1 > depth[i] {
				depth[i] = depth[j] + 1
			}
		}
		best = max(best, depth[i])
	}
	return best
}

// roundTrips are the requests of one operation: how many, how many one
// after the other, and how many ran after it returned (background commits).
type roundTrips struct{ total, sequential, after int }

// TestRoundTrips counts the API requests of each Helm operation on the
// 2.2 MB release of fixture.Stack, with the decoded-part cache off (a
// fresh helm process): Create of a first revision and of a values-only
// upgrade, Update, Get and History, and checks that none makes more than
// it did before.
func TestRoundTrips(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	log := &requestLog{}
	cfg := k.Config(kubeenv.Admin)
	cfg.Wrap(log.wrap)
	s, err := openStore(ctxT(t), cfg, helm3.WithCacheBytes(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.Namespace(ns)
	measure := func(op string, fn func() error) roundTrips {
		t.Helper()
		log.take()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		during := log.take()
		waitCommits(s)
		after := log.take()
		rt := roundTrips{total: len(during), sequential: sequential(during), after: len(after)}
		t.Logf("%-22s %2d requests, %d sequential, %d after it returned", op, rt.total, rt.sequential, rt.after)
		for _, r := range during {
			t.Logf("    %s", r.what)
		}
		return rt
	}
	name := freshName()
	r1 := revision(name, 1)
	r2 := revision(name, 2)
	create1 := measure("Create (new chart)", func() error { return st.Create("sh.helm.release.v1."+name+".v1", r1) })
	create2 := measure("Create (values only)", func() error { return st.Create("sh.helm.release.v1."+name+".v2", r2) })
	r1.Info.Status = release.StatusSuperseded
	update := measure("Update", func() error { return st.Update("sh.helm.release.v1."+name+".v1", r1) })
	get := measure("Get", func() error { _, err := st.Get("sh.helm.release.v1." + name + ".v2"); return err })
	history := measure("History (2 revisions)", func() error {
		_, err := st.Query(map[string]string{"name": name, "owner": "helm"})
		return err
	})
	// The requests each operation made before the protocol moved to
	// package cas (measured then with this test): none may be added,
	// but for the background upkeep of the index of latest revisions and
	// the read of the namespace's keyring record with which a store
	// without encryption keys starts every write (+1 below:
	// internal/engine/plaintext.go).
	// (How many ran one after the other is logged, not checked: on a
	// loaded machine requests sent together may not overlap.)
	for _, c := range []struct {
		op        string
		got       roundTrips
		max, late int
	}{
		// After it returns: the list of the revisions below (the index
		// of latest revisions, package cas's "Latest"), the commit.
		{"Create (new chart)", create1, 9 + 1, 2},
		// The Release, embedding the values and the manifest delta,
		// then the ownerReferences on the chart and the manifest
		// keyframe; after it returns, the list, the commit and the
		// retirement of revision 1 from the index.
		{"Create (values only)", create2, 3 + 1, 3},
		{"Update", update, 1 + 1, 0},
		// The Release, then the chart and the manifest keyframe (the
		// deltas are embedded) and their chunks.
		{"Get", get, 5, 0},
		{"History", history, 5, 0},
	} {
		if c.got.total > c.max || c.got.after > c.late {
			t.Errorf("%s: %d requests and %d after it returned, want at most %d and %d", c.op, c.got.total, c.got.after, c.max, c.late)
		}
	}
}

// waitCommits waits for the background commits of s.
func waitCommits(s helm3.Store) { kubeBackendOf(s).WaitCommits() }
