package engine

import "strings"

// Kubernetes' rules for names and labels, which the engine applies to what
// every backend stores (names_test.go checks them against apimachinery's,
// which the engine does not link: it would bring Kubernetes into every
// backend). Each returns why s breaks the rule, or "" if it does not.

const (
	maxLabel     = 63  // a DNS-1123 label, a label value, a label name's name part
	maxSubdomain = 253 // a DNS-1123 subdomain
)

// alnum reports whether c is an ASCII letter or digit; lower, whether a
// letter must be lower case.
func alnum(c byte, lower bool) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || !lower && c >= 'A' && c <= 'Z'
}

// shaped reports whether s is non-empty, begins and ends with an
// alphanumeric character and holds only those and the bytes of inner.
func shaped(s string, lower bool, inner string) bool {
	if s == "" || !alnum(s[0], lower) || !alnum(s[len(s)-1], lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !alnum(s[i], lower) && strings.IndexByte(inner, s[i]) < 0 {
			return false
		}
	}
	return true
}

// dns1123Label: lower case alphanumerics and '-', alphanumeric at both
// ends, at most 63 bytes (a namespace).
func dns1123Label(s string) string {
	switch {
	case len(s) > maxLabel:
		return "must be no more than 63 characters"
	case !shaped(s, true, "-"):
		return "must be lower case alphanumeric characters or '-', starting and ending with an alphanumeric character"
	}
	return ""
}

// dns1123Subdomain: DNS-1123 labels joined by '.', at most 253 bytes (an
// object name, a label name's prefix).
func dns1123Subdomain(s string) string {
	if len(s) > maxSubdomain {
		return "must be no more than 253 characters"
	}
	for _, l := range strings.Split(s, ".") {
		if !shaped(l, true, "-") {
			return "must be lower case alphanumeric characters, '-' or '.', each part between dots starting and ending with an alphanumeric character"
		}
	}
	return ""
}

// labelValue: empty, or alphanumerics, '-', '_' and '.', alphanumeric at
// both ends, at most 63 bytes.
func labelValue(s string) string {
	switch {
	case len(s) > maxLabel:
		return "must be no more than 63 characters"
	case s != "" && !shaped(s, false, "-_."):
		return "must be empty or alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"
	}
	return ""
}

// qualifiedName: a label's key: a name part as a label value (but not
// empty), optionally after a DNS-1123 subdomain prefix and '/'.
func qualifiedName(s string) string {
	name := s
	if prefix, rest, ok := strings.Cut(s, "/"); ok {
		if prefix == "" {
			return "prefix part must not be empty"
		}
		if why := dns1123Subdomain(prefix); why != "" {
			return "prefix part " + why
		}
		name = rest
	}
	switch {
	case name == "":
		return "name part must not be empty"
	case len(name) > maxLabel:
		return "name part must be no more than 63 characters"
	case !shaped(name, false, "-_."):
		return "name part must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character (with an optional DNS subdomain prefix and '/')"
	}
	return ""
}
