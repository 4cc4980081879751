// Package releasecheck holds the checks of what a store hands back that
// drivertest and the backends' own tests share: what a Helm driver should
// return for a release, and whether a store still lists one. It is for
// tests only (it imports testing).
package releasecheck

import (
	"encoding/json"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// Normalize returns what a Helm driver should hand back for rls: Helm's JSON
// round trip of it, with Labels holding only custom labels (never nil).
func Normalize(t testing.TB, rls *release.Release) *release.Release {
	t.Helper()
	if rls == nil {
		return nil
	}
	b, err := json.Marshal(rls)
	if err != nil {
		t.Fatalf("marshal release: %v", err)
	}
	out := new(release.Release)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal release: %v", err)
	}
	out.Labels = map[string]string{}
	for k, v := range rls.Labels {
		if !driver.IsSystemLabel(k) {
			out.Labels[k] = v
		}
	}
	return out
}

// WantListed fails t unless List of s returns a release named name: what a
// test of damaged stored data checks of a release left intact beside them.
func WantListed(t testing.TB, s helm3.Store, name string) {
	t.Helper()
	rs, err := s.List(func(*release.Release) bool { return true })
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, r := range rs {
		if r.Name == name {
			return
		}
	}
	t.Fatalf("list: %d releases, none named %q", len(rs), name)
}
