package driver_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/helmstore/helmstore/driver"
)

func TestListQuerySelect(t *testing.T) {
	head := func(ns, name string, v int, status string, labels ...string) *driver.Head {
		h := &driver.Head{Namespace: ns, Name: name, Version: v, Key: driver.MakeKey(name, v), Status: status, Labels: map[string]string{}}
		for i := 0; i+1 < len(labels); i += 2 {
			h.Labels[labels[i]] = labels[i+1]
		}
		return h
	}
	hs := []*driver.Head{
		head("a", "db", 1, "deployed", "team", "x"),
		head("a", "web", 1, "superseded", "team", "x"),
		head("a", "web", 2, "failed"),
		{Namespace: "a", Key: driver.MakeKey("web2", 1), Err: errors.New("damaged")},
		head("b", "web", 1, "deployed"),
		head("b", "web", 3, "deployed", "team", "x"),
	}
	driver.SortHeads(hs)
	keys := func(hs []*driver.Head) (out []string) {
		for _, h := range hs {
			out = append(out, fmt.Sprintf("%s/%s", h.Namespace, h.Key[len("sh.helm.release.v1."):]))
		}
		return out
	}
	for _, c := range []struct {
		q    driver.ListQuery
		want []string
	}{
		{driver.ListQuery{}, []string{"a/db.v1", "a/web.v1", "a/web.v2", "a/web2.v1", "b/web.v1", "b/web.v3"}},
		{driver.ListQuery{Latest: true}, []string{"a/db.v1", "a/web.v2", "a/web2.v1", "b/web.v3"}},
		// The latest revision is chosen before the status applies.
		{driver.ListQuery{Latest: true, Statuses: []string{"deployed"}}, []string{"a/db.v1", "a/web2.v1", "b/web.v3"}},
		{driver.ListQuery{Latest: true, Labels: map[string]string{"team": "x"}}, []string{"a/db.v1", "a/web2.v1", "b/web.v3"}},
		{driver.ListQuery{Namespace: "b"}, []string{"b/web.v1", "b/web.v3"}},
		{driver.ListQuery{NamePrefix: "web"}, []string{"a/web.v1", "a/web.v2", "a/web2.v1", "b/web.v1", "b/web.v3"}},
		{driver.ListQuery{NamePrefix: "web2"}, []string{"a/web2.v1"}},
		{driver.ListQuery{After: &driver.ListCursor{Namespace: "a", Name: "web", Version: 1}}, []string{"a/web.v2", "a/web2.v1", "b/web.v1", "b/web.v3"}},
		// With Latest, the cursor is a release: its later revisions are not listed again.
		{driver.ListQuery{Latest: true, After: &driver.ListCursor{Namespace: "a", Name: "web", Version: 1}}, []string{"a/web2.v1", "b/web.v3"}},
		{driver.ListQuery{Limit: 2, Statuses: []string{"deployed", "failed"}}, []string{"a/db.v1", "a/web.v2"}},
	} {
		if got := keys(c.q.Select(hs)); !slices.Equal(got, c.want) {
			t.Errorf("Select(%+v) = %v, want %v", c.q, got, c.want)
		}
	}
}
