package drivertest

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// Denied opens a store over the same data as s whose credentials the
// service refuses (a wrong password, an unknown user) or which lacks the
// rights the store needs (a database user without grants, an ACL that
// allows no key, a Kubernetes user without RBAC rules), with opts applied.
// Open's error is returned as it is: a store may be refused at Open, or
// open and be refused operation by operation. A backend whose service
// checks no credentials leaves Harness.Denied nil.
type Denied func(t *testing.T, s helm3.Store, opts ...helm3.Option) (helm3.Store, error)

// testAccessDenied opens a store the service refuses: Open, or else every
// operation it is refused, must wrap driver.ErrAccessDenied (a setting to
// fix) and neither driver.ErrUnavailable (an outage to wait out) nor "not
// found" (which makes Helm install over a release that exists); an
// operation it is allowed must answer as the store with rights does. At
// least one operation must be refused, and nothing the refused store tried
// may change what is stored.
func testAccessDenied(t *testing.T, h Harness) {
	if h.Denied == nil {
		t.Skip("Harness.Denied is not set: the driver cannot be checked against a service that refuses its credentials")
	}
	s := h.open(t)
	app := rel("app", "default", 1, release.StatusDeployed)
	mustCreate(t, s, app)
	refused := func(what string, err error) bool {
		t.Helper()
		switch {
		case err == nil:
			return false
		case errors.Is(err, helm3.ErrReleaseNotFound), errors.Is(err, helm3.ErrReleaseExists):
			t.Errorf("%s by a store the service refuses: %v; want helm3.ErrAccessDenied, never a release's absence or presence", what, err)
		case errors.Is(err, helm3.ErrUnavailable):
			t.Errorf("%s by a store the service refuses: %v; want helm3.ErrAccessDenied, not helm3.ErrUnavailable (a wrong credential is not an outage)", what, err)
		case !errors.Is(err, helm3.ErrAccessDenied):
			t.Errorf("%s by a store the service refuses: %v; want it to wrap helm3.ErrAccessDenied", what, err)
		}
		return true
	}
	d, err := h.Denied(t, s)
	if err != nil {
		refused("Open", err)
		return
	}
	t.Cleanup(func() { d.Close() })
	n := 0
	if got, err := d.Get(key("app", 1)); refused("Get", err) {
		n++
	} else {
		sameRelease(t, "Get by the refused store", got, app)
	}
	if got, err := d.Namespace("").List(func(*release.Release) bool { return true }); refused("List of all namespaces", err) {
		n++
	} else if len(got) != 1 {
		t.Errorf("List of all namespaces by the refused store = %s; want %s", joinKeys(got), key("app", 1))
	}
	if got, err := d.Query(map[string]string{"name": "app"}); refused("Query", err) {
		n++
	} else if len(got) != 1 {
		t.Errorf("Query by the refused store = %s; want %s", joinKeys(got), key("app", 1))
	}
	if err := d.Create(key("other", 1), rel("other", "default", 1, release.StatusDeployed)); refused("Create", err) {
		n++
	} else {
		t.Errorf("Create by the refused store succeeded; want helm3.ErrAccessDenied")
	}
	up := rel("app", "default", 1, release.StatusSuperseded)
	if err := d.Update(key("app", 1), up); refused("Update", err) {
		n++
	} else {
		t.Errorf("Update by the refused store succeeded; want helm3.ErrAccessDenied")
	}
	if _, err := d.Delete(key("app", 1)); refused("Delete", err) {
		n++
	} else {
		t.Errorf("Delete by the refused store succeeded; want helm3.ErrAccessDenied")
	}
	if n == 0 {
		t.Fatal("Harness.Denied opened a store the service refuses nothing")
	}
	// What is stored is as before.
	got, err := s.Get(key("app", 1))
	if err != nil {
		t.Fatalf("Get after the refused store's attempts: %v", err)
	}
	sameRelease(t, "the release after the refused store's attempts", got, app)
	if _, err := s.Get(key("other", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("Get of the release the refused store tried to create: %v; want helm3.ErrReleaseNotFound", err)
	}
}
