package engine_test

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/memstore"
)

// TestListSharesIdenticalParts: the releases one List returns share the
// decoded values tree and manifest of a part they have in common (one copy
// per call, as the chart), so that memory grows with what is distinct; a
// caller changing one call's values never changes another call's, or what
// the cache holds.
func TestListSharesIdenticalParts(t *testing.T) {
	for _, cache := range []int64{0, 64 << 20} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			v := open(t, &driver.Config{Name: memstore.Name, CacheBytes: cache})
			for i := 1; i <= 4; i++ {
				r := rel(fmt.Sprintf("app%d", i), 1, "same")
				r.Manifest = "kind: ConfigMap\nmetadata:\n  name: same\n"
				if err := v.Create(driver.MakeKey(r.Name, 1), r); err != nil {
					t.Fatal(err)
				}
			}
			list := func() []*release.Release {
				rs, err := v.List(func(*release.Release) bool { return true })
				if err != nil || len(rs) != 4 {
					t.Fatalf("List: %d releases, %v", len(rs), err)
				}
				return rs
			}
			rs := list()
			for _, r := range rs[1:] {
				if reflect.ValueOf(r.Config).UnsafePointer() != reflect.ValueOf(rs[0].Config).UnsafePointer() {
					t.Fatal("releases of one List with the same values hold copies of them")
				}
				if unsafe.StringData(r.Manifest) != unsafe.StringData(rs[0].Manifest) {
					t.Fatal("releases of one List with the same manifest hold copies of it")
				}
			}
			rs[0].Config["greeting"] = "changed by the caller"
			for _, r := range list() {
				if r.Config["greeting"] != "same" {
					t.Fatalf("a change to what one List returned shows in the next: %v", r.Config)
				}
			}
		})
	}
}
