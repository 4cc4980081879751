package helm4codec

// valueKind is the kind of value a member decoded directly may hold.
type valueKind int

const (
	timeValue   valueKind = iota // null, or a string without an escape
	stringValue                  // null, or a string
	intValue                     // null, or an integer of at most 15 digits
)

// member is a member an object may have to be decoded directly.
type member struct {
	name string
	kind valueKind
}

// maxMembers bounds the members of an object plain reads.
const maxMembers = 8

// plain reports whether data, a valid JSON value (as an UnmarshalJSON
// receives it), is an object whose every member is one of members (at most
// maxMembers), named exactly so (no escape in its name), at most once, with
// a value of its kind; vals holds each member's value by its index in
// members (nil where it is absent).
func plain(data []byte, members []member) (vals [maxMembers][]byte, ok bool) {
	i := space(data, 0)
	if i >= len(data) || data[i] != '{' {
		return vals, false
	}
	var seen uint64 // by the member's index in members
	i = space(data, i+1)
	if i < len(data) && data[i] == '}' {
		return vals, space(data, i+1) == len(data)
	}
	for i < len(data) {
		// A name: a string without escapes.
		if data[i] != '"' {
			return vals, false
		}
		end, escaped := stringEnd(data, i)
		if escaped || end < 0 {
			return vals, false
		}
		m := find(members, data[i+1:end-1])
		if m < 0 {
			return vals, false
		}
		kind := members[m].kind
		bit := uint64(1) << m
		if seen&bit != 0 {
			return vals, false
		}
		seen |= bit
		i = space(data, end)
		if i >= len(data) || data[i] != ':' {
			return vals, false
		}
		i = space(data, i+1)
		end, ok := valueOf(data, i, kind)
		if !ok {
			return vals, false
		}
		vals[m] = data[i:end]
		i = space(data, end)
		if i >= len(data) {
			return vals, false
		}
		switch data[i] {
		case '}':
			return vals, space(data, i+1) == len(data)
		case ',':
			i = space(data, i+1)
		default:
			return vals, false
		}
	}
	return vals, false
}

// find returns the index in members of the member named name, or -1.
func find(members []member, name []byte) int {
	for i, m := range members {
		if m.name == string(name) {
			return i
		}
	}
	return -1
}

// valueOf returns the end of the value at data[i] if it is one of kind.
func valueOf(data []byte, i int, kind valueKind) (end int, ok bool) {
	if i >= len(data) {
		return 0, false
	}
	if data[i] == 'n' {
		if len(data)-i >= 4 && string(data[i:i+4]) == "null" {
			return i + 4, true
		}
		return 0, false
	}
	switch kind {
	case timeValue, stringValue:
		if data[i] != '"' {
			return 0, false
		}
		end, escaped := stringEnd(data, i)
		return end, end >= 0 && !(escaped && kind == timeValue)
	case intValue:
		j := i
		if j < len(data) && data[j] == '-' {
			j++
		}
		digits := j
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		n := j - digits
		if n == 0 || n > 15 || (n > 1 && data[digits] == '0') {
			return 0, false
		}
		if j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') {
			return 0, false
		}
		return j, true
	}
	return 0, false
}

// stringEnd returns the index after the string starting at data[i] (a
// quote) and whether it holds an escape; -1 if it does not end.
func stringEnd(data []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// space returns the index of the first byte at or after i that is not JSON
// white space.
func space(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
