package helm4

import (
	"context"
	"log/slog"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/storage"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/registry"
)

// Init is a drop-in for cfg.Init(getter, namespace, helmDriver) that
// understands every HELM_DRIVER name. Helm's own names (secret, secrets,
// configmap, configmaps, memory, sql and "") go straight to Helm. helmstore's
// names open the registered backend with its connection string from the
// environment (registry.ConnectionStringFromEnv) and point cfg.Releases at a
// view of it scoped to namespace. The store logs to cfg's logger
// (action.NewConfiguration's handler) as Helm's own drivers do.
//
// Stores opened by Init are shared per process: every Init with the same
// driver, connection string and getter uses one pool, so an operator that
// calls Init for each of 500 namespaces opens one pool, not 500; the first
// Init's logger is the store's. Such stores live as long as the process;
// use Open and Configure to control a store's lifetime yourself. A getter
// whose type is not comparable and holds no pointer to tell it by (a struct
// value with a map field, say) cannot be recognised again: each Init with
// one opens a store of its own. Init never waits for a store other than its
// own to open.
func Init(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace, helmDriver string) error {
	if registry.IsHelmDriver(helmDriver) {
		return cfg.Init(getter, namespace, helmDriver)
	}
	if err := registry.CheckDriver(helmDriver); err != nil {
		return err
	}
	conn := registry.ConnectionStringFromEnv(helmDriver)
	h := cfg.Logger().Handler()
	store, err := shared.Get(helmDriver, conn, getter, func() (Store, error) {
		return openShared(helmDriver, conn, getter, h)
	})
	if err != nil {
		return err
	}
	return Configure(cfg, getter, namespace, store)
}

// Configure sets cfg up as cfg.Init would (Kubernetes client, logger) but
// stores releases in a view of store scoped to namespace.
func Configure(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace string, store Store) error {
	// Helm's Init builds the Kubernetes client lazily; the secret driver it
	// sets up is never contacted because Releases is replaced below.
	if err := cfg.Init(getter, namespace, "secret"); err != nil {
		return err
	}
	cfg.Releases = storage.Init(store.Namespace(namespace))
	return nil
}

// shared holds the stores Init opened.
var shared = new(engine.Shared[Store])

// openShared opens a store for Init.
func openShared(name, conn string, getter genericclioptions.RESTClientGetter, h slog.Handler) (Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	return Open(ctx, name, conn, WithRESTClientGetter(getter), WithLogger(h))
}
