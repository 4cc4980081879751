package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// checkName validates a release name as Kubernetes validates object names
// (Helm's own names are a subset).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("release has no name")
	}
	if why := dns1123Subdomain(name); why != "" {
		return fmt.Errorf("invalid release name %q: %s", name, why)
	}
	return nil
}

// checkNamespace validates a namespace as Kubernetes does.
func checkNamespace(ns string) error {
	if why := dns1123Label(ns); why != "" {
		return fmt.Errorf("invalid namespace %q: %s", ns, why)
	}
	return nil
}

// customLabels returns rls.Labels without system labels, validated as
// Kubernetes labels so every backend accepts exactly the same ones.
func customLabels(in map[string]string) (map[string]string, error) {
	if n := len(in); n > driver.MaxLabels {
		custom := 0
		for k := range in {
			if !driver.IsSystemLabel(k) {
				custom++
			}
		}
		if custom > driver.MaxLabels {
			return nil, fmt.Errorf("release has %d custom labels, more than the limit of %d", custom, driver.MaxLabels)
		}
	}
	out := make(map[string]string, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if driver.IsSystemLabel(k) {
			continue
		}
		v := in[k]
		if why := qualifiedName(k); why != "" {
			return nil, fmt.Errorf("invalid label key %q: %s", k, why)
		}
		if strings.HasPrefix(k, driver.ReservedLabelPrefix) {
			return nil, fmt.Errorf("invalid label key %q: the prefix %q is reserved for helmstore", k, driver.ReservedLabelPrefix)
		}
		if why := labelValue(v); why != "" {
			return nil, fmt.Errorf("invalid value %q for label %q: %s", v, k, why)
		}
		out[k] = v
	}
	return out, nil
}

// buildQuery turns Helm's label query into a driver.Query. ok is false when no
// release can match (an owner other than helm, a version that is not a
// canonical integer, an empty name or status, more custom labels than a
// release may have), so the backend need not be asked.
func buildQuery(ns string, labels map[string]string) (q driver.Query, ok bool, err error) {
	q.Namespace = ns
	if len(labels) > driver.MaxLabels+6 {
		return q, false, nil
	}
	for k, v := range labels {
		if driver.IsSystemLabel(k) {
			continue // checked by what they mean below (names may be longer than a label value)
		}
		if why := labelValue(v); why != "" {
			return q, false, fmt.Errorf("invalid label value: %q: %s", v, why)
		}
	}
	for k, v := range labels {
		switch k {
		case driver.LabelName:
			if v == "" { // a value, not "any": no release has an empty name
				return q, false, nil
			}
			q.Name = v
		case driver.LabelOwner:
			if v != driver.Owner {
				return q, false, nil
			}
		case driver.LabelStatus:
			if v == "" {
				return q, false, nil
			}
			q.Status = v
		case driver.LabelVersion:
			n, err := strconv.Atoi(v)
			if err != nil || strconv.Itoa(n) != v {
				return q, false, nil
			}
			q.Version = &n
		case driver.LabelCreatedAt, driver.LabelModifiedAt:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || strconv.FormatInt(n, 10) != v || n == 0 {
				return q, false, nil
			}
			if k == driver.LabelCreatedAt {
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
	if len(q.Labels) > driver.MaxLabels {
		return q, false, nil
	}
	return q, true, nil
}
