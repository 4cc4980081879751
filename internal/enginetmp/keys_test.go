package backend

import (
	"errors"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

func TestParseKey(t *testing.T) {
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
		if _, _, err := ParseKey(k); !errors.Is(err, helm3.ErrInvalidKey) {
			t.Errorf("ParseKey(%q): %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestBuildQuery(t *testing.T) {
	q, ok, err := buildQuery("ns", map[string]string{"name": "web", "owner": "helm", "status": "deployed", "version": "3", "team": "a"})
	if err != nil || !ok || q.Name != "web" || q.Status != "deployed" || *q.Version != 3 || q.Labels["team"] != "a" || q.Namespace != "ns" || len(q.Labels) != 1 {
		t.Fatalf("%+v %v %v", q, ok, err)
	}
	for _, impossible := range []map[string]string{{"owner": "me"}, {"version": "03"}, {"version": "x"}, {"createdAt": "0"}, {"modifiedAt": "1.5"}} {
		if _, ok, err := buildQuery("", impossible); ok || err != nil {
			t.Errorf("%v: ok=%v err=%v; want no match, no error", impossible, ok, err)
		}
	}
	if _, _, err := buildQuery("", map[string]string{"team": "has space"}); err == nil {
		t.Error("an invalid label value was accepted")
	}
}

func TestCustomLabels(t *testing.T) {
	got, err := customLabels(map[string]string{"status": "x", "name": "y", "app.kubernetes.io/part-of": "shop", "tier": ""})
	if err != nil || len(got) != 2 || got["app.kubernetes.io/part-of"] != "shop" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []map[string]string{{"": "v"}, {"a/b/c": "v"}, {"k": "-starts-with-dash"}, {"k": string(make([]byte, 64))}} {
		if _, err := customLabels(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
