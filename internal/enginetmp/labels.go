package backend

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
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

// SystemLabelNames returns the names of Helm's system labels: name, owner,
// status, version, createdAt and modifiedAt.
func SystemLabelNames() []string { return append([]string(nil), systemLabels[:]...) }

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

// customLabels returns rls.Labels without system labels, validated as
// Kubernetes labels so every backend accepts exactly the same ones.
func customLabels(in map[string]string) (map[string]string, error) {
	if n := len(in); n > MaxLabels {
		custom := 0
		for k := range in {
			if !IsSystemLabel(k) {
				custom++
			}
		}
		if custom > MaxLabels {
			return nil, fmt.Errorf("release has %d custom labels, more than the limit of %d", custom, MaxLabels)
		}
	}
	out := make(map[string]string, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if IsSystemLabel(k) {
			continue
		}
		v := in[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("invalid label key %q: %s", k, strings.Join(errs, "; "))
		}
		if strings.HasPrefix(k, ReservedLabelPrefix) {
			return nil, fmt.Errorf("invalid label key %q: the prefix %q is reserved for helmstore", k, ReservedLabelPrefix)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("invalid value %q for label %q: %s", v, k, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}

// SystemLabels returns the system labels of h, as Helm's drivers set them:
// name, owner, status and version, and createdAt and modifiedAt when set
// (non-zero). A backend that keeps heads as labelled objects stores these
// beside the custom labels (h.Labels, which never holds a system label).
func (h *Head) SystemLabels() map[string]string {
	out := make(map[string]string, len(systemLabels))
	h.addSystemLabels(out)
	return out
}

// AllLabels returns the labels List and Query report for h: its custom
// labels and its system labels (SystemLabels).
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

// buildQuery turns Helm's label query into a Query. ok is false when no
// release can match (an owner other than helm, a version that is not a
// canonical integer, an empty name or status, more custom labels than a
// release may have), so the backend need not be asked.
func buildQuery(ns string, labels map[string]string) (q Query, ok bool, err error) {
	q.Namespace = ns
	if len(labels) > MaxLabels+6 {
		return q, false, nil
	}
	for k, v := range labels {
		if IsSystemLabel(k) {
			continue // checked by what they mean below (names may be longer than a label value)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return q, false, fmt.Errorf("invalid label value: %q: %s", v, strings.Join(errs, "; "))
		}
	}
	for k, v := range labels {
		switch k {
		case LabelName:
			if v == "" { // a value, not "any": no release has an empty name
				return q, false, nil
			}
			q.Name = v
		case LabelOwner:
			if v != Owner {
				return q, false, nil
			}
		case LabelStatus:
			if v == "" {
				return q, false, nil
			}
			q.Status = v
		case LabelVersion:
			n, err := strconv.Atoi(v)
			if err != nil || strconv.Itoa(n) != v {
				return q, false, nil
			}
			q.Version = &n
		case LabelCreatedAt, LabelModifiedAt:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || strconv.FormatInt(n, 10) != v || n == 0 {
				return q, false, nil
			}
			if k == LabelCreatedAt {
				q.CreatedAt = &n
			} else {
				q.ModifiedAt = &n
			}
		default:
			if q.Labels == nil {
				q.Labels = map[string]string{}
			}
			q.Labels[k] = v
		}
	}
	if len(q.Labels) > MaxLabels {
		return q, false, nil
	}
	return q, true, nil
}
