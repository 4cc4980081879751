package drivertest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// testDataLoss wipes a store's data behind its back (a server restarted
// without persistence, a flushed database, a restore of an empty backup)
// and writes on through the same store and the views it handed out before:
// every later write must be visible in every view, from that store and from
// a fresh one, whatever the store remembered about the data it had seen (a
// namespace registered, a part known to be stored, a keyframe).
func testDataLoss(t *testing.T, h Harness) {
	if h.Wipe == nil {
		t.Skip("Harness.Wipe is not set: the driver cannot be checked against a service that loses its data")
	}
	s := h.open(t)
	nss := []string{"default", "team-a", "team-b"}
	views := map[string]helm3.Store{}
	for _, ns := range nss {
		views[ns] = s.Namespace(ns)
	}
	all := s.Namespace("")
	everything := func(*release.Release) bool { return true }
	// Before the wipe: releases in every namespace, read back (so the
	// store caches their parts and remembers their keyframes).
	for _, ns := range nss {
		for _, name := range []string{"web", "db"} {
			mustCreate(t, views[ns], rel(name, ns, 1, release.StatusDeployed))
		}
	}
	if list, err := all.List(everything); err != nil || len(list) != 2*len(nss) {
		t.Fatalf("before the wipe: List of all namespaces = %s, %v", joinKeys(list), err)
	}
	var live []*release.Release
	for round := 1; round <= 2; round++ {
		h.Wipe(t, s)
		live = nil
		// After it: the same keys again (their parts are what the store
		// saw stored before), new revisions and new names, through the
		// views from before the wipe, a new view, and the
		// all-namespaces view.
		for i, ns := range nss {
			web := rel("web", ns, 1, release.StatusSuperseded)
			web2 := rel("web", ns, 2, release.StatusDeployed)
			fresh := rel(fmt.Sprintf("new-%s-%d", ns, round), ns, 1, release.StatusDeployed)
			fresh.Labels = map[string]string{"round": strconv.Itoa(round)}
			writers := []helm3.Store{views[ns], s.Namespace(ns), all}
			for j, r := range []*release.Release{web, web2, fresh} {
				w := writers[(i+j)%len(writers)]
				if err := w.Create(key(r.Name, r.Version), r); err != nil {
					t.Fatalf("round %d: after the wipe: create %s/%s: %v", round, ns, key(r.Name, r.Version), err)
				}
			}
			// An Update and a Delete after the wipe, of releases written
			// after it; an Update of one that went with the wipe is
			// "not found".
			web.Info.Description = "updated after the wipe"
			if err := views[ns].Update(key("web", 1), web); err != nil {
				t.Fatalf("round %d: update %s/%s after the wipe: %v", round, ns, key("web", 1), err)
			}
			if err := views[ns].Update(key("db", 1), rel("db", ns, 1, release.StatusFailed)); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("round %d: update %s/%s, which the wipe took: %v; want ErrReleaseNotFound", round, ns, key("db", 1), err)
			}
			if _, err := views[ns].Delete(key("web", 2)); err != nil {
				t.Fatalf("round %d: delete %s/%s after the wipe: %v", round, ns, key("web", 2), err)
			}
			live = append(live, web, fresh)
		}
		fresh := h.reopen(t, s, helm3.WithCacheBytes(0))
		for _, st := range []struct {
			what string
			s    helm3.Store
		}{{"the store that wrote", s}, {"a fresh store", fresh}} {
			what := "round " + strconv.Itoa(round) + ": " + st.what
			got, err := st.s.Namespace("").List(everything)
			if err != nil {
				t.Fatalf("%s: List of all namespaces: %v", what, err)
			}
			if a, b := canon(t, got), canon(t, live); !equalLines(a, b) {
				t.Fatalf("%s: List of all namespaces after the wipe: %s", what, lineDiff(a, b))
			}
			for _, ns := range nss {
				var want []*release.Release
				for _, r := range live {
					if r.Namespace == ns {
						want = append(want, r)
					}
				}
				got, err := st.s.Namespace(ns).List(everything)
				if err != nil {
					t.Fatalf("%s: List of %s: %v", what, ns, err)
				}
				if a, b := canon(t, got), canon(t, want); !equalLines(a, b) {
					t.Fatalf("%s: List of %s after the wipe: %s", what, ns, lineDiff(a, b))
				}
			}
			q := map[string]string{"owner": "helm", "round": strconv.Itoa(round)}
			for _, v := range []string{"", "team-a"} {
				got, err := st.s.Namespace(v).Query(q)
				var want []*release.Release
				for _, r := range live {
					if r.Labels["round"] == strconv.Itoa(round) && (v == "" || r.Namespace == v) {
						want = append(want, r)
					}
				}
				if err != nil {
					t.Fatalf("%s: Query %v in %q: %v", what, q, v, err)
				}
				if a, b := canon(t, got), canon(t, want); !equalLines(a, b) {
					t.Fatalf("%s: Query %v in %q after the wipe: %s", what, q, v, lineDiff(a, b))
				}
			}
			// Each new name is in one namespace: the all-namespaces view
			// finds it.
			for _, r := range live {
				if r.Name == "web" {
					continue
				}
				got, err := st.s.Namespace("").Get(key(r.Name, r.Version))
				if err != nil {
					t.Fatalf("%s: Get %s through the all-namespaces view: %v", what, key(r.Name, r.Version), err)
				}
				sameRelease(t, what+": Get through the all-namespaces view", got, r)
			}
			wantStats(t, what+": after the wipe", st.s.Namespace(""), live)
		}
	}
}

// equalLines reports whether two canon lists are equal.
func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
