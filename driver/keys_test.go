package driver

import (
	"errors"
	"testing"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	good := map[string]struct {
		name    string
		version int
	}{
		"sh.helm.release.v1.web.v1":       {"web", 1},
		"sh.helm.release.v1.web.v2.v13":   {"web.v2", 13}, // names may contain ".v"
		"sh.helm.release.v1.a.b.c.v99999": {"a.b.c", 99999},
	}
	for k, want := range good {
		n, v, err := ParseKey(k)
		if err != nil || n != want.name || v != want.version {
			t.Errorf("ParseKey(%q) = %q, %d, %v; want %q, %d", k, n, v, err, want.name, want.version)
		}
		if MakeKey(n, v) != k {
			t.Errorf("MakeKey(%q, %d) != %q", n, v, k)
		}
	}
	for _, k := range []string{"", "web.v1", "sh.helm.release.v1.web", "sh.helm.release.v1..v1", "sh.helm.release.v1.web.v", "sh.helm.release.v1.web.v01", "sh.helm.release.v1.web.v-1", "sh.helm.release.v1.web.v1x", "sh.helm.release.v2.web.v1"} {
		if _, _, err := ParseKey(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ParseKey(%q): %v, want ErrInvalidKey", k, err)
		}
	}
}
