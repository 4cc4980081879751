package codec

// CloneMap deep-copies a tree decoded from JSON (maps, slices, strings,
// numbers, booleans and nil), keeping nil maps nil.
func CloneMap(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return CloneMap(t)
	case []interface{}:
		if t == nil {
			return t
		}
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	default:
		// string, float64, bool, nil: immutable.
		return v
	}
}
