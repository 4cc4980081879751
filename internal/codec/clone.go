package codec

// CloneMap deep-copies a tree decoded from JSON (maps, slices, strings,
// numbers, booleans and nil), keeping nil maps nil.
func CloneMap(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = CloneValue(v)
	}
	return out
}

// CloneValue deep-copies a value of a JSON-decoded tree.
func CloneValue(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		return CloneMap(t)
	case []interface{}:
		if t == nil {
			return t
		}
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = CloneValue(e)
		}
		return out
	default:
		// string, float64, bool, nil: immutable.
		return v
	}
}
