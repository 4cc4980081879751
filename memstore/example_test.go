package memstore_test

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/memstore"
)

// Two stores opened on the same space name share their releases, as two
// processes share a database.
func Example() {
	ctx := context.Background()
	a, err := helm3.Open(ctx, "memstore", "example")
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := helm3.Open(ctx, "memstore", "example")
	if err != nil {
		panic(err)
	}
	defer b.Close()

	rls := &release.Release{Name: "web", Namespace: "default", Version: 1,
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}},
		Config: map[string]interface{}{"replicas": 2},
		Info:   &release.Info{Status: release.StatusDeployed}}
	if err := a.Create("sh.helm.release.v1.web.v1", rls); err != nil {
		panic(err)
	}
	got, err := b.Query(map[string]string{"name": "web", "owner": "helm"})
	if err != nil {
		panic(err)
	}
	fmt.Println(got[0].Name, got[0].Version, got[0].Info.Status, got[0].Chart.Metadata.Version, got[0].Config["replicas"])
	st, _ := b.Stats(ctx)
	fmt.Println(st.Releases, "release,", st.TotalParts(), "parts")
	// Output:
	// web 1 deployed 1.0.0 2
	// 1 release, 2 parts
}
