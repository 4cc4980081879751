package helm3

import (
	"context"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/registry"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Init is a drop-in for cfg.Init(getter, namespace, helmDriver, log) that
// understands every HELM_DRIVER name. Helm's own names (secret, secrets,
// configmap, configmaps, memory, sql and "") go straight to Helm. helmstore's
// names open the registered backend with its connection string from the
// environment (registry.ConnectionStringFromEnv) and point cfg.Releases at a view of it
// scoped to namespace.
//
// Stores opened by Init are shared per process: every Init with the same
// driver, connection string and getter uses one pool, so an operator that
// calls Init for each of 500 namespaces opens one pool, not 500. Such stores
// live as long as the process; use Open and Configure to control a store's
// lifetime yourself. A getter whose type is not comparable and holds no
// pointer to tell it by (a struct value with a map field, say) cannot be
// recognised again: each Init with one opens a store of its own. Init never
// waits for a store other than its own to open.
func Init(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace, helmDriver string, log action.DebugLog) error {
	if registry.IsHelmDriver(helmDriver) {
		return cfg.Init(getter, namespace, helmDriver, log)
	}
	if err := registry.CheckDriver(helmDriver); err != nil {
		return err
	}
	store, err := sharedStore(helmDriver, getter, log)
	if err != nil {
		return err
	}
	return Configure(cfg, getter, namespace, store, log)
}

// Configure sets cfg up as cfg.Init would (Kubernetes client, logger) but
// stores releases in a view of store scoped to namespace.
func Configure(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace string, store Store, log action.DebugLog) error {
	if log == nil {
		log = func(string, ...interface{}) {}
	}
	// Helm's Init builds the Kubernetes client lazily; the secret driver it
	// sets up is never contacted because Releases is replaced below.
	if err := cfg.Init(getter, namespace, "secret", log); err != nil {
		return err
	}
	cfg.Releases = storage.Init(store.Namespace(namespace))
	return nil
}

// shared holds the stores Init opened.
var shared = new(engine.Shared[Store])

// sharedStore returns the store Init shares for name, conn and getter,
// opening it on first use.
func sharedStore(name string, getter genericclioptions.RESTClientGetter, log action.DebugLog) (Store, error) {
	conn := registry.ConnectionStringFromEnv(name)
	return shared.Get(name, conn, getter, func() (Store, error) { return openShared(name, conn, getter, log) })
}

// openShared opens a store for Init.
func openShared(name, conn string, getter genericclioptions.RESTClientGetter, log action.DebugLog) (Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	opts := []Option{WithRESTClientGetter(getter)}
	if log != nil {
		opts = append(opts, WithLog(log))
	}
	return Open(ctx, name, conn, opts...)
}
