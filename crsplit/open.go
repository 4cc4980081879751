package crsplit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmstore/helmstore/driver"
)

// Name is the HELM_DRIVER name crsplit registers.
const Name = "crsplit"

func init() { driver.Register(Name, Open) }

// Open opens crsplit on a cluster (the driver.Opener registered as Name):
// the one cfg.RESTClientGetter points at, which is either Helm's getter (a
// genericclioptions.RESTClientGetter: kubeconfig, context and namespace
// flags) or a *rest.Config, or when it is nil, the default kubeconfig
// loading rules (KUBECONFIG, ~/.kube/config, in-cluster). A non-empty
// connection string names a kubeconfig context to use instead of the
// current one (not with a *rest.Config). It checks that the cluster serves
// the helmstore.io resources (ErrCRDsNotInstalled if not).
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	var rc *rest.Config
	switch g := cfg.RESTClientGetter.(type) {
	case *rest.Config:
		if cfg.ConnectionString != "" {
			return nil, fmt.Errorf("a connection string (a kubeconfig context) cannot select a context of a *rest.Config")
		}
		rc = g
	case genericclioptions.RESTClientGetter:
		var err error
		if rc, err = restConfig(g, cfg.ConnectionString); err != nil {
			return nil, err
		}
	case nil:
		var err error
		if rc, err = restConfig(nil, cfg.ConnectionString); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("Config.RESTClientGetter is a %T, neither a genericclioptions.RESTClientGetter nor a *rest.Config", g)
	}
	return openOn(ctx, rc, cfg)
}

// openOn opens the backend on rc.
// Opening is bounded by cfg.Timeout, as every operation of the store is: an
// API server that stops answering fails Open with driver.ErrUnavailable
// within it.
func openOn(ctx context.Context, rc *rest.Config, cfg *driver.Config) (driver.Backend, error) {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	c, err := newClient(rc)
	if err != nil {
		return nil, err
	}
	have, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, r := range allResources {
		if !have[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%w: missing %s", ErrCRDsNotInstalled, strings.Join(missing, ", "))
	}
	log := cfg.Log
	if log == nil {
		log = func(string, ...any) {}
	}
	return newBackend(c, log, cfg.Timeout), nil
}

// restConfig returns the client configuration of getter, or of the default
// kubeconfig loading rules (KUBECONFIG, ~/.kube/config, in-cluster) when
// getter is nil; context, when set, replaces the current context.
func restConfig(getter genericclioptions.RESTClientGetter, context string) (*rest.Config, error) {
	if getter == nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
		rc, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client configuration: %w", err)
		}
		return rc, nil
	}
	if context == "" {
		rc, err := getter.ToRESTConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes client configuration: %w", err)
		}
		return rc, nil
	}
	raw, err := getter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if _, ok := raw.Contexts[context]; !ok {
		return nil, fmt.Errorf("kubeconfig has no context %q (the crsplit connection string names a context)", context)
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client configuration for context %q: %w", context, err)
	}
	return rc, nil
}
