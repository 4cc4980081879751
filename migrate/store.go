package migrate

import (
	"context"
	"fmt"

	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// A Store is one side of a move: a store of Helm releases, Helm's own
// (Secrets, ConfigMaps, SQL) or helmstore's, seen through Helm 4's release
// type, whose fields are a superset of Helm 3's, so nothing a Helm 3 or
// Helm 4 tool wrote is lost on the way. Open returns one by HELM_DRIVER
// name.
//
// Every method addresses a revision by namespace, name and version, never
// by a view: a move between stores of different namespaces' scopes writes
// each revision to the namespace it came from.
type Store interface {
	// Name is the HELM_DRIVER name the store was opened with.
	Name() string
	// Revisions lists every revision stored in namespace ns ("": every
	// namespace) whose release is named name ("": every release), without
	// reading any release's content where the store allows it.
	Revisions(ctx context.Context, ns, name string) ([]Revision, error)
	// Get returns one revision as the store's Helm driver returns it, with
	// its custom labels; an error wrapping Helm's ErrReleaseNotFound if it
	// is not stored.
	Get(ctx context.Context, r Revision) (*rspb.Release, error)
	// Create stores rls in namespace ns (the one it was listed in at the
	// source), which must not hold it yet (Helm's ErrReleaseExists
	// otherwise).
	Create(ctx context.Context, ns string, rls *rspb.Release) error
	// Update replaces the revision of rls stored in namespace ns (Helm's
	// ErrReleaseNotFound if there is none).
	Update(ctx context.Context, ns string, rls *rspb.Release) error
	// Delete removes one revision.
	Delete(ctx context.Context, r Revision) error
	// Close closes the store's connections.
	Close() error
}

// A Revision names one stored revision of a release.
type Revision struct {
	// Namespace is the namespace the revision is stored in: the release's
	// own, or for a release a driver scoped to another namespace stored
	// (Flux's storage namespace), that one, as Helm's Secrets driver and
	// helmstore's views keep it. A move keeps it.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Version   int    `json:"revision"`
	// Status is the revision's status as the store's index has it
	// ("deployed", "pending-upgrade", ...), "" where the store's listing
	// does not say.
	Status string `json:"status,omitempty"`
}

// Key is the revision's storage key, as Helm's drivers name it.
func (r Revision) Key() string { return fmt.Sprintf("sh.helm.release.v1.%s.v%d", r.Name, r.Version) }

// String names the revision for messages: namespace/name revision.
func (r Revision) String() string {
	return fmt.Sprintf("%s/%s revision %d", r.Namespace, r.Name, r.Version)
}

// revisionIn is the Revision of a release stored in namespace ns.
func revisionIn(ns string, rls *rspb.Release) Revision {
	r := Revision{Namespace: ns, Name: rls.Name, Version: rls.Version}
	if rls.Info != nil {
		r.Status = rls.Info.Status.String()
	}
	return r
}
