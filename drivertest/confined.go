package drivertest

import (
	"context"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// Confined opens a store over the same data as s with credentials the
// service confines to namespaces: a PostgreSQL role under row-level
// security (postgres.NamespaceAccess), a MySQL account on a database of
// views (mysql.NamespaceAccess), a Redis ACL user (redis.NamespaceACL). A
// backend whose service confines nothing itself leaves Harness.Confined
// nil.
type Confined func(t *testing.T, s helm3.Store, namespaces ...string) (helm3.Store, error)

// testConfinement opens a store confined to team-a over a store that
// holds a release in team-b. In team-a every operation works as on the
// store itself, and what it writes the store reads. Elsewhere nothing of
// team-b is ever returned: a read finds nothing or is refused
// (driver.ErrAccessDenied), a listing across namespaces returns team-a's
// releases alone or is refused, a Create is refused, an Update or a
// Delete fails; and afterwards team-b holds exactly what it held.
func testConfinement(t *testing.T, h Harness) {
	if h.Confined == nil {
		t.Skip("Harness.Confined is not set: the backend's service confines no credentials to namespaces")
	}
	ctx := context.Background()
	s := h.open(t)
	theirs := rel("db", "team-b", 1, release.StatusDeployed)
	mustCreate(t, s.Namespace("team-b"), theirs)
	c, err := h.Confined(t, s, "team-a")
	if err != nil {
		t.Fatalf("open a store confined to team-a: %v", err)
	}
	t.Cleanup(func() { c.Close() })

	a := c.Namespace("team-a")
	for v := 1; v <= 2; v++ {
		mustCreate(t, a, rel("app", "team-a", v, release.StatusSuperseded))
	}
	mine := rel("app", "team-a", 2, release.StatusDeployed)
	if err := a.Update(key("app", 2), mine); err != nil {
		t.Fatalf("update in its own namespace: %v", err)
	}
	if got, err := a.Get(key("app", 2)); err != nil {
		t.Fatalf("get in its own namespace: %v", err)
	} else {
		sameRelease(t, "get in its own namespace", got, mine)
	}
	if _, err := a.Delete(key("app", 1)); err != nil {
		t.Fatalf("delete in its own namespace: %v", err)
	}
	want := "team-a/" + key("app", 2)
	if got, err := a.List(func(*release.Release) bool { return true }); err != nil || joinKeys(got) != want {
		t.Fatalf("list of its own namespace = %s, %v; want %s", joinKeys(got), err, want)
	}
	if p, err := a.Summaries(ctx, helm3.SummaryQuery{}); err != nil || len(p.Summaries) != 1 || p.Summaries[0].Revision != 2 {
		t.Fatalf("summaries of its own namespace = %+v, %v; want app at revision 2", p.Summaries, err)
	}

	// What it may not see is never returned, nor taken for absent where
	// it answers for a write.
	denied := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, helm3.ErrAccessDenied) {
			t.Errorf("%s by the confined store: %v; want a refusal that wraps helm3.ErrAccessDenied", what, err)
		}
	}
	all := c.Namespace("")
	if got, err := all.List(func(*release.Release) bool { return true }); err != nil {
		denied("List of all namespaces", err)
	} else if joinKeys(got) != want {
		t.Errorf("List of all namespaces by the confined store = %s; want %s alone", joinKeys(got), want)
	}
	if p, err := all.Summaries(ctx, helm3.SummaryQuery{}); err != nil {
		denied("Summaries of all namespaces", err)
	} else if len(p.Summaries) != 1 || p.Summaries[0].Namespace != "team-a" {
		t.Errorf("Summaries of all namespaces by the confined store = %+v; want team-a's app alone", p.Summaries)
	}
	b := c.Namespace("team-b")
	if got, err := b.Get(key("db", 1)); err == nil {
		t.Errorf("Get in another namespace by the confined store returned %s/%s", got.Namespace, got.Name)
	} else if !errors.Is(err, helm3.ErrReleaseNotFound) {
		denied("Get in another namespace", err)
	}
	if got, err := b.List(func(*release.Release) bool { return true }); err != nil {
		denied("List of another namespace", err)
	} else if len(got) != 0 {
		t.Errorf("List of another namespace by the confined store = %s; want nothing", joinKeys(got))
	}
	if err := b.Create(key("x", 1), rel("x", "team-b", 1, release.StatusDeployed)); err == nil || !errors.Is(err, helm3.ErrAccessDenied) {
		t.Errorf("Create in another namespace by the confined store: %v; want helm3.ErrAccessDenied", err)
	}
	if err := b.Update(key("db", 1), rel("db", "team-b", 1, release.StatusFailed)); err == nil {
		t.Error("Update in another namespace by the confined store succeeded")
	}
	if _, err := b.Delete(key("db", 1)); err == nil {
		t.Error("Delete in another namespace by the confined store succeeded")
	}

	// The store reads both namespaces as the confined store left them.
	if got, err := s.Namespace("team-b").Get(key("db", 1)); err != nil {
		t.Fatalf("the store's Get in team-b: %v", err)
	} else {
		sameRelease(t, "team-b's release after the confined store's attempts", got, theirs)
	}
	if _, err := s.Namespace("team-b").Get(key("x", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Errorf("the store's Get of the release the confined store tried to create: %v; want helm3.ErrReleaseNotFound", err)
	}
	if got, err := s.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(got) != 2 {
		t.Errorf("the store lists %s, %v; want team-a's app v2 and team-b's db v1", joinKeys(got), err)
	}
	if got, err := s.Namespace("team-a").Get(key("app", 2)); err != nil {
		t.Errorf("the store reads what the confined store wrote: %v", err)
	} else {
		sameRelease(t, "the confined store's release read by the store", got, mine)
	}
}
