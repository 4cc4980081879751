package driver

import (
	"strconv"
)

// Owner is the value of the "owner" system label on every release.
const Owner = "helm"

// System label names, as in Helm's drivers.
const (
	LabelName       = "name"
	LabelOwner      = "owner"
	LabelStatus     = "status"
	LabelVersion    = "version"
	LabelCreatedAt  = "createdAt"
	LabelModifiedAt = "modifiedAt"
)

// systemLabels lists the system labels, in the order Helm's drivers set them.
var systemLabels = [...]string{LabelName, LabelOwner, LabelStatus, LabelVersion, LabelCreatedAt, LabelModifiedAt}

// IsSystemLabel reports whether key is one of Helm's system labels.
func IsSystemLabel(key string) bool {
	for _, l := range systemLabels {
		if key == l {
			return true
		}
	}
	return false
}

// MaxLabels is the most custom labels a release may carry, and the most a
// Query may select by. Every backend holds at least this many.
const MaxLabels = 1000

// ReservedLabelPrefix starts label keys that helmstore keeps for itself (on
// Kubernetes objects); no release may carry one, on any backend.
const ReservedLabelPrefix = "helmstore.io/"

// AllLabels returns the labels List and Query report for h: its custom
// labels and its system labels, as Helm's drivers set them (name, owner,
// status and version, and createdAt and modifiedAt when set, non-zero). A
// backend that keeps heads as labelled objects stores these.
func (h *Head) AllLabels() map[string]string {
	out := make(map[string]string, len(h.Labels)+len(systemLabels))
	for k, v := range h.Labels {
		out[k] = v
	}
	h.addSystemLabels(out)
	return out
}

func (h *Head) addSystemLabels(out map[string]string) {
	out[LabelName] = h.Name
	out[LabelOwner] = h.Owner
	out[LabelStatus] = h.Status
	out[LabelVersion] = strconv.Itoa(h.Version)
	if h.CreatedAt != 0 {
		out[LabelCreatedAt] = strconv.FormatInt(h.CreatedAt, 10)
	}
	if h.ModifiedAt != 0 {
		out[LabelModifiedAt] = strconv.FormatInt(h.ModifiedAt, 10)
	}
}
