package drivertest

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// Overreach returns, over the same data as s, what a user the service
// confines to namespace (as Harness.Confined opens a store for) can try
// with the service directly, beyond what a store does: commands on the
// keys or rows that readers of every namespace trust (a Redis namespace
// registry), commands that observe the whole service, and watching other
// namespaces' changes as they happen. A backend whose confined users can
// do nothing with the service but what its stores do leaves
// Harness.Overreach nil.
type Overreach func(t *testing.T, s helm3.Store, namespace string) Overreacher

// Overreacher is what Overreach returns: the attempts of a confined user.
type Overreacher interface {
	// Attempts returns what the confined user tries, in order, once the
	// store holds releases in its namespace and in others.
	Attempts(ctx context.Context) ([]Attempt, error)
	// Watch starts observing, as the confined user, all the service lets
	// it observe of writes it does not make (Redis: client-side caching
	// invalidations, keyspace notifications, Pub/Sub). stop ends it and
	// returns everything it received, as text.
	Watch(ctx context.Context) (stop func() (string, error), err error)
}

// Attempt is one thing a confined user tries.
type Attempt struct {
	// What names it ("SREM prefix:namespaces team-b").
	What string
	// Refused says that the service must refuse it: accepted, it would
	// change what readers of other namespaces see or tell the user
	// something of another namespace. An attempt the service may accept
	// (adding to a registry) must still leave every reader's view as it
	// was.
	Refused bool
	// Try makes the attempt: nil if the service ran it (even if the
	// command itself then failed), an error if it refused it.
	Try func(ctx context.Context) error
}

// testOverreach stores releases in team-a (the confined user's
// namespace) and team-b, then makes each of the backend's attempts as a
// user confined to team-a: those that must be refused are, and after
// each, a reader of every namespace (the store itself) still sees every
// release and nothing else through List, Summaries and Get of the ""
// view, or fails with an error; never fewer releases as a success. Then,
// while the store writes a release of distinctive name and label in
// team-b, the confined user's watch receives neither.
func testOverreach(t *testing.T, h Harness) {
	if h.Overreach == nil {
		t.Skip("Harness.Overreach is not set: the backend's confined users can do nothing with the service beyond what a store does")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := h.open(t)
	stored := []*release.Release{rel("app", "team-a", 1, release.StatusDeployed), rel("db", "team-b", 1, release.StatusDeployed)}
	for _, r := range stored {
		mustCreate(t, s.Namespace(r.Namespace), r)
	}
	o := h.Overreach(t, s, "team-a")
	attempts, err := o.Attempts(ctx)
	if err != nil {
		t.Fatalf("the backend's attempts: %v", err)
	}
	for _, a := range attempts {
		if err := a.Try(ctx); err == nil && a.Refused {
			t.Errorf("%s by the confined user: accepted; want it refused", a.What)
		}
		seesAll(t, s.Namespace(""), "after "+a.What+" by the confined user", stored)
	}

	stop, err := o.Watch(ctx)
	if err != nil {
		t.Fatalf("watch as the confined user: %v", err)
	}
	const name, label = "watched-secret-name", "watched-secret-label"
	secret := rel(name, "team-b", 1, release.StatusDeployed)
	secret.Labels = map[string]string{"tier": label}
	b := s.Namespace("team-b")
	mustCreate(t, b, secret)
	secret.Info.Status = release.StatusSuperseded
	if err := b.Update(key(name, 1), secret); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Delete(key(name, 1)); err != nil {
		t.Fatal(err)
	}
	got, err := stop()
	if err != nil {
		t.Fatalf("the confined user's watch: %v", err)
	}
	for _, w := range []string{name, label} {
		if strings.Contains(got, w) {
			t.Errorf("the confined user, watching, learned %q of a release in team-b: %.600q", w, got)
		}
	}
}

// seesAll checks that all, a view of every namespace, lists, summarises
// and gets exactly want, or fails with an error that is not "not found".
func seesAll(t *testing.T, all helm3.Store, what string, want []*release.Release) {
	t.Helper()
	if got, err := all.List(func(*release.Release) bool { return true }); err == nil && joinKeys(got) != joinKeys(want) {
		t.Errorf("%s: List of all namespaces = %q; want %q", what, joinKeys(got), joinKeys(want))
	}
	if p, err := all.Summaries(context.Background(), helm3.SummaryQuery{}); err == nil {
		var got []string
		for _, s := range p.Summaries {
			got = append(got, s.Namespace+"/"+key(s.Name, s.Revision))
		}
		sort.Strings(got)
		if strings.Join(got, " ") != joinKeys(want) {
			t.Errorf("%s: Summaries of all namespaces = %q; want %q", what, got, joinKeys(want))
		}
	}
	for _, r := range want {
		got, err := all.Get(key(r.Name, r.Version))
		switch {
		case errors.Is(err, helm3.ErrReleaseNotFound):
			t.Errorf("%s: Get of %s/%s through all namespaces: %v; want it, or an error that is not \"not found\"", what, r.Namespace, r.Name, err)
		case err == nil:
			sameRelease(t, what+": Get through all namespaces", got, r)
		}
	}
}
