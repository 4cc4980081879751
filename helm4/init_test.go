package helm4_test

import (
	"errors"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/cli"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/memstore"
)

// Helm's own names go to Helm 4; helmstore's open one shared store per
// process, a view per namespace; an unknown name is ErrUnknownDriver.
func TestInit(t *testing.T) {
	getter := cli.New().RESTClientGetter()
	mem := action.NewConfiguration()
	if err := helm4.Init(mem, getter, "a", "memory"); err != nil {
		t.Fatal(err)
	}
	if _, ok := mem.Releases.Driver.(*helmdriver.Memory); !ok {
		t.Fatalf("HELM_DRIVER=memory gave %T, want Helm 4's own Memory driver", mem.Releases.Driver)
	}
	a, b := action.NewConfiguration(), action.NewConfiguration()
	for ns, cfg := range map[string]*action.Configuration{"a": a, "b": b} {
		if err := helm4.Init(cfg, getter, ns, memstore.Name); err != nil {
			t.Fatal(err)
		}
	}
	ha, hb := engine.Of(a.Releases.Driver), engine.Of(b.Releases.Driver)
	if ha == nil || hb == nil || ha.Backend() != hb.Backend() {
		t.Fatalf("two Inits of one driver opened two stores (%v, %v); want one shared", ha, hb)
	}
	if ha.Scope() != "a" || hb.Scope() != "b" {
		t.Fatalf("views scoped to %q and %q, want a and b", ha.Scope(), hb.Scope())
	}
	if err := helm4.Init(action.NewConfiguration(), getter, "a", "postgress"); !errors.Is(err, helm4.ErrUnknownDriver) {
		t.Fatalf("unknown driver: %v", err)
	}
}
