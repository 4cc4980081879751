package driver

import (
	"context"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Init is a drop-in for cfg.Init(getter, namespace, helmDriver, log) that
// understands every HELM_DRIVER name. Helm's own names (secret, secrets,
// configmap, configmaps, memory, sql and "") go straight to Helm. helmstore's
// names open the registered backend with its connection string from the
// environment (ConnectionStringFromEnv) and point cfg.Releases at a view of it
// scoped to namespace.
//
// Stores opened by Init are shared per process: every Init with the same
// driver, connection string and getter uses one pool, so an operator that
// calls Init for each of 500 namespaces opens one pool, not 500. Such stores
// live as long as the process; use Open and Configure to control a store's
// lifetime yourself.
func Init(cfg *action.Configuration, getter genericclioptions.RESTClientGetter, namespace, helmDriver string, log action.DebugLog) error {
	if isHelmDriver(helmDriver) {
		return cfg.Init(getter, namespace, helmDriver, log)
	}
	regMu.RLock()
	_, ok := openers[helmDriver]
	regMu.RUnlock()
	if !ok {
		return unknownDriver(helmDriver, true)
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

type sharedKey struct {
	name, conn string
	getter     genericclioptions.RESTClientGetter
}

var (
	sharedMu sync.Mutex
	shared   = map[sharedKey]Store{}
)

func sharedStore(name string, getter genericclioptions.RESTClientGetter, log action.DebugLog) (Store, error) {
	conn := ConnectionStringFromEnv(name)
	key := sharedKey{name: name, conn: conn, getter: getter}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := shared[key]; ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := []Option{WithRESTClientGetter(getter)}
	if log != nil {
		opts = append(opts, WithLog(log))
	}
	s, err := Open(ctx, name, conn, opts...)
	if err != nil {
		return nil, err
	}
	shared[key] = s
	return s, nil
}
