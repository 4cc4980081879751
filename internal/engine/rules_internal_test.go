package engine

import "testing"

func TestBuildQuery(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
