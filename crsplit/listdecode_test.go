package crsplit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// A page of Releases decoded in one pass (decodeReleases) gives, item for
// item, what decoding each item alone gives, stored size included, with a
// damaged item (a record that is not base64, a field of the wrong type)
// damaged alone; a page that is not JSON is an error.
func TestDecodeReleasesPage(t *testing.T) {
	item := func(name string, v int) string {
		o := releaseObject{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "Release"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", ResourceVersion: fmt.Sprint(v), Labels: map[string]string{"name": name}},
			Spec: releaseSpec{Chart: "web-1.0.0", SummaryFields: driver.SummaryFields{Updated: "2026-12-06T00:00:00Z", Description: "a description, with \"quotes\""},
				Record: []byte(strings.Repeat("record ", v)), Embedded: []cas.EmbeddedFrame{{Digest: "d", Data: []byte("frame")}}},
		}
		o.Spec.Key, o.Spec.Name, o.Spec.Version = "sh.helm.release.v1."+name+".v1", name, v
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	items := []string{
		item("a", 1),
		strings.Replace(item("b", 2), `"record":"`, `"record":"!`, 1),    // not base64
		strings.Replace(item("c", 3), `"version":3`, `"version":"3"`, 1), // a string for a number
		item("d", 4),
	}
	page := `{"apiVersion":"helmstore.io/v1","kind":"ReleaseList","metadata":{"resourceVersion":"9","continue":"next"},` +
		`"items":[` + strings.Join(items, ",") + "]}"
	objs, cont, err := decodeReleases([]byte(page))
	if err != nil || cont != "next" || len(objs) != len(items) {
		t.Fatalf("decodeReleases = %d objects, continue %q, %v; want %d, %q", len(objs), cont, err, len(items), "next")
	}
	if objs[0].Err != nil || objs[1].Err == nil || objs[2].Err == nil || objs[3].Err != nil {
		t.Errorf("damaged items: %v, %v, %v, %v; want the second and third only", objs[0].Err, objs[1].Err, objs[2].Err, objs[3].Err)
	}
	for i, raw := range items {
		want := decode(cas.KindHead, json.RawMessage(raw))
		got := objs[i]
		if fmt.Sprint(got.Err) != fmt.Sprint(want.Err) {
			t.Errorf("item %d: Err %v; alone %v", i, got.Err, want.Err)
		}
		got.Err, want.Err = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("item %d: %+v\nalone: %+v", i, got, want)
		}
	}
	if _, _, err := decodeReleases([]byte(page[:len(page)/2])); err == nil {
		t.Error("a page cut in half decodes")
	}
}
