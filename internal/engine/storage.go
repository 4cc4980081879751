package engine

import (
	"maps"

	"github.com/helmstore/helmstore/driver"
)

// The storage namespace and the release's own. As with Helm's Secrets and
// ConfigMaps drivers, a view scoped to a namespace stores every release in
// that namespace, whatever the release's own Namespace field says, and
// returns that field as written: Flux's helm-controller stores a
// HelmRelease's releases in its storage namespace and installs them into
// its target namespace. Everything keyed by namespace follows the storage
// namespace: keys and their uniqueness, listings, confinement, encryption
// keys, statistics. Only the all-namespaces view ("") stores a release in
// its own namespace (DefaultNamespace for none), as it has no other.
//
// A summary listing shows each release's own namespace, as helm list -A
// prints it, without reading its body: where the two differ, the head
// carries the release's namespace in a label under driver's reserved
// prefix (releaseNamespaceLabel), which reads strip.

// releaseNamespaceLabel holds a release's own namespace where it is not
// the one the release is stored in.
const releaseNamespaceLabel = driver.ReservedLabelPrefix + "release-namespace"

// storageNamespace is the namespace a view scoped to view stores a release
// whose own namespace is own in.
func storageNamespace(view, own string) string {
	switch {
	case view != "":
		return view
	case own != "":
		return own
	}
	return DefaultNamespace
}

// recordReleaseNamespace records own, the release's namespace, in h's
// labels if it is not the one h is stored in, and reports whether h's
// summary then says all a listing shows. It does not when own cannot be a
// label value (not a Kubernetes namespace name) or h has as many labels as
// a release may: a listing then reads that release whole.
func recordReleaseNamespace(h *driver.Head, own string) bool {
	if own == "" || own == h.Namespace {
		return true
	}
	if labelValue(own) != "" || len(h.Labels) >= driver.MaxLabels {
		return false
	}
	if h.Labels == nil {
		h.Labels = map[string]string{}
	}
	h.Labels[releaseNamespaceLabel] = own
	return true
}

// withoutReleaseNamespace returns labels without releaseNamespaceLabel (a
// copy if it had it).
func withoutReleaseNamespace(labels map[string]string) map[string]string {
	if _, ok := labels[releaseNamespaceLabel]; !ok {
		return labels
	}
	out := maps.Clone(labels)
	delete(out, releaseNamespaceLabel)
	return out
}
