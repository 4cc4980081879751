package castest

import (
	"fmt"

	"github.com/helmstore/helmstore/drivertest"
)

// The JSON side of a backend's drivertest.Reshaper, for the backends that
// store their objects as JSON documents (Cosmos DB items, Kubernetes
// objects): the edits, and the choice of the i-th variant that applies.

// HugeCount and HugeSize are what a hostile edit records: far more chunks,
// and bytes, than were written.
const (
	HugeCount = 1 << 30
	HugeSize  = 1 << 40
)

// JSONReshape is one way of damaging the shape of a stored object: Edit
// changes the object's decoded JSON and reports whether it applies to it
// (what it changes is there).
type JSONReshape struct {
	What string
	Edit func(m map[string]any) bool
}

// JSONField returns the object at path in m (nil if a step is missing or
// is not an object).
func JSONField(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

// SetJSON returns a reshape setting key of the object at path to v, if the
// key is there (or always, with force).
func SetJSON(what string, v any, force bool, path []string, key string) JSONReshape {
	return JSONReshape{what, func(m map[string]any) bool {
		o := JSONField(m, path...)
		if o == nil {
			return false
		}
		if _, ok := o[key]; !ok && !force {
			return false
		}
		o[key] = v
		return true
	}}
}

// DropJSON returns a reshape removing key from the object at path, if it
// is there.
func DropJSON(what string, path []string, key string) JSONReshape {
	return JSONReshape{what, func(m map[string]any) bool {
		o := JSONField(m, path...)
		if o == nil {
			return false
		}
		if _, ok := o[key]; !ok {
			return false
		}
		delete(o, key)
		return true
	}}
}

// CopyJSON returns a deep copy of a decoded JSON object.
func CopyJSON(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyJSONValue(v)
	}
	return out
}

func copyJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CopyJSON(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSONValue(e)
		}
		return out
	}
	return v
}

// JSONGroup is stored objects damaged alike (an object, or every head
// embedding a part), as decoded JSON, with the reshapes that may apply to
// them and how to store one back.
type JSONGroup struct {
	Objects  []map[string]any
	Reshapes []JSONReshape
	// Write stores Objects[j], edited, over the object it was read from.
	Write func(j int) error
}

// ApplyJSONReshape applies the i-th variant of groups, counted over the
// groups in turn and, in each, over the reshapes that apply to its first
// object (an inline part has no chunk count to make a string of), to
// every object of its group it applies to, writing each back; it returns
// what the variant does, or drivertest.ErrNoVariant if there are not that
// many.
func ApplyJSONReshape(groups []JSONGroup, i int) (string, error) {
	for _, g := range groups {
		if len(g.Objects) == 0 {
			continue
		}
		for _, r := range g.Reshapes {
			if !r.Edit(CopyJSON(g.Objects[0])) {
				continue
			}
			if i > 0 {
				i--
				continue
			}
			for j, m := range g.Objects {
				if r.Edit(m) {
					if err := g.Write(j); err != nil {
						return "", fmt.Errorf("%s: %w", r.What, err)
					}
				}
			}
			return r.What, nil
		}
	}
	return "", drivertest.ErrNoVariant
}

// PartDropReshapes are drivertest.MissingField variants of a part record
// at path: its inline frame, completeness, chunk count and frame digest
// removed (each where it is there).
func PartDropReshapes(path ...string) []JSONReshape {
	at := jsonPath(path)
	var out []JSONReshape
	for _, f := range []string{"data", "complete", "chunks", "frameDigest"} {
		out = append(out, DropJSON(at+f+" removed", path, f))
	}
	return out
}

// PartCountReshapes are the drivertest.HugeCount variants of a part
// record (cas.PartRecord, as both JSON backends store it) at path: its
// chunk count 2^30; that and its stored size 2^40; and both with its
// inline frame removed.
func PartCountReshapes(path ...string) []JSONReshape {
	at := jsonPath(path)
	claim := func(what string, dropData bool) JSONReshape {
		return JSONReshape{what, func(m map[string]any) bool {
			o := JSONField(m, path...)
			if o == nil {
				return false
			}
			o["chunks"], o["storedSize"] = HugeCount, HugeSize
			if dropData {
				delete(o, "data")
			}
			return true
		}}
	}
	return []JSONReshape{
		SetJSON(at+"chunks 2^30", HugeCount, true, path, "chunks"),
		claim(at+"chunks 2^30 and "+at+"storedSize 2^40", false),
		claim(at+"chunks 2^30 and "+at+"storedSize 2^40, "+at+"data removed", true),
	}
}

// PartSizeReshapes are the drivertest.HugeSize variants of a part record
// at path: its stored size 2^40, and its canonical size 2^40.
func PartSizeReshapes(path ...string) []JSONReshape {
	at := jsonPath(path)
	return []JSONReshape{
		SetJSON(at+"storedSize 2^40", HugeSize, true, path, "storedSize"),
		SetJSON(at+"size 2^40", HugeSize, true, path, "size"),
	}
}

// jsonPath returns path as the prefix of a field's name ("spec.").
func jsonPath(path []string) string {
	s := ""
	for _, p := range path {
		s += p + "."
	}
	return s
}
